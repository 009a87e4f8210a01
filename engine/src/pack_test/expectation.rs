//! Expectations: the compared fields of a result, or the error of a session the pack
//! cannot grade, written and read as JSON lines, and a readable difference between what was
//! expected and what came out.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::{Outcome, TestError};
use crate::pack::codes::Code;
use crate::result::Score;
use crate::{EvalError, GradeResult};

/// The fields of a result; a line that expects an error has none of them.
const RESULT_FIELDS: [&str; 5] = [
    "totalScore",
    "maxScore",
    "dimensions",
    "flags",
    "entryCount",
];

/// The fields a pack test compares, in the order of a result (what updating writes).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Expectation<'r> {
    session_id: &'r str,
    total_score: Score,
    max_score: Score,
    dimensions: &'r indexmap::IndexMap<String, crate::result::DimensionScore>,
    flags: &'r [String],
    entry_count: usize,
}

fn expectation(r: &GradeResult) -> Expectation<'_> {
    Expectation {
        session_id: &r.session_id,
        total_score: r.total_score,
        max_score: r.max_score,
        dimensions: &r.dimensions,
        flags: &r.flags,
        entry_count: r.entry_count,
    }
}

/// What updating writes for a session the pack cannot grade: its error's code, when it has
/// one, and message, as `grade` prints it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorExpectation<'r> {
    session_id: &'r str,
    error: ErrorFields,
}

#[derive(serde::Serialize)]
struct ErrorFields {
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<Code>,
    message: String,
}

fn error_expectation<'r>(session_id: &'r str, error: &EvalError) -> ErrorExpectation<'r> {
    ErrorExpectation {
        session_id,
        error: ErrorFields {
            code: error.code(),
            message: error.to_string(),
        },
    }
}

pub(super) fn compared_fields(r: &GradeResult) -> Value {
    serde_json::to_value(expectation(r)).unwrap_or(Value::Null)
}

/// Writes the expectation of `results`: the compared fields of each, a line each.
pub fn write_expected(path: &Path, results: &[GradeResult]) -> Result<(), TestError> {
    let lines = results
        .iter()
        .map(|r| serde_json::to_string(&expectation(r)));
    write_lines(path, lines)
}

/// Writes the expectation of a fixture's sessions: a result's compared fields, or the
/// error of a session the pack cannot grade, a line each.
pub(super) fn write_outcomes(path: &Path, outcomes: &[Outcome]) -> Result<(), TestError> {
    let lines = outcomes.iter().map(|o| match &o.outcome {
        Ok(r) => serde_json::to_string(&expectation(r)),
        Err(e) => serde_json::to_string(&error_expectation(&o.session, e)),
    });
    write_lines(path, lines)
}

fn write_lines(
    path: &Path,
    lines: impl Iterator<Item = serde_json::Result<String>>,
) -> Result<(), TestError> {
    let io = |source| TestError::Io {
        path: path.to_owned(),
        source,
    };
    let mut text = String::new();
    for line in lines {
        text.push_str(&line.map_err(|e| io(e.into()))?);
        text.push('\n');
    }
    std::fs::write(path, text).map_err(io)
}

/// The expected results, or `None` when the expectation file does not exist.
pub(super) fn read_expected(path: &Path) -> Result<Option<Vec<Value>>, TestError> {
    let text =
        match crate::file::read_text_capped(path, crate::file::MAX_DOCUMENT, "expectation file") {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(TestError::ExpectedRead {
                    path: path.to_owned(),
                    source,
                })
            }
        };
    let lines =
        crate::result::parse_json_lines(&text).map_err(|(line, e)| TestError::ExpectedLine {
            path: path.to_owned(),
            line,
            message: e.to_string(),
        })?;
    // An expectation that cannot mean what it says is an error, not a pass: a session
    // expected twice kept only its last line, and `"flags": "none"` compared as no flags.
    let mut first_line: std::collections::HashMap<&str, usize> = Default::default();
    for (line, value) in &lines {
        let bad = |message: String| TestError::ExpectedLine {
            path: path.to_owned(),
            line: *line,
            message,
        };
        shape_problem(value).map_or(Ok(()), |m| Err(bad(m)))?;
        let id = value["sessionId"].as_str().unwrap_or_default();
        if let Some(first) = first_line.insert(id, *line) {
            return Err(bad(format!(
                "session `{id}` is expected twice (first on line {first})"
            )));
        }
    }
    Ok(Some(lines.into_iter().map(|(_, v)| v).collect()))
}

/// What is wrong with the shape of an expected result, if anything: the fields a test
/// compares must be of the type a result gives them, where they are present.
fn shape_problem(value: &Value) -> Option<String> {
    let Some(object) = value.as_object() else {
        return Some("an expectation is a JSON object".to_owned());
    };
    if !object.get("sessionId").is_some_and(Value::is_string) {
        return Some("`sessionId` must be a string".to_owned());
    }
    if let Some(error) = object.get("error") {
        return error_shape_problem(object, error);
    }
    let strings = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    for key in ["totalScore", "maxScore", "entryCount"] {
        if object.get(key).is_some_and(|v| !v.is_number()) {
            return Some(format!("`{key}` must be a number"));
        }
    }
    if object.get("flags").is_some_and(|v| !strings(v)) {
        return Some("`flags` must be a list of strings".to_owned());
    }
    if let Some(dimensions) = object.get("dimensions") {
        let Some(dimensions) = dimensions.as_object() else {
            return Some("`dimensions` must be an object".to_owned());
        };
        for (id, d) in dimensions {
            let Some(d) = d.as_object() else {
                return Some(format!("dimension `{id}` must be an object"));
            };
            for key in ["score", "max"] {
                if d.get(key).is_some_and(|v| !v.is_number()) {
                    return Some(format!("`{id}.{key}` must be a number"));
                }
            }
            if d.get("evidence").is_some_and(|v| !strings(v)) {
                return Some(format!("`{id}.evidence` must be a list of strings"));
            }
        }
    }
    None
}

/// What is wrong with a line that expects the session not to be graded, if anything.
fn error_shape_problem(object: &serde_json::Map<String, Value>, error: &Value) -> Option<String> {
    // A line with both would pass or fail on half of what it says.
    if let Some(key) = RESULT_FIELDS.iter().find(|k| object.contains_key(**k)) {
        return Some(format!(
            "`{key}` is a field of a result, and `error` expects the session not to be graded: give one or the other"
        ));
    }
    let Some(error) = error.as_object() else {
        return Some("`error` must be an object with a `message`, a `code` or both".to_owned());
    };
    // A misspelt `mesage` would otherwise leave the message unchecked.
    if let Some(key) = error
        .keys()
        .find(|k| !matches!(k.as_str(), "code" | "message"))
    {
        return Some(format!(
            "`error.{key}` is not compared: an error has a `code` and a `message`"
        ));
    }
    for key in ["code", "message"] {
        if error.get(key).is_some_and(|v| !v.is_string()) {
            return Some(format!("`error.{key}` must be a string"));
        }
    }
    match error.get("code").and_then(Value::as_str) {
        Some(code) if !is_session_error_code(code) => Some(format!(
            "`error.code` `{code}` is not the code of an error a session can have (`grade explain` lists the codes)"
        )),
        None if !error.contains_key("message") => {
            Some("`error` must have a `message`, a `code` or both".to_owned())
        }
        _ => None,
    }
}

/// Whether `code` is written exactly as updating writes the code of a session's error.
fn is_session_error_code(code: &str) -> bool {
    Code::parse(code).is_some_and(|c| c.is_session_error() && c.info().id == code)
}

/// A readable difference between an expected error and what came of the session; empty
/// when it failed as expected. Only what the expectation gives is compared; a `message`
/// without a `code` expects an error that has none.
pub(super) fn diff_error(want: &Value, got: &Result<GradeResult, EvalError>) -> String {
    let mut out = String::new();
    let error = match got {
        Ok(result) => {
            let fields = compared_fields(result);
            let _ = writeln!(
                out,
                "  expected error: {}\n  got a result: totalScore {}, maxScore {}",
                wanted_error(want),
                fields["totalScore"],
                fields["maxScore"]
            );
            return out;
        }
        Err(error) => error,
    };
    let code = error.code().map(|c| c.info().id);
    let want_code = want["code"].as_str();
    if want_code != code {
        let shown = |c: Option<&str>| c.map_or_else(|| "none".to_owned(), |c| format!("{c:?}"));
        let _ = writeln!(
            out,
            "  error.code: expected {}, got {}",
            shown(want_code),
            shown(code)
        );
    }
    if let Some(message) = want.get("message") {
        diff_list(
            &mut out,
            "error.message",
            &Value::Array(vec![message.clone()]),
            &Value::Array(vec![Value::String(error.to_string())]),
        );
    }
    out
}

/// An expected error in a line of a difference: its message, or its code when it has none.
fn wanted_error(want: &Value) -> String {
    match (want["message"].as_str(), want["code"].as_str()) {
        (Some(message), _) => message.to_owned(),
        (None, Some(code)) => format!("code {code}, any message"),
        (None, None) => String::new(),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}
/// A readable difference between an expected and an actual result; empty when they agree.
pub(super) fn diff_results(want: &Value, got: &Value) -> String {
    let mut out = String::new();
    for key in ["totalScore", "maxScore", "entryCount"] {
        if !same(&want[key], &got[key]) {
            let _ = writeln!(out, "  {key}: expected {}, got {}", want[key], got[key]);
        }
    }
    diff_list(&mut out, "flags", &want["flags"], &got["flags"]);
    let empty = serde_json::Map::new();
    let want_dims = want["dimensions"].as_object().unwrap_or(&empty);
    let got_dims = got["dimensions"].as_object().unwrap_or(&empty);
    for (id, w) in want_dims {
        let Some(g) = got_dims.get(id) else {
            let _ = writeln!(
                out,
                "  dimension `{id}`: expected, but the pack has no such dimension"
            );
            continue;
        };
        for key in ["score", "max"] {
            if !same(&w[key], &g[key]) {
                let _ = writeln!(out, "  {id}.{key}: expected {}, got {}", w[key], g[key]);
            }
        }
        let applies = |d: &Value| d["notApplicable"] != Value::Bool(true);
        if applies(w) != applies(g) {
            let says = |d: &Value| {
                if applies(d) {
                    "applies"
                } else {
                    "not applicable"
                }
            };
            let _ = writeln!(out, "  {id}: expected {}, got {}", says(w), says(g));
        }
        diff_list(
            &mut out,
            &format!("{id}.evidence"),
            &w["evidence"],
            &g["evidence"],
        );
    }
    for id in got_dims.keys().filter(|id| !want_dims.contains_key(*id)) {
        let _ = writeln!(out, "  dimension `{id}`: not in the expectation");
    }
    out
}

/// Lines only expected get `-`, lines only produced get `+`, in order (a longest common
/// subsequence keeps the shared lines aligned).
fn diff_list(out: &mut String, label: &str, want: &Value, got: &Value) {
    let texts = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (texts(want), texts(got));
    if a == b {
        return;
    }
    let _ = writeln!(out, "  {label}:");
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            let _ = writeln!(out, "      {}", a[i]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            let _ = writeln!(out, "    - {}", a[i]);
            i += 1;
        } else {
            let _ = writeln!(out, "    + {}", b[j]);
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Option<Vec<Value>>, TestError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.expected.jsonl");
        std::fs::write(&path, text).unwrap();
        read_expected(&path)
    }

    /// A session expected twice kept only its last line, so a wrong first line passed; a
    /// field of the wrong type compared as empty (`"flags": "none"` as no flags).
    #[test]
    fn an_expectation_that_cannot_mean_what_it_says_is_an_error_not_a_pass() {
        let good = r#"{"sessionId":"a","totalScore":20,"maxScore":20,"dimensions":{"d":{"score":20,"max":20,"evidence":["x"]}},"flags":[],"entryCount":3}"#;
        assert_eq!(read(&format!("{good}\n")).unwrap().unwrap().len(), 1);
        for (text, says) in [
            (
                format!("{good}\n{good}\n"),
                "session `a` is expected twice (first on line 1)",
            ),
            (
                r#"{"sessionId":"a","flags":"none"}"#.to_owned(),
                "`flags` must be a list of strings",
            ),
            (
                r#"{"sessionId":"a","totalScore":"20"}"#.to_owned(),
                "`totalScore` must be a number",
            ),
            (
                r#"{"sessionId":"a","dimensions":{"d":{"evidence":"x"}}}"#.to_owned(),
                "`d.evidence` must be a list of strings",
            ),
            (
                r#"{"totalScore":20}"#.to_owned(),
                "`sessionId` must be a string",
            ),
            ("[1]".to_owned(), "an expectation is a JSON object"),
        ] {
            let err = read(&text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}

#[cfg(test)]
mod error_lines {
    use super::*;

    /// A line that expects an error says exactly what it expects: a misspelt field, a code
    /// that no session error has, or result fields beside it would leave part unchecked.
    #[test]
    fn an_expected_error_that_cannot_mean_what_it_says_is_refused() {
        for (line, says) in [
            (r#"{"sessionId":"a","error":{"code":"E040"}}"#, None),
            (r#"{"sessionId":"a","error":{"message":"m"}}"#, None),
            (
                r#"{"sessionId":"a","error":{"code":"E040","message":"m"}}"#,
                None,
            ),
            (
                r#"{"sessionId":"a","error":{}}"#,
                Some("`error` must have a `message`, a `code` or both"),
            ),
            (
                r#"{"sessionId":"a","error":"E040"}"#,
                Some("`error` must be an object with a `message`, a `code` or both"),
            ),
            (
                r#"{"sessionId":"a","error":{"mesage":"m"}}"#,
                Some("`error.mesage` is not compared: an error has a `code` and a `message`"),
            ),
            (
                r#"{"sessionId":"a","error":{"message":7}}"#,
                Some("`error.message` must be a string"),
            ),
            (
                r#"{"sessionId":"a","error":{"code":"e040"}}"#,
                Some("`error.code` `e040` is not the code of an error a session can have (`grade explain` lists the codes)"),
            ),
            (
                r#"{"sessionId":"a","error":{"code":"E012"}}"#,
                Some("`error.code` `E012` is not the code of an error a session can have (`grade explain` lists the codes)"),
            ),
            (
                r#"{"sessionId":"a","flags":[],"error":{"code":"E040"}}"#,
                Some("`flags` is a field of a result, and `error` expects the session not to be graded: give one or the other"),
            ),
        ] {
            let value: Value = serde_json::from_str(line).unwrap();
            assert_eq!(shape_problem(&value).as_deref(), says, "{line}");
        }
    }
}
