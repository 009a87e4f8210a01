//! What a run ends with: the outcome map read into Rust, and errors in the words of a
//! script author.

use rhai::{Array, Dynamic, EvalAltResult, Map};

use super::observe::{EntryAt, Observable};
use super::view::EntryView;

/// The magnitude up to which every integer is a double (2^53): a score holds it exactly.
const MAX_EXACT_INTEGER: u64 = 1 << 53;

/// What a script decided.
#[derive(Debug, Default)]
pub struct ScriptOutcome {
    pub points: f64,
    /// The integer the script gave for `points` when a double cannot hold it exactly
    /// (magnitude past 2^53); `points` is then its nearest double, not what was written.
    pub points_past_exact: Option<i64>,
    pub evidence: Vec<String>,
    pub flags: Vec<String>,
    pub entries: Vec<u32>,
}

/// What a script decided, with its entries named by how the script reached them.
#[derive(Debug, Default)]
pub struct RawOutcome {
    pub(super) points: f64,
    pub(super) points_past_exact: Option<i64>,
    pub(super) evidence: Vec<String>,
    pub(super) flags: Vec<String>,
    pub(super) entries: Vec<EntryAt>,
}

impl RawOutcome {
    pub(super) fn resolve(&self, on: &Observable<'_>) -> ScriptOutcome {
        ScriptOutcome {
            points: self.points,
            points_past_exact: self.points_past_exact,
            evidence: self.evidence.clone(),
            flags: self.flags.clone(),
            entries: self.entries.iter().filter_map(|at| at.index(on)).collect(),
        }
    }
}

/// A run-time error as `FILE:LINE: message`, in the words a script author uses for types.
pub(super) fn runtime_error(file: &str, err: &EvalAltResult) -> String {
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

pub(super) fn outcome_from(value: Dynamic) -> Result<RawOutcome, String> {
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
                    // Every integer up to 2^53 in magnitude is a double; past it `as` rounds
                    // to a neighbour in silence, and the grader judges the rounding.
                    if i.unsigned_abs() > MAX_EXACT_INTEGER {
                        outcome.points_past_exact = Some(i);
                    }
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
                        let at = u32::try_from(i).map_err(|_| {
                            if i < 0 {
                                format!("`entries` holds a negative index ({i})")
                            } else {
                                format!("it named entry {i}, and no session has that many (entries are 0-based)")
                            }
                        })?;
                        outcome.entries.push(EntryAt::Nth(at));
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
