//! Rhai rules: what the declarative part cannot say.
//!
//! A script is compiled once per pack. For each session it runs with two variables in
//! scope — `session` and `score` (the dimension's running score) — and evaluates to a map
//! `#{ points, evidence, flags, entries }` (every key optional; `evidence`/`flags` a string
//! or an array of strings; `entries` the entries behind the outcome) or to `()` for no outcome.
//!
//! The engine is sandboxed: no module resolver (no files), no `print`, no clock (the `no_time`
//! feature), no environment; operations, call depth, expression depth, string, array and map
//! sizes are bounded so a runaway script stops with an error instead of hanging a run.
//!
//! Scripts read a session only through probes with scalar answers (`observe.rs`); a run that
//! another session would answer alike is not run again but recalled (`memo.rs`).

mod memo;
mod native;
mod observe;

use std::collections::HashMap;
use std::sync::Arc;

use rhai::packages::{Package, StandardPackage};
use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString, Map, Scope, AST};
use serde_json::Value;

use crate::entry::Entry;
use crate::pack::field::Field;
use memo::{Memo, Recorder, Remembered};
pub use observe::Observable;
use observe::{Answer, EntryAt, Getter, Probe};

/// Bounds that stop a script within about a second on a slow machine: a run may take
/// this many operations, plus [`OPERATIONS_PER_ENTRY`] for each entry of its session, so
/// a script that walks a long session once is not stopped while one that loops is.
pub const MAX_OPERATIONS: u64 = 2_000_000;
/// The operations a run may spend per entry of its session, beyond [`MAX_OPERATIONS`].
pub const OPERATIONS_PER_ENTRY: u64 = 400;

thread_local! {
    /// The operation budget of the run on this thread (runs do not nest).
    static BUDGET: std::cell::Cell<u64> = const { std::cell::Cell::new(MAX_OPERATIONS) };
}
const MAX_CALL_LEVELS: usize = 32;
const MAX_STRING_SIZE: usize = 1 << 20;
const MAX_ARRAY_SIZE: usize = 1 << 20;
/// As large as an array: a map keyed by file or target holds one key per call of a session.
const MAX_MAP_SIZE: usize = 1 << 20;

pub struct ScriptHost {
    engine: Engine,
    scripts: Vec<Script>,
    memoize: bool,
}

struct Script {
    /// The `.rhai` file, as errors name it.
    file: String,
    /// The line of its last code: where the value a script ends with is written.
    last_line: usize,
    ast: AST,
    memo: Memo,
    /// Whether the source names `score`: a script that does not cannot read it (`eval` is
    /// disabled), so its outcomes are remembered regardless of the running score.
    reads_score: bool,
}

/// A script that did not compile, with its place in the `.rhai` file.
#[derive(Debug)]
pub struct ScriptCompileError {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

/// What a script decided.
#[derive(Debug, Default)]
pub struct ScriptOutcome {
    pub points: f64,
    pub evidence: Vec<String>,
    pub flags: Vec<String>,
    pub entries: Vec<u32>,
}

/// What a script decided, with its entries named by how the script reached them.
#[derive(Debug, Default)]
pub struct RawOutcome {
    points: f64,
    evidence: Vec<String>,
    flags: Vec<String>,
    entries: Vec<EntryAt>,
}

impl RawOutcome {
    fn resolve(&self, on: &Observable<'_>) -> ScriptOutcome {
        ScriptOutcome {
            points: self.points,
            evidence: self.evidence.clone(),
            flags: self.flags.clone(),
            entries: self.entries.iter().filter_map(|at| at.index(on)).collect(),
        }
    }
}

/// Everything a script may read about one session, owned so that scripts can hold it.
pub struct SessionData {
    pub session_id: String,
    pub entries: Arc<Vec<Entry>>,
    pub hits: Vec<Vec<u32>>,
    pub metrics: Vec<Option<f64>>,
    pub selector_ids: Arc<HashMap<String, usize>>,
    pub metric_ids: Arc<HashMap<String, usize>>,
}

impl SessionData {
    fn observable(&self) -> Observable<'_> {
        Observable {
            session_id: &self.session_id,
            entries: &self.entries,
            hits: &self.hits,
            metrics: &self.metrics,
        }
    }
}

/// The session as a script sees it. Every read goes through [`SessionView::ask`], which
/// records it when the run is to be remembered.
#[derive(Clone)]
struct SessionView(Arc<Run>);

/// One run of a script: the session it reads and what records the reads.
struct Run {
    data: Arc<SessionData>,
    recorder: Option<Recorder>,
}

impl std::ops::Deref for SessionView {
    type Target = Run;
    fn deref(&self) -> &Run {
        &self.0
    }
}

impl SessionView {
    fn ask(&self, probe: Probe) -> Dynamic {
        match probe.answer(&self.data.observable(), None) {
            Some(answer) => self.answered(probe, answer),
            // Only an entry path past the end has no answer, and handles never point there.
            None => Dynamic::UNIT,
        }
    }

    /// Records an answer already computed from this session's data, and hands it to Rhai.
    fn answered(&self, probe: Probe, answer: Answer) -> Dynamic {
        if let Some(recorder) = &self.recorder {
            recorder.record(probe, &answer);
        }
        answer.to_dynamic()
    }

    /// The run read a map or an array: nothing to compare another session's answer with.
    fn give_up_memo(&self) {
        if let Some(recorder) = &self.recorder {
            recorder.give_up();
        }
    }

    fn entry(&self, at: EntryAt) -> EntryView {
        EntryView {
            session: self.clone(),
            at,
        }
    }

    fn selector(&self, name: &str) -> Fallible<u32> {
        id_of(&self.data.selector_ids, name, "selector")
    }
}

#[derive(Clone)]
struct EntryView {
    session: SessionView,
    at: EntryAt,
}

impl EntryView {
    fn ask(&self, getter: Getter) -> Dynamic {
        self.session.ask(Probe::Entry(self.at, getter))
    }

    /// The entry itself, for the reads that are not scalar answers.
    fn entry(&self) -> Option<&Entry> {
        let data = &self.session.data;
        let index = self.at.index(&data.observable())?;
        data.entries.get(index as usize)
    }
}

type Fallible<T> = Result<T, Box<EvalAltResult>>;

fn id_of(ids: &HashMap<String, usize>, name: &str, what: &str) -> Fallible<u32> {
    ids.get(name)
        .and_then(|&id| u32::try_from(id).ok())
        .ok_or_else(|| format!("unknown {what} `{name}`").into())
}

impl Default for ScriptHost {
    fn default() -> Self {
        Self::new()
    }
}

impl ScriptHost {
    pub fn new() -> ScriptHost {
        let mut engine = Engine::new_raw();
        engine.register_global_module(StandardPackage::new().as_shared_module());
        // The budget depends on the session, so it is checked here rather than with
        // `set_max_operations`, which is one number for every run.
        engine
            .on_progress(|ops| (ops > BUDGET.with(std::cell::Cell::get)).then_some(Dynamic::UNIT));
        engine.set_max_call_levels(MAX_CALL_LEVELS);
        engine.set_max_expr_depths(64, 32);
        engine.set_max_string_size(MAX_STRING_SIZE);
        engine.set_max_array_size(MAX_ARRAY_SIZE);
        engine.set_max_map_size(MAX_MAP_SIZE);
        // Code built at run time would be invisible to `validate` (the selector names it
        // uses) and to the memo (whether it reads `score`).
        engine.disable_symbol("eval");
        // The raw engine's string interner stays off: with `sync` it is shared by every
        // grading thread, and turning it on made a script-heavy pack 40% slower.
        register_api(&mut engine);
        ScriptHost {
            engine,
            scripts: Vec::new(),
            memoize: true,
        }
    }

    /// Makes the plugins' functions callable from scripts (`plugin::function(session)`); call
    /// it before compiling the scripts that use them.
    pub fn add_plugins(&mut self, plugins: &[Arc<crate::plugin::Plugin>]) {
        native::register(&mut self.engine, plugins);
    }

    /// Whether runs are remembered and reused (on by default; tests compare both ways).
    pub fn set_memoize(&mut self, on: bool) {
        self.memoize = on;
    }

    /// Compiles a script and returns its index for [`ScriptHost::run`].
    pub fn compile(&mut self, file: &str, source: &str) -> Result<usize, ScriptCompileError> {
        match self.engine.compile(source) {
            Ok(ast) => {
                self.scripts.push(Script {
                    file: file.to_owned(),
                    last_line: last_code_line(source),
                    ast,
                    memo: Memo::default(),
                    reads_score: names_identifier(source, "score"),
                });
                Ok(self.scripts.len() - 1)
            }
            Err(err) => {
                let position = err.1;
                Err(ScriptCompileError {
                    line: position.line(),
                    column: position.position(),
                    message: format!(
                        "rhai syntax error: {}",
                        crate::entry::lowercase_first(&err.0.to_string())
                    ),
                })
            }
        }
    }

    /// Runs script `index` on a session with the dimension's running `score`. `data` gives
    /// the session in the form a run holds; it is not called when an earlier run's outcome
    /// applies.
    pub fn run(
        &self,
        index: usize,
        on: &Observable<'_>,
        score: f64,
        data: &mut dyn FnMut() -> Arc<SessionData>,
    ) -> Result<ScriptOutcome, String> {
        let script = self
            .scripts
            .get(index)
            .ok_or_else(|| "script was not compiled".to_owned())?;
        let memoize = self.memoize && script.memo.is_on();
        if memoize {
            if let Some(remembered) = script.memo.recall(on, script.reads_score.then_some(score)) {
                return resolve(&remembered, on);
            }
        }
        let run = Arc::new(Run {
            data: data(),
            recorder: memoize.then(|| Recorder::new(script.reads_score.then_some(score))),
        });
        let mut scope = Scope::new();
        scope.push("session", SessionView(Arc::clone(&run)));
        scope.push("score", score);
        let budget = MAX_OPERATIONS
            .saturating_add(OPERATIONS_PER_ENTRY.saturating_mul(on.entries.len() as u64));
        BUDGET.with(|b| b.set(budget));
        let mut over_budget = false;
        let result: Remembered = self
            .engine
            .eval_ast_with_scope::<Dynamic>(&mut scope, &script.ast)
            .map_err(|e| match *e {
                EvalAltResult::ErrorTerminated(_, at) => {
                    over_budget = true;
                    match at.line() {
                        Some(line) => format!("{}:{line}: too many operations ({at})", script.file),
                        None => format!("{}: too many operations ({at})", script.file),
                    }
                }
                other => runtime_error(&script.file, &other),
            })
            .and_then(|value| {
                outcome_from(value)
                    .map_err(|message| format!("{}:{}: {message}", script.file, script.last_line))
            });
        // The scope holds the last other reference to the run (the outcome holds no handle).
        drop(scope);
        let result = Arc::new(result);
        // A run stopped by its budget is not remembered: the budget follows the session's
        // length, which the run may not have asked for.
        if let Some(recorder) = Arc::try_unwrap(run)
            .ok()
            .and_then(|run| run.recorder)
            .filter(|_| !over_budget)
        {
            script.memo.remember(recorder, &result);
        }
        resolve(&result, on)
    }
}

/// Whether `name` occurs in `source` as a whole word (in code, a string or a comment: a
/// word in a comment only costs the memo a distinction it did not need).
fn names_identifier(source: &str, name: &str) -> bool {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = source.as_bytes();
    source.match_indices(name).any(|(at, _)| {
        let end = at + name.len();
        (at == 0 || !is_ident(bytes[at - 1])) && bytes.get(end).is_none_or(|&c| !is_ident(c))
    })
}

fn resolve(remembered: &Remembered, on: &Observable<'_>) -> Result<ScriptOutcome, String> {
    match remembered {
        Ok(outcome) => Ok(outcome.resolve(on)),
        Err(message) => Err(message.clone()),
    }
}

/// The 1-based line of the last line of code (not blank, not only a comment) in `source`.
fn last_code_line(source: &str) -> usize {
    source
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            let t = line.trim();
            !t.is_empty() && !t.starts_with("//")
        })
        .last()
        .map_or(1, |(n, _)| n + 1)
}

/// A run-time error as `FILE:LINE: message`, in the words a script author uses for types.
fn runtime_error(file: &str, err: &EvalAltResult) -> String {
    let position = err.position();
    let mut message = err.to_string();
    // Rhai appends its own `(line N, position M)`; the prefix says it once.
    if let Some(at) = message.rfind(" (line ") {
        if message.ends_with(')') {
            message.truncate(at);
        }
    }
    let message = crate::entry::lowercase_first(&author_types(&message));
    match position.line() {
        Some(line) => format!("{file}:{line}: {message}"),
        None => format!("{file}: {message}"),
    }
}

/// Rhai's and Rust's type names in a message, replaced by the names of the script language.
fn author_types(message: &str) -> String {
    const NAMES: [(&str, &str); 7] = [
        ("i64", "integer"),
        ("f64", "decimal number"),
        ("rhai::Map", "map"),
        ("rhai::Array", "array"),
        ("ImmutableString", "string"),
        ("alloc::string::String", "string"),
        ("&str", "string"),
    ];
    let mut out = message.to_owned();
    for (from, to) in NAMES {
        out = replace_word(&out, from, to);
    }
    out
}

/// `text` with `word` replaced where it stands alone (not inside a longer name).
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_none_or(|c| !is_ident(c)) && after.is_none_or(|c| !is_ident(c)) {
            out.push_str(with);
        } else {
            out.push_str(word);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// What a script author calls the type of a value, with its article.
fn kind_of(value: &Dynamic) -> &'static str {
    if value.is_int() {
        "an integer"
    } else if value.is_float() {
        "a decimal number"
    } else if value.is_string() {
        "a string"
    } else if value.is_map() {
        "a map"
    } else if value.is_array() {
        "an array"
    } else if value.is_bool() {
        "a boolean"
    } else if value.is_char() {
        "a character"
    } else if value.is_unit() {
        "`()`"
    } else if value.is::<EntryView>() {
        "an entry"
    } else {
        "a value of another type"
    }
}

fn outcome_from(value: Dynamic) -> Result<RawOutcome, String> {
    if value.is_unit() {
        return Ok(RawOutcome::default());
    }
    let kind = kind_of(&value);
    let Some(map) = value.try_cast::<Map>() else {
        return Err(format!(
            "the script must end with a map `#{{ points, evidence, flags, entries }}` or `()`, not {kind}"
        ));
    };
    let mut outcome = RawOutcome::default();
    for (key, v) in map {
        match key.as_str() {
            "points" => {
                outcome.points = if let Some(i) = v.clone().try_cast::<i64>() {
                    i as f64
                } else if let Some(f) = v.clone().try_cast::<f64>() {
                    f
                } else {
                    return Err(format!("`points` must be a number, not {}", kind_of(&v)));
                }
            }
            "evidence" => outcome.evidence = strings(v, "evidence")?,
            "flags" | "flag" => outcome.flags = strings(v, &key)?,
            "entries" => {
                let items = v
                    .try_cast::<Array>()
                    .ok_or("`entries` must be an array of entries")?;
                for item in items {
                    if let Some(e) = item.clone().try_cast::<EntryView>() {
                        outcome.entries.push(e.at);
                    } else if let Some(i) = item.try_cast::<i64>() {
                        outcome.entries.push(EntryAt::Nth(u32::try_from(i).map_err(|_| "`entries` holds a negative index")?));
                    } else {
                        return Err("`entries` must hold entries or 0-based indices".to_owned());
                    }
                }
            }
            other => {
                return Err(format!(
                    "unknown key `{other}` in the script's result (use `points`, `evidence`, `flags`, `entries`)"
                ))
            }
        }
    }
    Ok(outcome)
}

fn strings(v: Dynamic, key: &str) -> Result<Vec<String>, String> {
    if v.is_string() {
        return Ok(vec![v.to_string()]);
    }
    let Some(items) = v.try_cast::<Array>() else {
        return Err(format!("`{key}` must be a string or an array of strings"));
    };
    items
        .into_iter()
        .map(|i| {
            if i.is_string() {
                Ok(i.to_string())
            } else {
                Err(format!("`{key}` must hold strings, not {}", kind_of(&i)))
            }
        })
        .collect()
}

pub fn json_to_dynamic(value: &Value) -> Dynamic {
    match value {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Dynamic::from(i),
            None => Dynamic::from(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Dynamic::from(s.clone()),
        Value::Array(items) => Dynamic::from_array(items.iter().map(json_to_dynamic).collect()),
        Value::Object(map) => Dynamic::from_map(
            map.iter()
                .map(|(k, v)| (k.as_str().into(), json_to_dynamic(v)))
                .collect(),
        ),
    }
}

fn register_api(engine: &mut Engine) {
    engine.register_type_with_name::<SessionView>("Session");
    engine.register_type_with_name::<EntryView>("Entry");

    engine.register_get("id", |s: &mut SessionView| s.ask(Probe::SessionId));
    engine.register_fn("len", |s: &mut SessionView| s.ask(Probe::Len));
    engine.register_get("entries", |s: &mut SessionView| -> Array {
        let len = s.ask(Probe::Len).as_int().unwrap_or(0);
        (0..len as u32)
            .map(|k| Dynamic::from(s.entry(EntryAt::Nth(k))))
            .collect()
    });
    engine.register_fn(
        "count",
        |s: &mut SessionView, name: &str| -> Fallible<Dynamic> {
            Ok(s.ask(Probe::Count(s.selector(name)?)))
        },
    );
    engine.register_fn(
        "first",
        |s: &mut SessionView, name: &str| -> Fallible<Dynamic> {
            let selector = s.selector(name)?;
            Ok(match s.ask(Probe::Any(selector)).as_bool() {
                Ok(true) => Dynamic::from(s.entry(EntryAt::Hit { selector, k: 0 })),
                _ => Dynamic::UNIT,
            })
        },
    );
    engine.register_fn(
        "matching",
        |s: &mut SessionView, name: &str| -> Fallible<Array> {
            let selector = s.selector(name)?;
            let count = s.ask(Probe::Count(selector)).as_int().unwrap_or(0);
            Ok((0..count as u32)
                .map(|k| Dynamic::from(s.entry(EntryAt::Hit { selector, k })))
                .collect())
        },
    );
    engine.register_fn(
        "metric",
        |s: &mut SessionView, name: &str| -> Fallible<Dynamic> {
            Ok(s.ask(Probe::Metric(id_of(&s.data.metric_ids, name, "metric")?)))
        },
    );

    engine.register_get("index", |e: &mut EntryView| e.ask(Getter::Index));
    engine.register_get("position", |e: &mut EntryView| e.ask(Getter::Position));
    engine.register_get("place", |e: &mut EntryView| e.ask(Getter::Place));
    engine.register_get("timestamp", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Timestamp))
    });
    engine.register_get("instant", |e: &mut EntryView| e.ask(Getter::Instant));
    engine.register_get("session_id", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::SessionId))
    });
    engine.register_get("domain", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Domain))
    });
    engine.register_get("operation", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Operation))
    });
    engine.register_get("success", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Success))
    });
    engine.register_get("exit_code", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::ExitCode))
    });
    engine.register_get("duration", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Duration))
    });
    engine.register_get("error", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Error))
    });
    engine.register_get("params", |e: &mut EntryView| -> Dynamic {
        e.session.give_up_memo();
        e.entry().map_or(Dynamic::UNIT, |entry| {
            Dynamic::from_map(
                entry
                    .params
                    .iter()
                    .map(|(k, v)| (k.into(), json_to_dynamic(v)))
                    .collect(),
            )
        })
    });
    engine.register_get("metadata", |e: &mut EntryView| -> Dynamic {
        e.session.give_up_memo();
        match e.entry().map(|entry| serde_json::to_value(&entry.metadata)) {
            Some(Ok(v)) => json_to_dynamic(&v),
            _ => Dynamic::UNIT,
        }
    });
    engine.register_fn(
        "field",
        |e: &mut EntryView, path: &str| -> Fallible<Dynamic> {
            let field = Field::parse(path).map_err(|m| -> Box<EvalAltResult> { m.into() })?;
            let Some(value) = e.entry().map(|entry| field.get(entry)) else {
                return Ok(Dynamic::UNIT);
            };
            Ok(match Answer::from_field(value) {
                Some(answer) => e
                    .session
                    .answered(Probe::Entry(e.at, Getter::Field(field)), answer),
                None => {
                    e.session.give_up_memo();
                    json_to_dynamic(&value.to_json())
                }
            })
        },
    );
    engine.register_fn("is", |e: &mut EntryView, name: &str| -> Fallible<Dynamic> {
        Ok(e.ask(Getter::Is(e.session.selector(name)?)))
    });
    engine.register_fn("to_string", |e: &mut EntryView| -> ImmutableString {
        e.ask(Getter::Describe)
            .into_immutable_string()
            .unwrap_or_default()
    });
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::entry::{Metadata, Outcome, Params};

    fn entry(index: usize, operation: &str, title: &str) -> Entry {
        let mut params = Params::new();
        params.insert("title", Value::from(title));
        Entry {
            timestamp: format!("2026-03-01T00:00:{index:02}Z").into(),
            instant: 1_772_323_200_000 + index as i64 * 1_000,
            session_id: "s".into(),
            domain: "tasks".into(),
            operation: operation.into(),
            params,
            result: Outcome {
                success: true,
                exit_code: 0,
                duration: 1.0,
            },
            metadata: Metadata::with_source("mcp"),
            error: None,
        }
    }

    /// A session of `operations` with selector 0 = `add` and selector 1 = `find`.
    fn session(id: &str, operations: &[&str]) -> Arc<SessionData> {
        let entries: Vec<Entry> = operations
            .iter()
            .enumerate()
            .map(|(i, op)| entry(i, op, &format!("{id} task {i}")))
            .collect();
        let hits = ["add", "find"]
            .iter()
            .map(|name| {
                (0..entries.len() as u32)
                    .filter(|&i| entries[i as usize].operation == *name)
                    .collect()
            })
            .collect();
        let ids = |names: &[&str]| -> Arc<HashMap<String, usize>> {
            Arc::new(
                names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| ((*n).to_owned(), i))
                    .collect(),
            )
        };
        Arc::new(SessionData {
            session_id: id.to_owned(),
            entries: Arc::new(entries),
            hits,
            metrics: vec![Some(0.5)],
            selector_ids: ids(&["add", "find"]),
            metric_ids: ids(&["share"]),
        })
    }

    fn host(source: &str) -> ScriptHost {
        let mut host = ScriptHost::new();
        host.compile("rule.rhai", source).expect("compiles");
        host
    }

    fn run(host: &ScriptHost, data: &Arc<SessionData>, score: f64) -> ScriptOutcome {
        host.run(0, &data.observable(), score, &mut || Arc::clone(data))
            .expect("runs")
    }

    fn hits(host: &ScriptHost) -> u64 {
        host.scripts[0].memo.hits.load(Ordering::Relaxed)
    }

    const COUNTS: &str = r#"
        let adds = session.count("add");
        if adds > 0 { #{ points: score - 1.0, evidence: `${adds} adds, share ${session.metric("share")}` } }
    "#;

    #[test]
    fn a_run_that_reads_counts_is_reused_for_a_session_with_the_same_counts() {
        let host = host(COUNTS);
        let first = run(&host, &session("a", &["add", "find", "add"]), 20.0);
        let again = run(&host, &session("b", &["find", "add", "add", "find"]), 20.0);
        assert_eq!(hits(&host), 1);
        assert_eq!(again.points, first.points);
        assert_eq!(again.evidence, ["2 adds, share 0.5"]);
        // Another count, or another running score, is another outcome.
        let three = run(&host, &session("c", &["add", "add", "add"]), 20.0);
        assert_eq!(three.evidence, ["3 adds, share 0.5"]);
        let lower = run(&host, &session("d", &["add", "add"]), 15.0);
        assert_eq!(lower.points, 14.0);
        assert_eq!(hits(&host), 1);
    }

    #[test]
    fn a_reused_outcome_names_the_entries_of_the_session_it_is_reused_for() {
        let host = host(
            r#"
            let adds = session.matching("add");
            #{ points: -adds.len(), entries: adds, flags: `first add at #${session.first("add").position}` }
            "#,
        );
        let a = session("a", &["add", "find", "add"]);
        let b = session("b", &["find", "add", "find", "add"]);
        let first = run(&host, &a, 0.0);
        assert_eq!(first.entries, [0, 2]);
        // `position` is an answer: b's first add is elsewhere, so the run is not reused…
        assert_eq!(run(&host, &b, 0.0).flags, ["first add at #2"]);
        assert_eq!(hits(&host), 0);
        // …but b again is, and its entries are b's.
        let again = run(&host, &b, 0.0);
        assert_eq!(hits(&host), 1);
        assert_eq!(again.entries, [1, 3]);
        assert_eq!(again.flags, ["first add at #2"]);

        let without_positions = super::tests::host(r#"#{ entries: session.matching("add") }"#);
        run(&without_positions, &a, 0.0);
        assert_eq!(run(&without_positions, &b, 0.0).entries, [1, 3]);
        assert_eq!(hits(&without_positions), 1);
    }

    #[test]
    fn a_run_that_reads_a_map_or_too_many_entries_is_not_remembered() {
        let reads_params = host(
            r#"let n = 0; for e in session.entries { if e.params.title != "" { n += 1 } } #{ points: n }"#,
        );
        let long: Vec<&str> = vec!["add"; memo::MAX_PROBES + 1];
        let reads_every_entry = host(
            r#"let n = 0; for e in session.entries { if e.operation == "add" { n += 1 } } #{ points: n }"#,
        );
        for host in [&reads_params, &reads_every_entry] {
            for _ in 0..2 {
                assert_eq!(
                    run(host, &session("a", &long), 0.0).points,
                    long.len() as f64
                );
            }
            assert_eq!(hits(host), 0);
        }
        // A few scalar reads of entries are remembered.
        let short = ["add", "find"];
        for _ in 0..2 {
            assert_eq!(
                run(&reads_every_entry, &session("a", &short), 0.0).points,
                1.0
            );
        }
        assert_eq!(hits(&reads_every_entry), 1);
    }

    #[test]
    fn a_script_whose_sessions_never_repeat_is_no_longer_memoised() {
        let host = host(r#"#{ evidence: `session ${session.id}` }"#);
        for i in 0..memo::WARM_UP + 1 {
            let outcome = run(&host, &session(&format!("s{i}"), &["add"]), 0.0);
            assert_eq!(outcome.evidence, [format!("session s{i}")]);
        }
        assert!(!host.scripts[0].memo.is_on());
    }

    #[test]
    fn errors_are_remembered_like_outcomes() {
        let host = host(r#"if session.count("add") > 1 { throw "too many adds" }"#);
        for _ in 0..2 {
            let data = session("a", &["add", "add"]);
            let err = host
                .run(0, &data.observable(), 0.0, &mut || Arc::clone(&data))
                .unwrap_err();
            assert!(err.contains("too many adds"), "{err}");
        }
        assert_eq!(hits(&host), 1);
    }

    #[test]
    fn a_script_that_does_not_name_score_is_reused_whatever_the_score() {
        let host = host(r#"#{ evidence: `${session.count("add")} adds` }"#);
        run(&host, &session("a", &["add"]), 20.0);
        run(&host, &session("b", &["add"]), 5.0);
        assert_eq!(hits(&host), 1);
        assert!(names_identifier("if score > 1 {}", "score"));
        assert!(names_identifier("score", "score"));
        assert!(!names_identifier(
            "let scores = 1; let _score2 = 2; my_score;",
            "score"
        ));
    }

    #[test]
    fn eval_is_not_available_to_scripts() {
        let err = ScriptHost::new()
            .compile("rule.rhai", r#"let x = eval("sco" + "re"); x"#)
            .unwrap_err();
        assert!(err.message.contains("eval"), "{}", err.message);
    }

    #[test]
    fn turned_off_every_run_is_a_fresh_one() {
        let mut host = host(COUNTS);
        host.set_memoize(false);
        for _ in 0..3 {
            run(&host, &session("a", &["add"]), 20.0);
        }
        assert_eq!(host.scripts[0].memo.lookups.load(Ordering::Relaxed), 0);
    }
}
