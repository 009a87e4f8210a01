//! CLEO's `tasks.db`: the `audit_log` table of the 2026-02-27 dispatch-columns migration.
//!
//! Rows map to entries as CLEO's own `queryAudit` maps them, with two deliberate fixes:
//! no 1,000-row cap, and an exit code recovered from the error text (CLEO stores none,
//! which would leave its not-found rule unable to fire).

mod chunks;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension};
use serde_json::Map;

use super::cleo_jsonl::{Kept, KeptParams};
use super::common::{
    Input, Place, ReadOptions, SessionFilter, SessionGroups, SourceError, SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff, SourceFormat};
use super::readonly_db::{explain, ReadOnlyDb};
use super::stream::{Progress, SessionOrder, Stream};
use crate::entry::{
    Entry, MetaValue, Metadata, Origin, Outcome, Params, Session, SourceFile, Text,
};
use crate::field::FieldsRead;
use crate::time::parse_timestamp;
use chunks::open_stream;

/// Columns the reader needs (those of [`ENTRY_COLUMNS`] from `domain` on, which the
/// migration added); `id`, `timestamp`, `action` and `task_id` predate it.
const DISPATCH_COLUMNS: &[&str] = ENTRY_COLUMNS.as_slice().split_at(7).1;
const BASE_COLUMNS: [&str; 5] = ["id", "timestamp", "action", "task_id", "details_json"];

/// CLEO's exit code for E_NOT_FOUND.
const EXIT_NOT_FOUND: i64 = 4;

/// The first bytes of every SQLite database.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// CLEO's `tasks.db`, recognised by its SQLite header.
#[derive(Debug, Clone, Copy, Default)]
pub struct CleoDb;

impl SourceFormat for CleoDb {
    fn file_extensions(&self) -> &[&str] {
        &["db"]
    }

    fn name(&self) -> &str {
        "cleo-db"
    }

    fn noun(&self) -> &str {
        "a CLEO database"
    }

    fn about(&self) -> &str {
        "CLEO's tasks.db"
    }

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Head(head) if *head == SQLITE_MAGIC => Sniff::Certain,
            _ => Sniff::No,
        }
    }

    fn head_signature(&self) -> Option<&str> {
        Some("SQLite header")
    }

    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let ((mut sessions, lone), name) = match input {
            Input::File(path) => (read_cleo_db(path, path, filter, options)?, *path),
            // SQLite reads files: bytes from a pipe are kept in a temporary one meanwhile.
            Input::Bytes { name, bytes } => {
                let spooled = Spooled::write(name, bytes)?;
                let read = read_cleo_db(&spooled.path, name, filter, options)
                    .map_err(|e| e.at_path(name))?;
                (read, *name)
            }
        };
        let order = InstantOrder::default();
        for (place, session) in sessions.iter_mut().enumerate() {
            order.arrange(place, session);
        }
        Ok(SourceRead {
            sessions,
            warnings: lone
                .warning(name)
                .into_iter()
                .chain(order.warning(name))
                .collect(),
            ..SourceRead::default()
        })
    }

    fn streams(&self) -> bool {
        true
    }

    fn open_stream<'p>(
        &self,
        path: &Path,
        filter: &SessionFilter,
        options: &ReadOptions,
        progress: Option<Progress<'p>>,
    ) -> Result<Option<Stream<'p>>, SourceError> {
        match filter {
            // Named sessions: one filtered scan holds just those sessions.
            SessionFilter::Only(_) => Ok(None),
            SessionFilter::All => {
                let (table, batches) = open_stream(path, options, progress)?;
                let order = Box::new(InstantOrder::default());
                Ok(Some(Stream::new(table, batches, Some(order))))
            }
        }
    }
}

/// A temporary copy of a database that was given as bytes, removed when dropped.
struct Spooled {
    path: PathBuf,
}

impl Spooled {
    fn write(name: &Path, bytes: &[u8]) -> Result<Spooled, SourceError> {
        use std::io::Write as _;
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("grade-{}-{n}.db", std::process::id()));
        let io = |source| SourceError::Io {
            path: name.to_owned(),
            source,
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io)?;
        let spooled = Spooled { path };
        file.write_all(bytes).map_err(io)?;
        Ok(spooled)
    }
}

impl Drop for Spooled {
    fn drop(&mut self) {
        // A leftover temporary file is harmless; there is nobody to tell.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads the database at `path`; entries name `name` (the path, or what a spooled copy
/// was given as) as the file they are in. Optional values are checked and kept as `options`
/// ask.
fn read_cleo_db(
    path: &Path,
    name: &Path,
    filter: &SessionFilter,
    options: &ReadOptions,
) -> Result<(Vec<Session>, LoneRows), SourceError> {
    let (checked, kept) = (options.checked, Kept::new(&options.kept, options.checked));
    let sql_err = |source| explain(path, source);
    let db = ReadOnlyDb::new(path)?;
    let conn = db.connect()?;
    check_layout(&conn, path)?;

    let has_actor = column_names(&conn, path)?.iter().any(|c| c == "actor");
    let mut sql = format!(
        "SELECT {} FROM audit_log WHERE session_id IS NOT NULL",
        entry_columns(has_actor, kept)
    );
    // The named sessions as one JSON array, however many: SQLite takes at most 32,766
    // parameters, and a `?` per id would refuse more sessions than that.
    let wanted = match filter {
        SessionFilter::All => None,
        SessionFilter::Only(ids) if ids.is_empty() => return Ok((Vec::new(), LoneRows::default())),
        SessionFilter::Only(ids) => {
            Some(serde_json::to_string(ids).map_err(|e| SourceError::Format {
                path: path.to_owned(),
                message: format!("the session ids could not be written as JSON: {e}"),
            })?)
        }
    };
    if wanted.is_some() {
        sql.push_str(" AND session_id IN (SELECT value FROM json_each(?1))");
    }
    sql.push_str(" ORDER BY rowid");

    let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
    let mut rows = stmt
        .query(rusqlite::params_from_iter(wanted.iter()))
        .map_err(sql_err)?;

    let mut groups = SessionGroups::default();
    let file = SourceFile::named(name);
    let mut lone = LoneRows::default();
    while let Some(row) = rows.next().map_err(sql_err)? {
        let rowid: i64 = row.get(0).map_err(sql_err)?;
        let entry = map_row(row, file, (checked, kept), &mut lone).map_err(|(id, message)| {
            SourceError::BadRow {
                path: path.to_owned(),
                row: id.unwrap_or_else(|| format!("rowid {rowid}")),
                message,
            }
        })?;
        groups.push(entry);
    }

    // Rows came in rowid order; the caller puts each session's in order of instant.
    let (sessions, _) = groups.into_sessions();
    Ok((sessions, lone))
}

fn column_names(conn: &Connection, path: &Path) -> Result<Vec<String>, SourceError> {
    let sql_err = |source| explain(path, source);
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
    // Rows are read in `rowid` order (the order CLEO wrote them, which breaks ties between
    // entries of one instant) and in `rowid` ranges: a view or a table without rowids has none.
    let kind: Option<(String, bool)> = conn
        .query_row(
            "SELECT type, wr FROM pragma_table_list WHERE name = 'audit_log' COLLATE NOCASE \
             ORDER BY schema = 'main' DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(|source| explain(path, source))?;
    let (kind, without_rowid) = kind.unwrap_or_default();
    let no_rowid = if kind == "view" {
        Some("its `audit_log` is a view, not a table (`grade` reads rows by rowid, the order CLEO wrote them in, which a view lacks)")
    } else if without_rowid {
        Some("its `audit_log` table is `WITHOUT ROWID` (`grade` reads rows by rowid, the order CLEO wrote them in)")
    } else {
        None
    };
    if let Some(reason) = no_rowid {
        return Err(SourceError::NotCleoDb {
            path: path.to_owned(),
            reason: reason.to_owned(),
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

/// The rows whose `details_json` held a lone surrogate, read as U+FFFD: the first (by its
/// `id`) and how many. Said once for the read.
#[derive(Debug, Default)]
struct LoneRows {
    first: Option<String>,
    rows: u64,
}

impl LoneRows {
    fn add(&mut self, row: impl FnOnce() -> String) {
        if self.first.is_none() {
            self.first = Some(row());
        }
        self.rows += 1;
    }

    /// Adds the rows of a later part of the read.
    fn extend(&mut self, later: LoneRows) {
        if self.first.is_none() {
            self.first = later.first;
        }
        self.rows += later.rows;
    }

    fn warning(self, path: &Path) -> Option<SourceWarning> {
        let first = self.first?;
        Some(SourceWarning {
            path: path.to_owned(),
            place: Place::File,
            message: format!(
                "audit_log row `{first}`: `details_json`: {}",
                crate::json::lone_surrogates_read(self.rows, "row")
            ),
        })
    }
}

/// A row named by its `rowid`, for a row whose `id` is no text or number.
fn rowid_name(row: &rusqlite::Row<'_>) -> String {
    format!("rowid {}", row.get::<_, i64>(0).unwrap_or_default())
}

/// The columns [`entry_columns`] selects, in the order `map_row` reads them: messages name a
/// column by its index here.
const ENTRY_COLUMNS: [&str; 15] = [
    "rowid",
    "id",
    "timestamp",
    "action",
    "task_id",
    "actor",
    "details_json",
    "domain",
    "operation",
    "session_id",
    "duration_ms",
    "success",
    "source",
    "gateway",
    "error_message",
];

/// A value SQLite holds where another kind was expected, for messages: its storage class
/// and, when short, the value.
fn sql_kind(value: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => "NULL".to_owned(),
        ValueRef::Integer(n) => format!("the integer `{n}`"),
        // As JavaScript prints it: Rust's `{}` spells `1e308` in 309 digits.
        ValueRef::Real(x) => format!("the real `{}`", crate::entry::js_number(x)),
        ValueRef::Text(t) if t.len() <= 40 => {
            format!("the text `{}`", String::from_utf8_lossy(t))
        }
        ValueRef::Text(t) => format!("a text of {} bytes", t.len()),
        ValueRef::Blob(b) => format!("a BLOB of {} bytes", b.len()),
    }
}

/// The columns `map_row` reads, in its order ([`ENTRY_COLUMNS`]); `actor` is `NULL` in a
/// table written before CLEO had it. A column whose field `kept` leaves out is asked for as
/// `NULL`, so that SQLite hands over no value of it: `duration_ms` unless durations are
/// kept, `details_json` unless params are (a pack's [`crate::CompiledPack::projection`]).
/// `error_message` is always read: an entry's exit code comes from it.
fn entry_columns(has_actor: bool, kept: Kept<'_>) -> String {
    ENTRY_COLUMNS
        .map(|c| match c {
            "actor" if !has_actor => "NULL",
            "duration_ms" if !kept.duration() => "NULL",
            "details_json" if matches!(kept.params(), KeptParams::Skipped) => "NULL",
            c => c,
        })
        .join(", ")
}

/// `details_json` as serde reads it: a params object, or `null` for none; the message says
/// which kind of JSON it is instead, or that it is no JSON at all.
fn params_by_serde(json: &str) -> Result<(Params, bool), String> {
    match crate::json::from_slice_lenient::<Option<Params>>(json.as_bytes()) {
        Ok((params, lone)) => Ok((params.unwrap_or_default(), lone)),
        // Parsed again only to tell the two failures apart.
        Err(e) => match serde_json::from_str::<serde_json::Value>(json) {
            Ok(other) => Err(format!(
                "`details_json` holds {}, not a JSON object",
                crate::entry::json_kind(&other)
            )),
            Err(_) => Err(format!("`details_json` is not JSON: {e}")),
        },
    }
}

/// The params of a `details_json` value, as CLEO's reader parses them, and whether a lone
/// surrogate was read as U+FFFD; the error says why the value holds none. With `keys`, only
/// those are built where the flat reader takes the value (and the rest skipped, checked as
/// JSON); a value it leaves to serde is read whole.
fn details_params(
    value: rusqlite::types::ValueRef<'_>,
    keys: Option<&[String]>,
) -> Result<(Params, bool), String> {
    use rusqlite::types::ValueRef;
    let json = match value {
        ValueRef::Null => return Ok((Params::new(), false)),
        ValueRef::Text(t) => {
            std::str::from_utf8(t).map_err(|e| format!("`details_json` is not UTF-8 text: {e}"))?
        }
        other => return Err(format!("`details_json` is {}, not text", sql_kind(other))),
    };
    match json {
        "" | "{}" => Ok((Params::new(), false)),
        // The flat objects CLEO writes, read without serde; anything else as serde reads it.
        json => match super::cleo_jsonl::params_document(json, keys) {
            Some(params) => Ok((params, false)),
            None => params_by_serde(json),
        },
    }
}

/// Maps a row (columns as [`entry_columns`] lists them) to an entry, as CLEO's
/// `queryAudit` does. Only the texts an entry keeps are copied; `id` and `action` are read
/// only when needed. `duration_ms` and `details_json` are checked only when `checked` names
/// durations and params, as a CLEO log's `result.duration` and `params` are; of the fields
/// checked or kept, the entry holds what `kept` keeps (a pack's projection): the error text
/// only when kept, and of params only the keys kept.
fn map_row(
    row: &rusqlite::Row<'_>,
    file: SourceFile,
    (checked, kept): (FieldsRead, Kept<'_>),
    lone: &mut LoneRows,
) -> Result<Entry, RowError> {
    use rusqlite::types::ValueRef;
    // The row's `id`, for messages.
    let id = || -> Option<String> {
        match row.get_ref(1) {
            Ok(ValueRef::Text(t)) => Some(String::from_utf8_lossy(t).into_owned()),
            Ok(ValueRef::Integer(i)) => Some(i.to_string()),
            _ => None,
        }
    };
    let fail = |message: String| (id(), message);
    let name = |i: usize| ENTRY_COLUMNS.get(i).copied().unwrap_or("?");
    let kind_error = |i: usize, value: ValueRef<'_>, wanted: &str| {
        fail(format!(
            "`{}` is {}, not {wanted}",
            name(i),
            sql_kind(value)
        ))
    };
    let text = |i: usize| -> Result<Option<&str>, RowError> {
        match row.get_ref(i) {
            Ok(ValueRef::Null) => Ok(None),
            Ok(ValueRef::Text(t)) => std::str::from_utf8(t)
                .map(Some)
                .map_err(|e| fail(format!("`{}` is not UTF-8 text: {e}", name(i)))),
            Ok(other) => Err(kind_error(i, other, "text")),
            Err(e) => Err(fail(format!("`{}`: {e}", name(i)))),
        }
    };
    let owned = |i: usize| -> Result<Option<Text>, RowError> { Ok(text(i)?.map(Text::from)) };
    // A metadata column as CLEO's reader hands it to its grader: text, or a number where the
    // column has no text affinity (SQLite then keeps `7` an integer, and JavaScript reads
    // it as the number 7, so a flag names task `7`). A number JavaScript cannot hold exactly
    // (node:sqlite throws on it, and CLEO's reader then returns no entries at all) or a
    // real that is no number (`Inf`) is refused, as is a BLOB.
    let meta = |i: usize| -> Result<Option<Meta<'_>>, RowError> {
        match row.get_ref(i) {
            Ok(ValueRef::Integer(n)) if n.unsigned_abs() <= MAX_SAFE_INTEGER => {
                Ok(Some(Meta::Number(serde_json::Value::from(n))))
            }
            Ok(ValueRef::Real(x)) if x.is_finite() => {
                Ok(Some(Meta::Number(serde_json::Value::from(x))))
            }
            Ok(ValueRef::Null) => Ok(None),
            Ok(ValueRef::Text(t)) => std::str::from_utf8(t)
                .map(|t| Some(Meta::Text(t)))
                .map_err(|e| fail(format!("`{}` is not UTF-8 text: {e}", name(i)))),
            // Refused, as `text` says.
            _ => Ok(text(i)?.map(Meta::Text)),
        }
    };
    let timestamp = owned(2)?.ok_or_else(|| fail("`timestamp` is NULL".to_owned()))?;
    let instant = parse_timestamp(&timestamp).map_err(|e| fail(format!("`timestamp`: {e}")))?;
    let task_id = meta(4)?;
    let actor = meta(5)?;
    let domain = owned(7)?;
    let operation = match owned(8)? {
        Some(op) => op,
        None => {
            owned(3)?.ok_or_else(|| fail("both `operation` and `action` are NULL".to_owned()))?
        }
    };
    let session_id = owned(9)?.ok_or_else(|| fail("`session_id` is NULL".to_owned()))?;
    // Read as the JSONL log of the same entries reads `result.duration`: NULL is none, and a
    // value that is no duration (text, a BLOB, beyond 2^53 - 1 ms, where an integer no longer
    // converts exactly and durations can add up to infinity) is refused only by a pack that
    // reads durations, and left at 0 for one that does not (`cleo-v1`, `cleo-v2`).
    let duration = match row.get_ref(10) {
        Ok(ValueRef::Null) => 0.0,
        // Up to 2^53 - 1 in size an integer converts exactly; past it, the rounded float
        // is past the bound too, so one test serves both.
        Ok(ValueRef::Integer(n)) if super::is_duration(n as f64) => n as f64,
        Ok(ValueRef::Real(x)) if super::is_duration(x) => x,
        Ok(other) if checked.contains(FieldsRead::DURATION) => {
            return Err(kind_error(10, other, super::DURATION_WANTED))
        }
        Ok(_) => 0.0,
        Err(e) => return Err(fail(format!("`duration_ms`: {e}"))),
    };
    // CLEO's reader tests `success === 1`: 1 is a success, any other number or NULL a
    // failure. A real is read only when integral (`1.0`, kept a real where the column has
    // no integer affinity), as an audit log's `4.0` is exit code 4; `1.5` is no 0 or 1.
    let success = match row.get_ref(11) {
        Ok(ValueRef::Null) => false,
        Ok(ValueRef::Integer(n)) => n == 1,
        Ok(ValueRef::Real(x)) if x.fract() == 0.0 => x == 1.0,
        Ok(other) => return Err(kind_error(11, other, "an integer")),
        Err(e) => return Err(fail(format!("`success`: {e}"))),
    };
    let source = meta(12)?;
    let gateway = meta(13)?;
    // Read (and refused when it is no text) whatever is kept: the exit code comes from it.
    let error = text(14)?;

    // Read as the JSONL log of the same entries reads `params`: a value that holds no params
    // (JSON of another kind, no JSON at all, a BLOB) is refused only by a pack that reads
    // params, and no params for one that does not. Unlike a log's line that is not JSON, the
    // row around it is whole: every other column is read, as a `duration_ms` of text is.
    // Skipped params come as NULL (see `entry_columns`).
    let keep_keys = match kept.params() {
        KeptParams::Keys(keys) => Some(keys),
        KeptParams::All | KeptParams::Skipped => None,
    };
    let params = match row.get_ref(6) {
        Ok(value) => match details_params(value, keep_keys) {
            Ok((params, replaced)) => {
                if replaced {
                    lone.add(|| id().unwrap_or_else(|| rowid_name(row)));
                }
                params
            }
            Err(message) if checked.contains(FieldsRead::PARAMS) => return Err(fail(message)),
            Err(_) => Params::new(),
        },
        Err(e) => return Err(fail(format!("`details_json`: {e}"))),
    };
    let exit_code = if success {
        0
    } else if error.is_some_and(names_not_found) {
        EXIT_NOT_FOUND
    } else {
        1
    };
    let error = error.filter(|_| kept.error()).map(Text::from);
    let metadata = Metadata {
        task_id: task_id
            .filter(|t| !matches!(t, Meta::Text("system" | "unknown")))
            .map(Meta::into_value),
        user_id: actor.map(Meta::into_value),
        source: source.map_or_else(|| MetaValue::from("mcp"), Meta::into_value),
        gateway: gateway.map(Meta::into_value),
        role: None,
        extra: Map::new(),
    };
    Ok(Entry {
        timestamp,
        instant,
        session_id,
        domain: domain.unwrap_or_else(|| "unknown".into()),
        operation,
        params,
        result: Outcome {
            success,
            exit_code,
            duration,
        },
        metadata,
        error,
        origin: row
            .get(0)
            .map_or(Origin::UNKNOWN, |rowid| Origin::row(file, rowid)),
    })
}

/// A session's rows in order of instant, ties in rowid order (the order CLEO inserted them:
/// rows are read in rowid order, and the sort is stable); and the sessions whose timestamp
/// texts are in another order, said once ([`TextOrder`]). Both the whole read and the
/// stream order sessions with it.
#[derive(Debug, Default)]
pub(super) struct InstantOrder(Mutex<TextOrder>);

impl SessionOrder for InstantOrder {
    fn arrange(&self, order: usize, session: &mut Session) {
        session.entries.sort_by_key(|e| e.instant);
        if let Some(pair) = TextOrder::out_of_order(session) {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .note(order, session, pair);
        }
    }

    fn warning(&self, path: &Path) -> Option<SourceWarning> {
        let mut text_order = self.0.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *text_order).warning(path)
    }
}

/// Sessions whose rows, read in order of instant, are not in the order of their `timestamp`
/// texts: CLEO's reader gives its grader that order (`ORDER BY timestamp`), so where
/// spellings mix (`2026-03-01 10:00:05` sorts before `2026-03-01T10:00:01Z`) CLEO's own grade
/// of the session may differ, and the run says so once.
#[derive(Debug, Default)]
struct TextOrder {
    count: u64,
    /// The first such session by place in the read: that place, its id, and two timestamps
    /// read in one order and in the other by text.
    first: Option<(usize, String, Text, Text)>,
}

impl TextOrder {
    /// Two consecutive timestamps of `session`, in instant order, whose texts are not.
    fn out_of_order(session: &Session) -> Option<(&Text, &Text)> {
        session.entries.windows(2).find_map(|w| match w {
            [a, b] if a.timestamp > b.timestamp => Some((&a.timestamp, &b.timestamp)),
            _ => None,
        })
    }

    /// Notes `session`, the `order`-th of the read, whose timestamps `pair` are out of order.
    fn note(&mut self, order: usize, session: &Session, pair: (&Text, &Text)) {
        self.count += 1;
        if self.first.as_ref().is_none_or(|(o, ..)| order < *o) {
            self.first = Some((order, session.id.clone(), pair.0.clone(), pair.1.clone()));
        }
    }

    /// The run's warning, if any session was out of order.
    fn warning(self, path: &Path) -> Option<SourceWarning> {
        let (_, id, earlier, later) = self.first?;
        let more = match self.count.saturating_sub(1) {
            0 => String::new(),
            1 => " (and 1 more session)".to_owned(),
            n => format!(" (and {n} more sessions)"),
        };
        Some(SourceWarning {
            path: path.to_owned(),
            place: Place::File,
            message: format!(
                "session `{id}`: its rows are graded in order of instant (`{earlier}` before \
                 `{later}`), but CLEO's reader orders them by the text of `timestamp`, so \
                 CLEO's own grade of it may differ{more}"
            ),
        })
    }
}

/// JavaScript's largest exact integer, 2^53 - 1: node:sqlite refuses to read a larger one.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A metadata column's value, as [`map_row`] reads it.
enum Meta<'r> {
    Text(&'r str),
    /// A number, held by a column without text affinity.
    Number(serde_json::Value),
}

impl Meta<'_> {
    fn into_value(self) -> MetaValue {
        match self {
            Meta::Text(t) => MetaValue::from(t),
            Meta::Number(n) => MetaValue::from(n),
        }
    }
}

/// Whether an error text reports a missing thing: CLEO's `E_NOT_FOUND` code or the words
/// (in any ASCII case, as `toLowerCase().includes("not found")` finds them).
fn names_not_found(error: &str) -> bool {
    error.contains("E_NOT_FOUND")
        || error
            .as_bytes()
            .windows(9)
            .any(|w| w.eq_ignore_ascii_case(b"not found"))
}

#[cfg(test)]
mod tests;
