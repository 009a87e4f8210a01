//! JSONL audit logs: one CLEO `AuditEntry` per line, sessions possibly interleaved.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{SessionFilter, SourceError};
use crate::entry::{Entry, Metadata, Outcome, Session};
use crate::time::parse_timestamp;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    timestamp: String,
    session_id: String,
    domain: String,
    operation: String,
    #[serde(default)]
    params: Option<Map<String, Value>>,
    result: RawOutcome,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOutcome {
    success: bool,
    #[serde(default)]
    exit_code: Option<i64>,
    #[serde(default)]
    duration: Option<f64>,
}

/// Reads a JSONL audit log. A session's entries keep file order; sessions come out in the
/// order of their first entry. Any malformed line is an error naming its line, even in a
/// session that was not asked for: a log that is partly unreadable should not grade quietly.
pub fn read_jsonl(path: &Path, filter: &SessionFilter) -> Result<Vec<Session>, SourceError> {
    let file = std::fs::File::open(path).map_err(|source| SourceError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut sessions: Vec<Session> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let mut line = Vec::with_capacity(1024);
    let mut line_no = 0u64;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|source| SourceError::Io {
                path: path.to_owned(),
                source,
            })?;
        if read == 0 {
            break;
        }
        line_no += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let entry = parse_line(&line).map_err(|message| SourceError::BadLine {
            path: path.to_owned(),
            line: line_no,
            message,
        })?;
        if !filter.wants(&entry.session_id) {
            continue;
        }
        let slot = match index_of.get(&entry.session_id) {
            Some(&slot) => slot,
            None => {
                index_of.insert(entry.session_id.clone(), sessions.len());
                sessions.push(Session {
                    id: entry.session_id.clone(),
                    entries: Vec::new(),
                });
                sessions.len() - 1
            }
        };
        sessions[slot].entries.push(entry);
    }
    Ok(sessions)
}

fn parse_line(line: &[u8]) -> Result<Entry, String> {
    let raw: RawEntry = serde_json::from_slice(line).map_err(describe_json_error)?;
    let instant = parse_timestamp(&raw.timestamp).map_err(|e| format!("field `timestamp`: {e}"))?;
    let exit_code = raw
        .result
        .exit_code
        .unwrap_or(if raw.result.success { 0 } else { 1 });
    Ok(Entry {
        timestamp: raw.timestamp,
        instant,
        session_id: raw.session_id,
        domain: raw.domain,
        operation: raw.operation,
        params: raw.params.unwrap_or_default(),
        result: Outcome {
            success: raw.result.success,
            exit_code,
            duration: raw.result.duration.unwrap_or(0.0),
        },
        metadata: Metadata::from_map(raw.metadata.unwrap_or_default(), "mcp"),
        error: raw.error,
    })
}

/// serde_json's message without its trailing "at line 1 column N", which is misleading
/// for a single line; the column is kept.
fn describe_json_error(err: serde_json::Error) -> String {
    let text = err.to_string();
    let message = match text.rfind(" at line ") {
        Some(cut) => &text[..cut],
        None => text.as_str(),
    };
    let kind = if err.is_syntax() || err.is_eof() {
        "not valid JSON: "
    } else {
        ""
    };
    format!("{kind}{message} (column {})", err.column())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_field_is_named() {
        let err = parse_line(br#"{"timestamp":"2026-03-01T00:00:00Z","domain":"tasks","operation":"find","result":{"success":true}}"#)
            .unwrap_err();
        assert!(err.contains("missing field `sessionId`"), "{err}");
    }

    #[test]
    fn defaults_follow_cleo() {
        let e = parse_line(br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"tasks","operation":"find","result":{"success":false}}"#)
            .unwrap();
        assert_eq!(e.result.exit_code, 1);
        assert_eq!(e.metadata.source, Value::String("mcp".into()));
        assert!(e.params.is_empty());
    }
}
