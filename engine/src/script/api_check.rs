//! The static check of a script against the API it can call (`grade rubric validate`, W108):
//! a property or method the session or an entry does not have (`e.positon`), or a function no
//! one registered, is found in the script's syntax tree before any session runs it. The dry
//! run only finds what its made-up session reaches.
//!
//! What is known comes from the engine the scripts run in, as [`super::api`], the shell
//! functions and the plugins registered it: nothing here lists the API a second time. The
//! only hand-written facts are what three calls return ([`RETURNS`]), checked against the
//! registered API by a test.
//!
//! A receiver's type is known only where it surely is: `session`, a variable every binding
//! of which gives one type (`let e = session.first("x")`, `for e in session.entries`, a
//! parameter every call passes an entry to), and chains on those. Anything else is not
//! checked, so the check reports no false alarm on code it cannot follow.

use std::any::TypeId;
use std::collections::{BTreeSet, HashMap};

use rhai::{ASTFlags, ASTNode, Engine, Expr, FnCallExpr, Position, Stmt, AST};

use super::view::{EntryView, SessionView};

/// What a static check found: a place in the script and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiMisuse {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

/// What the script's engine can call: per receiver type, its properties (`get$NAME`) and
/// methods (functions whose first parameter is of that type), the methods any value has, and
/// the functions callable without a namespace.
pub(super) struct KnownApi {
    session: Members,
    entry: Members,
    any: BTreeSet<String>,
    functions: BTreeSet<String>,
}

#[derive(Default)]
struct Members {
    properties: BTreeSet<String>,
    methods: BTreeSet<String>,
}

/// Rhai's own functions, handled by the language rather than registered: callable on any
/// value (`x.type_of()`) or on their own.
const KEYWORDS: [&str; 11] = [
    "print",
    "debug",
    "type_of",
    "eval",
    "Fn",
    "call",
    "curry",
    "is_shared",
    "is_def_var",
    "is_def_fn",
    "this",
];

/// What the calls that give entries return, for the types of the variables they bind.
const RETURNS: [(Ty, &str, Ty); 3] = [
    (Ty::Session, "entries", Ty::Entries),
    (Ty::Session, "first", Ty::Entry),
    (Ty::Session, "matching", Ty::Entries),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Session,
    Entry,
    Entries,
    /// Not known yet, while inference runs: a variable whose bindings are not all typed.
    Pending,
    /// Of no type the check follows, or of several.
    Unknown,
}

impl Ty {
    fn noun(self) -> &'static str {
        match self {
            Ty::Session => "the session",
            _ => "an entry",
        }
    }
}

impl KnownApi {
    pub(super) fn of(engine: &Engine) -> KnownApi {
        let session = TypeId::of::<SessionView>();
        let entry = TypeId::of::<EntryView>();
        let dynamic = TypeId::of::<rhai::Dynamic>();
        let mut known = KnownApi {
            session: Members::default(),
            entry: Members::default(),
            any: KEYWORDS.iter().map(|k| (*k).to_owned()).collect(),
            functions: KEYWORDS.iter().map(|k| (*k).to_owned()).collect(),
        };
        let functions = engine.collect_fn_metadata(
            None,
            |info| {
                Some((
                    info.metadata.name.to_string(),
                    info.metadata.param_types.first().copied(),
                    info.metadata.num_params,
                    info.namespace.is_empty(),
                ))
            },
            true,
        );
        for (name, first, params, global) in functions {
            if !global {
                continue;
            }
            let receiver = first.map(|t| {
                if t == session {
                    Ty::Session
                } else if t == entry {
                    Ty::Entry
                } else {
                    Ty::Unknown
                }
            });
            if let Some(property) = name.strip_prefix("get$") {
                match receiver {
                    Some(Ty::Session) => known.session.properties.insert(property.to_owned()),
                    Some(Ty::Entry) => known.entry.properties.insert(property.to_owned()),
                    _ => false,
                };
                continue;
            }
            // Setters, indexers and the rest of Rhai's plumbing are no one's API.
            if name.contains('$') {
                continue;
            }
            match receiver {
                Some(Ty::Session) => known.session.methods.insert(name.clone()),
                Some(Ty::Entry) => known.entry.methods.insert(name.clone()),
                // A function of any value, or one whose parameters were not recorded.
                Some(_) if first == Some(dynamic) => known.any.insert(name.clone()),
                None if params > 0 => known.any.insert(name.clone()),
                _ => false,
            };
            known.functions.insert(name);
        }
        known
    }

    fn members(&self, ty: Ty) -> Option<&Members> {
        match ty {
            Ty::Session => Some(&self.session),
            Ty::Entry => Some(&self.entry),
            Ty::Entries | Ty::Pending | Ty::Unknown => None,
        }
    }
}

/// Where a variable's value comes from: one binding of its name.
enum Binding {
    /// `let x = EXPR`, `x = EXPR`.
    Value(Expr),
    /// `for x in EXPR`.
    Item(Expr),
    /// Parameter `index` of script function `function`.
    Parameter(String, usize),
    /// A value of no type the check follows (`x += 1`, a closure's parameter).
    Other,
}

/// Checks `ast` against `api`: every misuse found, in the order of the script.
pub(super) fn check(ast: &AST, api: &KnownApi) -> Vec<ApiMisuse> {
    // The walk lends each node only for its call: what inference needs is copied out.
    let mut bindings: Vec<(String, Binding)> = vec![("session".to_owned(), Binding::Other)];
    let mut calls: Vec<FnCallExpr> = Vec::new();
    let mut method_names: BTreeSet<String> = BTreeSet::new();
    let functions: Vec<(String, Vec<String>)> = ast
        .iter_functions()
        .map(|f| {
            (
                f.name.to_owned(),
                f.params.iter().map(|p| (*p).to_owned()).collect(),
            )
        })
        .collect();
    for (name, params) in &functions {
        for (i, p) in params.iter().enumerate() {
            bindings.push((p.clone(), Binding::Parameter(name.clone(), i)));
        }
    }
    ast.walk(&mut |path: &[ASTNode]| {
        match path.last() {
            Some(ASTNode::Stmt(Stmt::Var(x, ..))) => {
                bindings.push((x.0.name.to_string(), Binding::Value(x.1.clone())));
            }
            Some(ASTNode::Stmt(Stmt::For(x, ..))) => {
                bindings.push((x.0.name.to_string(), Binding::Item(x.2.expr.clone())));
                if let Some(counter) = &x.1 {
                    bindings.push((counter.name.to_string(), Binding::Other));
                }
            }
            Some(ASTNode::Stmt(Stmt::Assignment(x))) => {
                if let Expr::Variable(v, ..) = &x.1.lhs {
                    let binding = if x.0.is_op_assignment() {
                        Binding::Other
                    } else {
                        Binding::Value(x.1.rhs.clone())
                    };
                    bindings.push((v.1.to_string(), binding));
                }
            }
            Some(ASTNode::Stmt(Stmt::FnCall(call, ..)))
            | Some(ASTNode::Expr(Expr::FnCall(call, ..))) => calls.push((**call).clone()),
            Some(ASTNode::Expr(Expr::MethodCall(call, ..))) => {
                method_names.insert(call.name.to_string());
            }
            _ => {}
        }
        true
    });
    let types = infer(&bindings, &calls, &functions, &method_names);
    let checker = Checker {
        api,
        types: &types,
        script_functions: &functions,
        variables: bindings.iter().map(|(name, _)| name.as_str()).collect(),
    };
    let mut found = Vec::new();
    ast.walk(&mut |path: &[ASTNode]| {
        let Some(ASTNode::Expr(node)) = path.last() else {
            return true;
        };
        let parent = path.len().checked_sub(2).and_then(|i| path.get(i));
        match node {
            Expr::Dot(..) | Expr::Index(..) if !continues_a_chain(node, parent) => {
                checker.root(node, &mut found);
            }
            Expr::FnCall(call, pos) => checker.function(call, *pos, &mut found),
            _ => {}
        }
        true
    });
    // Statements that are calls are walked as statements.
    ast.walk(&mut |path: &[ASTNode]| {
        if let Some(ASTNode::Stmt(Stmt::FnCall(call, pos))) = path.last() {
            checker.function(call, *pos, &mut found);
        }
        true
    });
    found.sort_by_key(|m| (m.line, m.column));
    found.dedup();
    found
}

/// Whether `node` is the rest of a chain (`.b` of `a.b`, `.c` of `a[i].c`) rather than an
/// expression of its own: the chain is checked from its start.
fn continues_a_chain(node: &Expr, parent: Option<&ASTNode<'_>>) -> bool {
    match parent {
        Some(ASTNode::Expr(Expr::Dot(x, ..))) => std::ptr::eq(&x.rhs, node),
        Some(ASTNode::Expr(Expr::Index(x, flags, ..))) => {
            !flags.contains(ASTFlags::BREAK) && std::ptr::eq(&x.rhs, node)
        }
        _ => false,
    }
}

/// The type of each variable every binding of which gives the same one; `session` is the
/// session unless something else is bound to that name.
fn infer(
    bindings: &[(String, Binding)],
    calls: &[FnCallExpr],
    functions: &[(String, Vec<String>)],
    method_names: &BTreeSet<String>,
) -> HashMap<String, Ty> {
    // From nothing known, each round types more names through the ones it typed, until
    // none changes: a name is `Pending` until its bindings give a type, and `Unknown` once
    // they give two (types only rise, so the rounds end).
    let mut types: HashMap<String, Ty> = HashMap::new();
    for _ in 0..16 {
        let mut next: HashMap<String, Ty> = HashMap::new();
        for (name, binding) in bindings {
            let ty = match binding {
                Binding::Value(expr) => type_of(expr, &types),
                Binding::Item(expr) => item_of(type_of(expr, &types)),
                Binding::Parameter(function, index) => {
                    parameter_type(function, *index, calls, functions, method_names, &types)
                }
                Binding::Other if name == "session" => Ty::Session,
                Binding::Other => Ty::Unknown,
            };
            let slot = next.entry(name.clone()).or_insert(Ty::Pending);
            *slot = join(*slot, ty);
        }
        if next == types {
            break;
        }
        types = next;
    }
    types.retain(|_, ty| !matches!(ty, Ty::Pending | Ty::Unknown));
    types
}

/// What a name bound to values of types `a` and `b` holds.
fn join(a: Ty, b: Ty) -> Ty {
    match (a, b) {
        (Ty::Pending, t) | (t, Ty::Pending) => t,
        (a, b) if a == b => a,
        _ => Ty::Unknown,
    }
}

/// The type every call of script function `function` passes as its parameter `index`; a
/// function also called as a method (`x.f()`) is not followed.
fn parameter_type(
    function: &str,
    index: usize,
    calls: &[FnCallExpr],
    functions: &[(String, Vec<String>)],
    method_names: &BTreeSet<String>,
    types: &HashMap<String, Ty>,
) -> Ty {
    if method_names.contains(function) {
        return Ty::Unknown;
    }
    let arity = functions
        .iter()
        .filter(|(name, _)| name == function)
        .map(|(_, params)| params.len())
        .collect::<Vec<_>>();
    // Overloads by arity would need the call matched to its definition.
    let [arity] = arity[..] else {
        return Ty::Unknown;
    };
    let mut seen = Ty::Pending;
    let mut called = false;
    for call in calls
        .iter()
        .filter(|c| c.name.as_str() == function && c.namespace.is_empty())
    {
        if call.args.len() != arity {
            continue;
        }
        called = true;
        let ty = call
            .args
            .get(index)
            .map_or(Ty::Unknown, |a| type_of(a, types));
        seen = join(seen, ty);
    }
    // A function never called by name (a closure's, one only passed as `Fn("f")`) takes
    // values the check does not see.
    if called {
        seen
    } else {
        Ty::Unknown
    }
}

/// The type of an expression, where the check can know it.
fn type_of(expr: &Expr, types: &HashMap<String, Ty>) -> Ty {
    match expr {
        Expr::Variable(v, ..) => types.get(v.1.as_str()).copied().unwrap_or(Ty::Pending),
        Expr::Dot(x, ..) => chain(type_of(&x.lhs, types), &x.rhs, &mut |_| {}),
        Expr::Index(x, flags, ..) => {
            after_index(item_of(type_of(&x.lhs, types)), &x.rhs, *flags, &mut |_| {})
        }
        _ => Ty::Unknown,
    }
}

fn item_of(ty: Ty) -> Ty {
    match ty {
        Ty::Entries => Ty::Entry,
        Ty::Pending => Ty::Pending,
        _ => Ty::Unknown,
    }
}

/// One step of a chain on a value of type `on`: a property or a method.
enum Step<'a> {
    Property(Ty, &'a str, Position),
    Method(Ty, &'a FnCallExpr, Position),
}

/// The type at the end of `rest`, a chain applied to a value of type `on`, calling `step` for
/// each property and method read on the way.
fn chain<'a>(on: Ty, rest: &'a Expr, step: &mut dyn FnMut(Step<'a>)) -> Ty {
    match rest {
        Expr::Property(x, pos) => {
            let name = x.2.as_str();
            step(Step::Property(on, name, *pos));
            returned(on, name)
        }
        Expr::MethodCall(call, pos) => {
            step(Step::Method(on, call, *pos));
            returned(on, call.name.as_str())
        }
        Expr::Dot(x, ..) => {
            let first = chain(on, &x.lhs, step);
            chain(first, &x.rhs, step)
        }
        Expr::Index(x, flags, ..) => {
            let indexed = chain(on, &x.lhs, step);
            after_index(item_of(indexed), &x.rhs, *flags, step)
        }
        _ => Ty::Unknown,
    }
}

/// The rest of a chain after an index (`[i]` of `a[i].b`), on the item of type `item`.
fn after_index<'a>(
    item: Ty,
    rest: &'a Expr,
    flags: ASTFlags,
    step: &mut dyn FnMut(Step<'a>),
) -> Ty {
    // The chain ends at the index: `rest` is the index itself, an expression of its own.
    if flags.contains(ASTFlags::BREAK) {
        return item;
    }
    match rest {
        Expr::Dot(x, ..) => chain(item, &x.rhs, step),
        Expr::Index(x, flags, ..) => after_index(item_of(item), &x.rhs, *flags, step),
        _ => Ty::Unknown,
    }
}

fn returned(on: Ty, name: &str) -> Ty {
    if on == Ty::Pending {
        return Ty::Pending;
    }
    RETURNS
        .iter()
        .find(|(ty, call, _)| *ty == on && *call == name)
        .map_or(Ty::Unknown, |(_, _, returns)| *returns)
}

struct Checker<'a> {
    api: &'a KnownApi,
    types: &'a HashMap<String, Ty>,
    script_functions: &'a [(String, Vec<String>)],
    variables: BTreeSet<&'a str>,
}

impl Checker<'_> {
    /// Checks the chain that starts at `node` (`a.b.c`, `a[i].b`).
    fn root(&self, node: &Expr, found: &mut Vec<ApiMisuse>) {
        let mut step = |s: Step<'_>| self.step(s, found);
        match node {
            Expr::Dot(x, ..) => {
                chain(type_of(&x.lhs, self.types), &x.rhs, &mut step);
            }
            Expr::Index(x, flags, ..) => {
                after_index(
                    item_of(type_of(&x.lhs, self.types)),
                    &x.rhs,
                    *flags,
                    &mut step,
                );
            }
            _ => {}
        }
    }

    fn step(&self, step: Step<'_>, found: &mut Vec<ApiMisuse>) {
        let (on, name, pos, method) = match step {
            Step::Property(on, name, pos) => (on, name, pos, false),
            Step::Method(on, call, pos) => (on, call.name.as_str(), pos, true),
        };
        let Some(members) = self.api.members(on) else {
            return;
        };
        let noun = on.noun();
        let message = if method {
            let script = self
                .script_functions
                .iter()
                .any(|(f, params)| f == name && !params.is_empty());
            if members.methods.contains(name) || self.api.any.contains(name) || script {
                return;
            }
            if members.properties.contains(name) {
                format!("{noun} has no method `{name}`: `{name}` is a property, read without `()`")
            } else {
                format!(
                    "{noun} has no method `{name}`{}",
                    hint(name, &members.methods, "methods")
                )
            }
        } else {
            if members.properties.contains(name) {
                return;
            }
            if members.methods.contains(name) {
                format!("{noun} has no property `{name}`: `{name}` is a method, call it with `()`")
            } else {
                format!(
                    "{noun} has no property `{name}`{}",
                    hint(name, &members.properties, "properties")
                )
            }
        };
        found.push(misuse(pos, message));
    }

    /// A call of a function by name alone: registered, the script's own, or a variable
    /// holding a function pointer.
    fn function(&self, call: &FnCallExpr, pos: Position, found: &mut Vec<ApiMisuse>) {
        let name = call.name.as_str();
        let is_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if !call.namespace.is_empty()
            || call.is_operator_call()
            || !is_name
            // Closures are compiled to functions named `anon$…`.
            || name.contains('$')
            || self.api.functions.contains(name)
            || self.script_functions.iter().any(|(f, _)| f == name)
            || self.variables.contains(name)
        {
            return;
        }
        found.push(misuse(
            pos,
            format!(
                "unknown function `{name}`{}",
                hint(name, &self.api.functions, "")
            ),
        ));
    }
}

fn misuse(pos: Position, message: String) -> ApiMisuse {
    ApiMisuse {
        line: pos.line(),
        column: pos.position(),
        message,
    }
}

/// ` (did you mean `position`?)`, or the names there are when none is close.
fn hint(name: &str, known: &BTreeSet<String>, kind: &str) -> String {
    let limit = (name.chars().count() / 3).clamp(1, 3);
    let mut close: Vec<(usize, &str)> = known
        .iter()
        .filter_map(|k| {
            let d = crate::text::distance(name, k);
            // `lenght` for `len`: one name starts the other.
            let prefix = k.len().min(name.len()) >= 3
                && (k.starts_with(name) || name.starts_with(k.as_str()));
            (d <= limit || prefix).then_some((if prefix { 0 } else { d }, k.as_str()))
        })
        .collect();
    close.sort();
    match close.first() {
        Some((_, k)) => format!(" (did you mean `{k}`?)"),
        None if kind.is_empty() || known.is_empty() => String::new(),
        None => format!(
            " (its {kind}: {})",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> super::super::ScriptHost {
        super::super::ScriptHost::new()
    }

    fn found(source: &str) -> Vec<String> {
        let mut host = host();
        let index = match host.compile("r.rhai", source) {
            Ok(i) => i,
            Err(err) => panic!("{}", err.message),
        };
        host.api_misuses_of(index)
            .into_iter()
            .map(|m| {
                format!(
                    "{}:{}: {}",
                    m.line.unwrap_or(0),
                    m.column.unwrap_or(0),
                    m.message
                )
            })
            .collect()
    }

    /// The API the check knows is the one registered: every property and method the
    /// documentation lists (docs/rubric-packs.md, "Rhai scripts"), and the calls [`RETURNS`]
    /// types.
    #[test]
    fn the_known_api_is_the_registered_one() {
        let host = host();
        let api = KnownApi::of(&host.engine);
        let names = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>();
        assert_eq!(names(&api.session.properties), ["entries", "id"]);
        assert_eq!(
            names(&api.session.methods),
            ["count", "first", "len", "matching", "metric"]
        );
        assert_eq!(
            names(&api.entry.properties),
            [
                "domain",
                "duration",
                "error",
                "exit_code",
                "index",
                "instant",
                "metadata",
                "operation",
                "params",
                "place",
                "position",
                "session_id",
                "success",
                "timestamp"
            ]
        );
        assert_eq!(
            names(&api.entry.methods),
            [
                "cmp_time",
                "field",
                "followed_by",
                "matches",
                "preceded_by",
                "to_string"
            ]
        );
        for (on, name, _) in RETURNS {
            let members = api.members(on).map(|m| (&m.properties, &m.methods));
            assert!(
                members.is_some_and(|(p, m)| p.contains(name) || m.contains(name)),
                "`{name}` is typed but not registered"
            );
        }
        assert!(api.functions.contains("shell_file_work"));
        assert!(api.functions.contains("contains"));
    }

    #[test]
    fn unknown_properties_and_methods_of_entries_and_the_session_are_found_at_their_place() {
        let script = "let n = session.lenght();\nfor e in session.entries {\n    if e.positon > 1 && e.followed_by(\"x\", 2) { n += e.position(); }\n}\nlet f = session.first(\"x\");\nlet p = f.plac;\nsession.matching(\"x\")[0].domian;\nsession.entries[0].params.whatever;\n#{ points: session.len }\n";
        assert_eq!(
            found(script),
            [
                "1:17: the session has no method `lenght` (did you mean `len`?)",
                "3:10: an entry has no property `positon` (did you mean `position`?)",
                "3:56: an entry has no method `position`: `position` is a property, read without `()`",
                "6:11: an entry has no property `plac` (did you mean `place`?)",
                "7:26: an entry has no property `domian` (did you mean `domain`?)",
                "9:20: the session has no property `len`: `len` is a method, call it with `()`",
            ]
        );
    }

    #[test]
    fn parameters_take_the_type_every_call_passes() {
        let script = "fn late(e) { e.instnt }\nfn any(x) { x.whatever }\nfor e in session.entries { late(e); any(e); }\nany(1);\n()\n";
        assert_eq!(
            found(script),
            ["1:16: an entry has no property `instnt` (did you mean `instant`?)"]
        );
    }

    #[test]
    fn unknown_functions_are_found_and_known_ones_are_not() {
        let script = "fn mine(a) { a }\nlet f = Fn(\"mine\");\nlet s = shell_file_wrok(\"ls\");\nlet t = shell_file_work(\"ls\");\nlet u = mine(1) + f.call(2) + type_of(t).len();\nlet v = [1].filter(|x| x > 0);\n()\n";
        assert_eq!(
            found(script),
            ["3:9: unknown function `shell_file_wrok` (did you mean `shell_file_work`?)"]
        );
    }

    /// Where the type of a value is not sure, nothing is reported.
    #[test]
    fn values_of_unsure_type_are_not_checked() {
        let script = "let e = session.first(\"x\");\nif e == () { e = #{ positon: 1 }; }\ne.positon;\nlet m = session.entries[0].metadata;\nm.anything;\nlet xs = session.entries;\nxs.len();\nxs[0].metadata.deep.deeper;\nfor (e, i) in session.entries { i.whatever; }\n()\n";
        assert_eq!(found(script), Vec::<String>::new());
    }
}
