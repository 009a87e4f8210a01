//! CLEO's `tasks.db`: the `audit_log` table of the 2026-02-27 dispatch-columns migration.
//!
//! Rows map to entries as CLEO's own `queryAudit` maps them, with two deliberate fixes:
//! no 1,000-row cap, and an exit code recovered from the error text (CLEO stores none,
//! which would leave its not-found rule unable to fire).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

use super::{SessionFilter, SourceError};
use crate::entry::{Entry, Metadata, Outcome, Session};
use crate::time::parse_timestamp;

/// Columns the reader needs; `id`, `timestamp`, `action` and `task_id` predate the migration.
const DISPATCH_COLUMNS: [&str; 8] = [
    "domain",
    "operation",
    "session_id",
    "duration_ms",
    "success",
    "source",
    "gateway",
    "error_message",
];
const BASE_COLUMNS: [&str; 5] = ["id", "timestamp", "action", "task_id", "details_json"];

/// CLEO's exit code for E_NOT_FOUND.
const EXIT_NOT_FOUND: i64 = 4;

pub fn read_cleo_db(path: &Path, filter: &SessionFilter) -> Result<Vec<Session>, SourceError> {
    let sql_err = |source| SourceError::Sqlite {
        path: path.to_owned(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_err)?;
    check_layout(&conn, path)?;

    let has_actor = column_names(&conn, path)?.iter().any(|c| c == "actor");
    let actor = if has_actor { "actor" } else { "NULL" };
    let mut sql = format!(
        "SELECT rowid, id, timestamp, action, task_id, {actor}, details_json, domain, operation, \
         session_id, duration_ms, success, source, gateway, error_message FROM audit_log \
         WHERE session_id IS NOT NULL"
    );
    let wanted: Vec<&String> = match filter {
        SessionFilter::All => Vec::new(),
        SessionFilter::Only(ids) => ids.iter().collect(),
    };
    if let SessionFilter::Only(_) = filter {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        sql.push_str(" AND session_id IN (");
        sql.push_str(&vec!["?"; wanted.len()].join(","));
        sql.push(')');
    }
    sql.push_str(" ORDER BY rowid");

    let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
    let mut rows = stmt
        .query(rusqlite::params_from_iter(wanted.iter()))
        .map_err(sql_err)?;

    let mut sessions: Vec<Session> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    // rowid of each entry, parallel to the session's entries, for the tie-break.
    let mut rowids: Vec<Vec<i64>> = Vec::new();
    while let Some(row) = rows.next().map_err(sql_err)? {
        let rowid: i64 = row.get(0).map_err(sql_err)?;
        let entry = map_row(row).map_err(|(id, message)| SourceError::BadRow {
            path: path.to_owned(),
            row: id.unwrap_or_else(|| format!("rowid {rowid}")),
            message,
        })?;
        let slot = match index_of.get(&entry.session_id) {
            Some(&slot) => slot,
            None => {
                index_of.insert(entry.session_id.clone(), sessions.len());
                sessions.push(Session {
                    id: entry.session_id.clone(),
                    entries: Vec::new(),
                });
                rowids.push(Vec::new());
                sessions.len() - 1
            }
        };
        sessions[slot].entries.push(entry);
        rowids[slot].push(rowid);
    }

    // A session's entries in order of instant, ties by rowid (the order CLEO inserted them).
    for (session, ids) in sessions.iter_mut().zip(rowids) {
        let mut keyed: Vec<(i64, i64, Entry)> = std::mem::take(&mut session.entries)
            .into_iter()
            .zip(ids)
            .map(|(e, id)| (e.instant, id, e))
            .collect();
        keyed.sort_by_key(|(instant, id, _)| (*instant, *id));
        session.entries = keyed.into_iter().map(|(_, _, e)| e).collect();
    }
    Ok(sessions)
}

fn column_names(conn: &Connection, path: &Path) -> Result<Vec<String>, SourceError> {
    let sql_err = |source| SourceError::Sqlite {
        path: path.to_owned(),
        source,
    };
    let mut stmt = conn
        .prepare("SELECT name FROM pragma_table_info('audit_log')")
        .map_err(sql_err)?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sql_err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(sql_err)?;
    Ok(names)
}

fn check_layout(conn: &Connection, path: &Path) -> Result<(), SourceError> {
    let names = match column_names(conn, path) {
        Ok(names) => names,
        // A file with a SQLite header that SQLite cannot read is not a usable database.
        Err(SourceError::Sqlite { source, .. }) => {
            return Err(SourceError::NotCleoDb {
                path: path.to_owned(),
                reason: source.to_string(),
            })
        }
        Err(other) => return Err(other),
    };
    if names.is_empty() {
        return Err(SourceError::NotCleoDb {
            path: path.to_owned(),
            reason: "it has no `audit_log` table".to_owned(),
        });
    }
    let missing_base: Vec<&str> = BASE_COLUMNS
        .iter()
        .copied()
        .filter(|c| !names.iter().any(|n| n == c))
        .collect();
    if !missing_base.is_empty() {
        return Err(SourceError::NotCleoDb {
            path: path.to_owned(),
            reason: format!(
                "its `audit_log` table lacks the columns {}",
                quote_list(&missing_base)
            ),
        });
    }
    let missing: Vec<&str> = DISPATCH_COLUMNS
        .iter()
        .copied()
        .filter(|c| !names.iter().any(|n| n == c))
        .collect();
    if !missing.is_empty() {
        return Err(SourceError::MissingDispatchColumns {
            path: path.to_owned(),
            missing: quote_list(&missing),
        });
    }
    Ok(())
}

fn quote_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

type RowError = (Option<String>, String);

fn map_row(row: &rusqlite::Row<'_>) -> Result<Entry, RowError> {
    let text = |i: usize| -> Result<Option<String>, RowError> {
        row.get::<_, Option<String>>(i)
            .map_err(|e| (None, format!("column {i}: {e}")))
    };
    let id = text(1)?;
    let fail = |message: String| (id.clone(), message);
    let timestamp = text(2)?.ok_or_else(|| fail("`timestamp` is NULL".to_owned()))?;
    let instant = parse_timestamp(&timestamp).map_err(|e| fail(format!("`timestamp`: {e}")))?;
    let action = text(3)?;
    let task_id = text(4)?;
    let actor = text(5)?;
    let details = text(6)?;
    let domain = text(7)?;
    let operation = text(8)?;
    let session_id = text(9)?.ok_or_else(|| fail("`session_id` is NULL".to_owned()))?;
    let duration: Option<f64> = row
        .get(10)
        .map_err(|e| fail(format!("`duration_ms`: {e}")))?;
    let success: Option<i64> = row.get(11).map_err(|e| fail(format!("`success`: {e}")))?;
    let source = text(12)?;
    let gateway = text(13)?;
    let error = text(14)?;

    let params = match details.as_deref() {
        None | Some("") => Map::new(),
        Some(json) => match serde_json::from_str::<Value>(json) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null) => Map::new(),
            Ok(_) => return Err(fail("`details_json` is not a JSON object".to_owned())),
            Err(e) => return Err(fail(format!("`details_json` is not JSON: {e}"))),
        },
    };
    let success = success == Some(1);
    let exit_code = if success {
        0
    } else if error.as_deref().is_some_and(names_not_found) {
        EXIT_NOT_FOUND
    } else {
        1
    };
    let metadata = Metadata {
        task_id: task_id
            .filter(|t| t != "system" && t != "unknown")
            .map(Value::String),
        user_id: actor.map(Value::String),
        source: Value::String(source.unwrap_or_else(|| "mcp".to_owned())),
        gateway: gateway.map(Value::String),
        role: None,
        extra: Map::new(),
    };
    let operation = operation
        .or(action)
        .ok_or_else(|| fail("both `operation` and `action` are NULL".to_owned()))?;
    Ok(Entry {
            timestamp,
            instant,
            session_id,
            domain: domain.unwrap_or_else(|| "unknown".to_owned()),
            operation,
            params,
            result: Outcome {
                success,
                exit_code,
                duration: duration.unwrap_or(0.0),
            },
            metadata,
            error,
    })
}

/// Whether an error text reports a missing thing: CLEO's `E_NOT_FOUND` code or the words.
fn names_not_found(error: &str) -> bool {
    error.contains("E_NOT_FOUND") || error.to_ascii_lowercase().contains("not found")
}
