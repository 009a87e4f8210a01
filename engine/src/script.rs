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

use std::collections::HashMap;
use std::sync::Arc;

use rhai::packages::{Package, StandardPackage};
use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString, Map, Scope, AST};
use serde_json::Value;

use crate::entry::Entry;
use crate::pack::field::Field;

/// Bounds that stop a script within about a second on a slow machine.
pub const MAX_OPERATIONS: u64 = 2_000_000;
const MAX_CALL_LEVELS: usize = 32;
const MAX_STRING_SIZE: usize = 1 << 20;
const MAX_ARRAY_SIZE: usize = 1 << 20;
const MAX_MAP_SIZE: usize = 1 << 16;

pub struct ScriptHost {
    engine: Engine,
    asts: Vec<AST>,
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

/// Everything a script may read about one session.
pub struct SessionData {
    pub session_id: String,
    pub entries: Vec<Entry>,
    pub hits: Vec<Vec<u32>>,
    pub metrics: Vec<Option<f64>>,
    pub selector_ids: Arc<HashMap<String, usize>>,
    pub metric_ids: Arc<HashMap<String, usize>>,
}

#[derive(Clone)]
struct SessionView(Arc<SessionData>);

#[derive(Clone)]
struct EntryView {
    data: Arc<SessionData>,
    index: usize,
}

impl EntryView {
    fn entry(&self) -> &Entry {
        &self.data.entries[self.index]
    }
}

type Fallible<T> = Result<T, Box<EvalAltResult>>;

fn selector_id(data: &SessionData, name: &str) -> Fallible<usize> {
    data.selector_ids
        .get(name)
        .copied()
        .ok_or_else(|| format!("unknown selector `{name}`").into())
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
        engine.set_max_operations(MAX_OPERATIONS);
        engine.set_max_call_levels(MAX_CALL_LEVELS);
        engine.set_max_expr_depths(64, 32);
        engine.set_max_string_size(MAX_STRING_SIZE);
        engine.set_max_array_size(MAX_ARRAY_SIZE);
        engine.set_max_map_size(MAX_MAP_SIZE);
        // The raw engine's string interner stays off: with `sync` it is shared by every
        // grading thread, and turning it on made a script-heavy pack 40% slower.
        register_api(&mut engine);
        ScriptHost {
            engine,
            asts: Vec::new(),
        }
    }

    /// Compiles a script and returns its index for [`ScriptHost::run`].
    pub fn compile(&mut self, _file: &str, source: &str) -> Result<usize, ScriptCompileError> {
        match self.engine.compile(source) {
            Ok(ast) => {
                self.asts.push(ast);
                Ok(self.asts.len() - 1)
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

    pub fn run(
        &self,
        index: usize,
        data: &Arc<SessionData>,
        score: f64,
    ) -> Result<ScriptOutcome, String> {
        let ast = self
            .asts
            .get(index)
            .ok_or_else(|| "script was not compiled".to_owned())?;
        let mut scope = Scope::new();
        scope.push("session", SessionView(Arc::clone(data)));
        scope.push("score", score);
        let value = self
            .engine
            .eval_ast_with_scope::<Dynamic>(&mut scope, ast)
            .map_err(|e| crate::entry::lowercase_first(&e.to_string()))?;
        outcome_from(value)
    }
}

fn outcome_from(value: Dynamic) -> Result<ScriptOutcome, String> {
    if value.is_unit() {
        return Ok(ScriptOutcome::default());
    }
    let type_name = value.type_name();
    let Some(map) = value.try_cast::<Map>() else {
        return Err(format!(
            "the script must end with a map `#{{ points, evidence, flags, entries }}` or `()`, not a `{type_name}`"
        ));
    };
    let mut outcome = ScriptOutcome::default();
    for (key, v) in map {
        match key.as_str() {
            "points" => {
                outcome.points = if let Some(i) = v.clone().try_cast::<i64>() {
                    i as f64
                } else if let Some(f) = v.clone().try_cast::<f64>() {
                    f
                } else {
                    return Err(format!("`points` must be a number, not a `{}`", v.type_name()));
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
                        outcome.entries.push(e.index as u32);
                    } else if let Some(i) = item.try_cast::<i64>() {
                        outcome.entries.push(u32::try_from(i).map_err(|_| "`entries` holds a negative index")?);
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
                Err(format!(
                    "`{key}` must hold strings, not a `{}`",
                    i.type_name()
                ))
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

    engine.register_get("id", |s: &mut SessionView| -> ImmutableString {
        s.0.session_id.as_str().into()
    });
    engine.register_fn("len", |s: &mut SessionView| s.0.entries.len() as i64);
    engine.register_get("entries", |s: &mut SessionView| -> Array {
        (0..s.0.entries.len())
            .map(|index| {
                Dynamic::from(EntryView {
                    data: Arc::clone(&s.0),
                    index,
                })
            })
            .collect()
    });
    engine.register_fn(
        "count",
        |s: &mut SessionView, name: &str| -> Fallible<i64> {
            let id = selector_id(&s.0, name)?;
            Ok(s.0.hits[id].len() as i64)
        },
    );
    engine.register_fn(
        "first",
        |s: &mut SessionView, name: &str| -> Fallible<Dynamic> {
            let id = selector_id(&s.0, name)?;
            Ok(match s.0.hits[id].first() {
                Some(&i) => Dynamic::from(EntryView {
                    data: Arc::clone(&s.0),
                    index: i as usize,
                }),
                None => Dynamic::UNIT,
            })
        },
    );
    engine.register_fn(
        "matching",
        |s: &mut SessionView, name: &str| -> Fallible<Array> {
            let id = selector_id(&s.0, name)?;
            Ok(s.0.hits[id]
                .iter()
                .map(|&i| {
                    Dynamic::from(EntryView {
                        data: Arc::clone(&s.0),
                        index: i as usize,
                    })
                })
                .collect())
        },
    );
    engine.register_fn(
        "metric",
        |s: &mut SessionView, name: &str| -> Fallible<Dynamic> {
            let id =
                s.0.metric_ids
                    .get(name)
                    .copied()
                    .ok_or_else(|| -> Box<EvalAltResult> {
                        format!("unknown metric `{name}`").into()
                    })?;
            Ok(s.0.metrics[id].map_or(Dynamic::UNIT, Dynamic::from))
        },
    );

    engine.register_get("index", |e: &mut EntryView| e.index as i64);
    engine.register_get("position", |e: &mut EntryView| e.index as i64 + 1);
    engine.register_get("timestamp", |e: &mut EntryView| -> ImmutableString {
        e.entry().timestamp.as_str().into()
    });
    engine.register_get("instant", |e: &mut EntryView| e.entry().instant);
    engine.register_get("session_id", |e: &mut EntryView| -> ImmutableString {
        e.entry().session_id.as_str().into()
    });
    engine.register_get("domain", |e: &mut EntryView| -> ImmutableString {
        e.entry().domain.as_str().into()
    });
    engine.register_get("operation", |e: &mut EntryView| -> ImmutableString {
        e.entry().operation.as_str().into()
    });
    engine.register_get("success", |e: &mut EntryView| e.entry().result.success);
    engine.register_get("exit_code", |e: &mut EntryView| e.entry().result.exit_code);
    engine.register_get("duration", |e: &mut EntryView| e.entry().result.duration);
    engine.register_get("error", |e: &mut EntryView| -> Dynamic {
        e.entry()
            .error
            .as_deref()
            .map_or(Dynamic::UNIT, |s| Dynamic::from(s.to_owned()))
    });
    engine.register_get("params", |e: &mut EntryView| -> Dynamic {
        Dynamic::from_map(
            e.entry()
                .params
                .iter()
                .map(|(k, v)| (k.into(), json_to_dynamic(v)))
                .collect(),
        )
    });
    engine.register_get("metadata", |e: &mut EntryView| -> Dynamic {
        match serde_json::to_value(&e.entry().metadata) {
            Ok(v) => json_to_dynamic(&v),
            Err(_) => Dynamic::UNIT,
        }
    });
    engine.register_fn(
        "field",
        |e: &mut EntryView, path: &str| -> Fallible<Dynamic> {
            let field = Field::parse(path).map_err(|m| -> Box<EvalAltResult> { m.into() })?;
            Ok(json_to_dynamic(&field.get(e.entry()).to_json()))
        },
    );
    engine.register_fn("is", |e: &mut EntryView, name: &str| -> Fallible<bool> {
        let id = selector_id(&e.data, name)?;
        Ok(e.data.hits[id].binary_search(&(e.index as u32)).is_ok())
    });
    engine.register_fn("to_string", |e: &mut EntryView| -> String {
        let entry = e.entry();
        format!("#{} {}.{}", e.index + 1, entry.domain, entry.operation)
    });
}
