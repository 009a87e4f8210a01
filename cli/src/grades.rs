//! GRADES.jsonl: one grade per line, appended, never half-written.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use grade_engine::GradeResult;
use serde_json::Value;

use crate::error::CliError;

/// Appends one line per result in a single write, so a reader never sees a partial line
/// from this run and a failure leaves the file as it was (or reports that it did not).
pub fn append(path: &Path, results: &[GradeResult]) -> Result<(), CliError> {
    let fail = |source| CliError::GradesWrite {
        path: path.to_owned(),
        source,
    };
    let mut lines = Vec::new();
    for r in results {
        let mut record = r.clone();
        record.explain = None;
        serde_json::to_writer(&mut lines, &record).map_err(CliError::Json)?;
        lines.push(b'\n');
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(fail)?;
    file.write_all(&lines).map_err(fail)?;
    file.sync_data().map_err(fail)
}

/// The JSON values of a JSON-lines file with their line numbers, or `None` when the file
/// does not exist; blank lines are skipped, and a line that is not JSON is an error naming it.
pub fn read_json_lines(path: &Path) -> Result<Option<Vec<(usize, Value)>>, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(CliError::GradesRead {
                path: path.to_owned(),
                source,
            })
        }
    };
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| CliError::GradesLine {
            path: path.to_owned(),
            line: n + 1,
            message: e.to_string(),
        })?;
        out.push((n + 1, value));
    }
    Ok(Some(out))
}

/// Reads recorded grades; a missing file has none.
pub fn read(path: &Path) -> Result<Vec<Value>, CliError> {
    let lines = read_json_lines(path)?.unwrap_or_default();
    let mut out = Vec::with_capacity(lines.len());
    for (line, value) in lines {
        if !value.is_object() || value.get("sessionId").is_none() {
            return Err(CliError::GradesLine {
                path: path.to_owned(),
                line,
                message: "an object with a `sessionId` was expected".to_owned(),
            });
        }
        out.push(value);
    }
    Ok(out)
}
