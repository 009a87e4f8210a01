//! Rhai rules: what the declarative part cannot say.
//!
//! A script is compiled once per pack. For each session it runs with two variables in
//! scope — `session` and `score` (the dimension's running score) — and evaluates to a map
//! `#{ points, evidence, flags, entries }` (every key optional; `evidence`/`flags` a string
//! or an array of strings; `entries` the entries behind the outcome) or to `()` for no outcome.
//!
//! The engine is sandboxed: no module resolver (no files), no `print`, no clock (the `no_time`
//! feature), no `sleep`, no environment; operations, call depth, expression depth, how deep
//! values nest, the memory a run's values take and what it allocates in all are bounded
//! (`limits.rs`) so a runaway script stops with an error instead of hanging a run.
//!
//! Scripts read a session only through probes with scalar answers (`observe.rs`); a run that
//! another session would answer alike is not run again but recalled (`memo.rs`).

mod api;
mod api_check;
mod braces;
mod guards;
mod limits;
mod memo;
#[cfg(test)]
mod memory_tests;
mod native;
mod observe;
mod outcome;
mod shell;
mod view;

use std::sync::Arc;

use rhai::packages::{Package, StandardPackage};
use rhai::{Dynamic, Engine, Scope, AST};

pub use api_check::ApiMisuse;
pub(crate) use limits::RUN_STACK;
use limits::{Budget, Stop};
pub use limits::{
    MAX_ALLOCATED, MAX_MEMORY, MAX_NESTING, MAX_OPERATIONS, MAX_PACK_SECONDS, MAX_SECONDS,
    SECONDS_PER_ENTRY,
};
use memo::{Memo, Recorder, Remembered};
pub use observe::Observable;
pub use outcome::ScriptOutcome;
use outcome::{outcome_from, runtime_error, RawOutcome};
pub use view::SessionData;
use view::{Run, SessionView};

pub struct ScriptHost {
    engine: Engine,
    scripts: Vec<Script>,
    memoize: bool,
    /// The fixed part of a run's budget ([`MAX_OPERATIONS`]; smaller in tests).
    max_operations: u64,
    /// The fixed part of the processor time a run may take, in seconds ([`MAX_SECONDS`], or
    /// the pack's `limits.script_seconds`).
    max_seconds: f64,
    /// The fixed parts of what a run may hold and allocate ([`MAX_MEMORY`], [`MAX_ALLOCATED`];
    /// smaller in tests), when allocations are counted ([`crate::CountingAllocator`]); when
    /// they are not, runs are bounded by Rhai's size limits instead.
    max_memory: Option<(u64, u64)>,
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

impl Default for ScriptHost {
    fn default() -> Self {
        Self::new()
    }
}

impl ScriptHost {
    pub fn new() -> ScriptHost {
        ScriptHost::bounded(crate::alloc::counting())
    }

    /// A host whose runs are bounded by counted allocations when `counting`, else by Rhai's
    /// size limits.
    fn bounded(counting: bool) -> ScriptHost {
        let mut engine = Engine::new_raw();
        engine.register_global_module(StandardPackage::new().as_shared_module());
        limits::install(&mut engine, counting);
        if counting {
            guards::register(&mut engine);
        }
        // Code built at run time would be invisible to `validate` (the selector names it
        // uses) and to the memo (whether it reads `score`).
        engine.disable_symbol("eval");
        // `sleep` would hold a grading thread for as long as a script asks, one operation.
        engine.register_fn("sleep", |_: f64| -> Result<(), Box<rhai::EvalAltResult>> {
            Err("`sleep` is not available to scripts".into())
        });
        engine.register_fn(
            "sleep",
            |_: rhai::INT| -> Result<(), Box<rhai::EvalAltResult>> {
                Err("`sleep` is not available to scripts".into())
            },
        );
        // The raw engine's string interner stays off: with `sync` it is shared by every
        // grading thread, and turning it on made a script-heavy pack 40% slower.
        api::register_api(&mut engine);
        shell::register(&mut engine);
        ScriptHost {
            engine,
            scripts: Vec::new(),
            memoize: true,
            max_operations: MAX_OPERATIONS,
            max_seconds: MAX_SECONDS,
            max_memory: counting.then_some((MAX_MEMORY, MAX_ALLOCATED)),
        }
    }

    /// Makes the plugins' functions callable from scripts (`plugin::function(session)`); call
    /// it before compiling the scripts that use them.
    pub fn add_plugins(&mut self, plugins: &[Arc<crate::native::Plugin>]) {
        native::register(&mut self.engine, plugins);
    }

    /// Sets the fixed part of the processor time a run may take (the pack's
    /// `limits.script_seconds`; [`MAX_SECONDS`] unless set).
    pub fn set_time_limit(&mut self, seconds: f64) {
        self.max_seconds = seconds;
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
                let mut message = format!(
                    "rhai syntax error: {}",
                    crate::entry::lowercase_first(&err.0.to_string())
                );
                // Rhai notices a missing `}` where the file ends: point at the brace instead.
                if message.contains("expecting '}'") {
                    if let Some((line, column)) = braces::unclosed_brace(source) {
                        message.push_str(&format!(" (the `{{` on line {line} is never closed)"));
                        return Err(ScriptCompileError {
                            line: Some(line),
                            column: Some(column),
                            message,
                        });
                    }
                }
                Err(ScriptCompileError {
                    line: position.line(),
                    column: position.position(),
                    message,
                })
            }
        }
    }

    /// What each script calls that the API it runs against does not have (an entry's
    /// `positon`, an unknown function), by the script's file, in the order of the scripts.
    pub(crate) fn api_misuses(&self) -> Vec<(&str, ApiMisuse)> {
        let api = api_check::KnownApi::of(&self.engine);
        self.scripts
            .iter()
            .flat_map(|s| {
                api_check::check(&s.ast, &api)
                    .into_iter()
                    .map(|m| (s.file.as_str(), m))
            })
            .collect()
    }

    /// [`ScriptHost::api_misuses`] of script `index` alone.
    #[cfg(test)]
    fn api_misuses_of(&self, index: usize) -> Vec<ApiMisuse> {
        let api = api_check::KnownApi::of(&self.engine);
        self.scripts
            .get(index)
            .map(|s| api_check::check(&s.ast, &api))
            .unwrap_or_default()
    }

    /// Whether script `index` names `score`: one that does not gives the same outcome
    /// whatever the running score, so it can run before the rules ahead of it.
    pub fn reads_score(&self, index: usize) -> bool {
        self.scripts
            .get(index)
            .is_none_or(|script| script.reads_score)
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
        let run = Arc::new(Run::new(
            data(),
            memoize.then(|| Recorder::new(script.reads_score.then_some(score))),
        ));
        let budget = Budget::for_session(
            self.max_operations,
            self.max_seconds,
            self.max_memory,
            on.entries.len(),
        );
        // What the run may hold is reserved from what all runs may hold together, and given
        // back when the run ends (its values are dropped within it).
        let _reserved = budget
            .memory
            .map(|(held, _)| limits::MEMORY_POOL.reserve(held));
        let mut stopped = None;
        // The run needs a stack deep enough for the nesting that can build up between two
        // looks at its scope (see `limits`); its values are dropped on it too. A thread with
        // that much left (the binary's pool: [`crate::SCRIPT_THREAD_STACK`]) runs it where it
        // is; any other gets a stack for the run, which costs a map and unmap of 256 MiB each
        // time (about six times the run of a small script).
        let result: Remembered = stacker::maybe_grow(limits::RUN_STACK, limits::RUN_STACK, || {
            let mut scope = Scope::new();
            scope.push("session", SessionView(Arc::clone(&run)));
            scope.push("score", score);
            limits::start(&budget);
            self.engine
                .eval_ast_with_scope::<Dynamic>(&mut scope, &script.ast)
                .map_err(|e| match limits::stopped(&e) {
                    Some((stop, at)) => {
                        stopped = Some(stop);
                        let what = match stop {
                            Stop::Operations => format!("too many operations ({at})"),
                            Stop::Time => format!(
                                "it took more than {} s of processor time (`limits.script_seconds` in `rubric.yaml` sets the fixed part, {} s; each entry of the session adds {} s)",
                                crate::entry::js_number((budget.seconds * 1000.0).round() / 1000.0),
                                crate::entry::js_number(self.max_seconds),
                                crate::entry::js_number(SECONDS_PER_ENTRY)
                            ),
                            Stop::Nesting => format!(
                                "a value nests more than {MAX_NESTING} levels deep (arrays or maps inside each other)"
                            ),
                            Stop::Memory => format!(
                                "its values take more than {} of memory",
                                mebibytes(budget.memory.map_or(0, |(held, _)| held))
                            ),
                            Stop::Allocation => format!(
                                "it allocated more than {} in all (each copy of an array, map or string, as `let b = a` makes, counts again)",
                                mebibytes(budget.memory.map_or(0, |(_, all)| all))
                            ),
                        };
                        match at.line() {
                            Some(line) => format!("{}:{line}: {what}", script.file),
                            None => format!("{}: {what}", script.file),
                        }
                    }
                    None => runtime_error(&script.file, &e),
                })
                .and_then(|value| {
                    outcome_from(value).map_err(|message| {
                        format!("{}:{}: {message}", script.file, script.last_line)
                    })
                })
            // The scope, which holds the last other reference to the run (the outcome holds
            // no handle), is dropped here.
        });
        let result = Arc::new(result);
        // A run stopped by its limits is not remembered: the budget follows the session's
        // length, which the run may not have asked for.
        if let Some(recorder) = Arc::try_unwrap(run)
            .ok()
            .and_then(|run| run.recorder)
            .filter(|_| stopped.is_none())
        {
            script.memo.remember(recorder, &result);
        }
        resolve(&result, on)
    }
}

/// `bytes` in whole mebibytes, as errors say it.
fn mebibytes(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
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
#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::Ordering;

    use serde_json::Value;

    use super::*;
    use crate::entry::{Entry, Metadata, Outcome, Params};

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
            origin: crate::entry::Origin::UNKNOWN,
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

    /// [`session`], with the entries at these instants.
    fn timed(id: &str, operations: &[&str], instants: &[i64]) -> Arc<SessionData> {
        let Ok(mut data) = Arc::try_unwrap(session(id, operations)) else {
            unreachable!("a new session has one owner")
        };
        let mut entries = (*data.entries).clone();
        for (entry, &instant) in entries.iter_mut().zip(instants) {
            entry.instant = instant;
        }
        data.entries = Arc::new(entries);
        Arc::new(data)
    }

    #[test]
    fn cmp_time_orders_two_entries_by_instant() {
        let host = host(
            r#"
            let add = session.first("add");
            let find = session.first("find");
            #{ points: add.cmp_time(find), evidence: `${find.cmp_time(session.entries[0])}` }
            "#,
        );
        let points = |instants: &[i64]| {
            let outcome = run(&host, &timed("s", &["add", "find"], instants), 0.0);
            (outcome.points, outcome.evidence[0].clone())
        };
        assert_eq!(points(&[1_000, 2_000]), (-1.0, "1".to_owned()));
        assert_eq!(points(&[2_000, 2_000]), (0.0, "0".to_owned()));
        assert_eq!(points(&[3_000, 2_000]), (1.0, "-1".to_owned()));
    }

    /// Runs each script on both sessions, in which each scores 1, and says how many times
    /// each was reused.
    fn reused(scripts: [&str; 2], sessions: [&Arc<SessionData>; 2]) -> [u64; 2] {
        scripts.map(|source| {
            let host = host(source);
            for data in sessions {
                assert_eq!(run(&host, data, 0.0).points, 1.0, "{source}");
            }
            hits(&host)
        })
    }

    #[test]
    fn a_run_that_compares_times_is_reused_where_one_that_reads_instants_is_not() {
        const COMPARES: &str =
            r#"if session.first("add").cmp_time(session.first("find")) <= 0 { #{ points: 1 } }"#;
        const READS: &str = r#"if session.first("add").instant <= session.first("find").instant { #{ points: 1 } }"#;
        // The same order, an hour apart: every instant differs.
        let early = timed("a", &["add", "find"], &[1_000, 5_000]);
        let late = timed("b", &["add", "find"], &[3_601_000, 3_605_000]);
        assert_eq!(reused([COMPARES, READS], [&early, &late]), [1, 0]);
        // Another order is another answer, and another outcome.
        let compares = host(COMPARES);
        assert_eq!(run(&compares, &early, 0.0).points, 1.0);
        let reversed = timed("c", &["add", "find"], &[9_000, 5_000]);
        assert_eq!(run(&compares, &reversed, 0.0).points, 0.0);
        assert_eq!(hits(&compares), 0);
    }

    #[test]
    fn followed_by_and_preceded_by_look_as_the_declarative_window_does() {
        let host = host(
            r#"
            let adds = session.matching("add");
            let said = [];
            for e in adds {
                said.push(`${e.position}: ${e.followed_by("find", 1)} ${e.preceded_by("find", 2)} ${e.preceded_by("find", 3)}`);
            }
            #{ evidence: said }
            "#,
        );
        // adds at 0 and 4, finds at 1 and 5.
        let outcome = run(
            &host,
            &session("s", &["add", "find", "x", "x", "add", "find"]),
            0.0,
        );
        assert_eq!(
            outcome.evidence,
            ["1: true false false", "5: true false true"]
        );
        for call in [
            r#"session.first("add").followed_by("find", 0)"#,
            r#"session.first("add").preceded_by("find", -3)"#,
        ] {
            let message = failure(&super::tests::host(call), &session("s", &["add", "find"]));
            assert!(
                message.contains("looks at 1 or more entries, not "),
                "{message}"
            );
        }
        let message = failure(
            &super::tests::host(r#"session.first("add").followed_by("nope", 2)"#),
            &session("s", &["add", "find"]),
        );
        assert!(message.contains("unknown selector `nope`"), "{message}");
    }

    /// The docs named `e.is("NAME")`, which Rhai cannot parse (`is` is one of its reserved
    /// keywords): the call is `e.matches("NAME")`.
    #[test]
    fn an_entry_matches_a_named_selector() {
        let host = host(
            r#"let n = 0; for e in session.entries { if e.matches("add") { n += 1 } } #{ points: n }"#,
        );
        let outcome = run(&host, &session("s", &["add", "find", "add"]), 0.0);
        assert_eq!(outcome.points, 2.0);
        let message = failure(
            &super::tests::host(r#"session.entries[0].matches("nope")"#),
            &session("s", &["add"]),
        );
        assert!(message.contains("unknown selector `nope`"), "{message}");
    }

    #[test]
    fn a_run_that_asks_for_a_window_is_reused_where_one_that_reads_positions_is_not() {
        const WINDOW: &str = r#"let n = 0; for e in session.matching("add") { if e.followed_by("find", 2) { n += 1 } } #{ points: n }"#;
        const POSITIONS: &str = r#"let n = 0; let finds = session.matching("find"); for e in session.matching("add") { for f in finds { if f.index > e.index && f.index <= e.index + 2 { n += 1; break; } } } #{ points: n }"#;
        // The same pattern at other places of the session.
        let early = session("a", &["add", "find", "x", "x", "x"]);
        let late = session("b", &["x", "x", "x", "add", "find"]);
        assert_eq!(reused([WINDOW, POSITIONS], [&early, &late]), [1, 0]);
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

    fn failure(host: &ScriptHost, data: &Arc<SessionData>) -> String {
        host.run(0, &data.observable(), 0.0, &mut || Arc::clone(data))
            .unwrap_err()
    }

    #[test]
    fn closures_called_by_built_ins_count_against_the_operation_budget() {
        // 100 passes of `all` over 1,000 items are 100,000 closure calls; Rhai counted
        // them on a copy of its state and forgot them, so the loop cost 300 operations.
        let mut host = host(
            "let a = []; a.pad(1000, 1); let n = 0;\nfor i in 0..100 { if a.all(|x| x > 0) { n += 1 } }\n#{ points: n }",
        );
        host.max_operations = 10_000;
        let err = failure(&host, &session("a", &["add"]));
        assert_eq!(
            err,
            "rule.rhai:2: too many operations (line 2, position 24)"
        );
        // Within the budget, the same script runs.
        host.max_operations = 1_000_000;
        assert_eq!(run(&host, &session("a", &["add"]), 0.0).points, 100.0);
    }

    #[test]
    fn a_value_nested_past_the_cap_stops_the_run_with_an_error() {
        let nest = |wrap: &str, then: &str| {
            format!("let a = []; for i in 0..100000 {{ a = {wrap}; }}\n{then}\n#{{ points: 1 }}")
        };
        let expected = format!(
            "rule.rhai:1: a value nests more than {MAX_NESTING} levels deep (arrays or maps inside each other)"
        );
        for source in [
            nest("[a]", ""),
            nest("#{ inner: a }", ""),
            nest("[1, [a]]", "let s = a.to_string();"),
            nest("[a]", "let same = a == a;"),
        ] {
            let err = failure(&host(&source), &session("a", &["add"]));
            assert_eq!(err, expected, "{source}");
        }
        // Nesting up to the cap is fine (`[]` is one level).
        let fine = host(&format!(
            "let a = []; for i in 1..{MAX_NESTING} {{ a = [a]; }}\nlet s = a.to_string();\n#{{ points: s.len() }}"
        ));
        assert_eq!(
            run(&fine, &session("a", &["add"]), 0.0).points,
            2.0 * MAX_NESTING as f64
        );
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
