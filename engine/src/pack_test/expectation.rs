//! Expectations: the compared fields of a result, written and read as JSON lines, and a
//! readable difference between what was expected and what came out.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::TestError;
use crate::result::Score;
use crate::GradeResult;

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

pub(super) fn compared_fields(r: &GradeResult) -> Value {
    serde_json::to_value(expectation(r)).unwrap_or(Value::Null)
}

/// Writes the expectation of `results`: the compared fields of each, a line each.
pub fn write_expected(path: &Path, results: &[GradeResult]) -> Result<(), TestError> {
    let io = |source| TestError::Io {
        path: path.to_owned(),
        source,
    };
    let mut text = String::new();
    for r in results {
        let line = serde_json::to_string(&expectation(r)).map_err(|e| io(e.into()))?;
        text.push_str(&line);
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
    crate::result::parse_json_lines(&text)
        .map(|lines| Some(lines.into_iter().map(|(_, v)| v).collect()))
        .map_err(|(line, e)| TestError::ExpectedLine {
            path: path.to_owned(),
            line,
            message: e.to_string(),
        })
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
