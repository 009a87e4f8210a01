//! Tests of the `tasks.db` reader, on databases built in a temporary folder.

use super::*;
use crate::source::{Input, ReadOptions};

const DDL: &str = "CREATE TABLE audit_log (id text PRIMARY KEY, timestamp text NOT NULL, \
    action text NOT NULL, task_id text NOT NULL, actor text, details_json text DEFAULT '{}', \
    before_json text, after_json text, domain text, operation text, session_id text, \
    request_id text, duration_ms integer, success integer, source text, gateway text, \
    error_message text)";

/// A database in `dir` holding, for each `(rowid, session)`, a `session.list` row.
fn database(dir: &Path, rows: &[(i64, &str)]) -> PathBuf {
    let path = dir.join("tasks.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(DDL).unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    for (n, (rowid, session)) in rows.iter().enumerate() {
        tx.execute(
            "INSERT INTO audit_log (rowid, id, timestamp, action, task_id, domain, operation, \
             session_id, success) VALUES (?1, ?2, ?3, 'list', 'system', 'session', 'list', ?4, 1)",
            rusqlite::params![
                rowid,
                format!("r{n}"),
                format!("2026-03-01T10:00:{:02}Z", n % 60),
                session
            ],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    path
}

/// Runs `sql` on the database at `path`, to make it odd.
fn execute(path: &Path, sql: &str) {
    Connection::open(path).unwrap().execute_batch(sql).unwrap();
}

fn read_whole(path: &Path, filter: &SessionFilter) -> Result<Vec<Session>, SourceError> {
    CleoDb
        .read(&Input::File(path), filter, &ReadOptions::default())
        .map(|read| read.sessions)
}

fn open(path: &Path) -> Result<Stream<'static>, SourceError> {
    CleoDb
        .open_stream(path, &SessionFilter::All, &ReadOptions::default(), None)
        .map(Option::unwrap)
}

/// The sessions of a stream's second pass, or the source's error.
fn drain(stream: Stream<'_>) -> Result<Vec<Session>, SourceError> {
    let mut sessions = Vec::new();
    match stream.map_into(&|s: Session| Ok::<_, ()>(s), &mut |s| sessions.push(s)) {
        Ok(_) => Ok(sessions),
        Err(crate::source::StreamError::Source(e)) => Err(e),
        Err(crate::source::StreamError::Session(())) => unreachable!("nothing fails"),
    }
}

fn read_streamed(path: &Path) -> Result<Vec<Session>, SourceError> {
    drain(open(path)?)
}

/// One `?` per named session once failed past SQLite's 32,766 parameters.
#[test]
fn more_named_sessions_than_sqlite_takes_parameters_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(dir.path(), &[(1, "a"), (2, "b"), (3, "a"), (4, "40000")]);
    let mut named: Vec<String> = (0..40_000).map(|k| k.to_string()).collect();
    named.extend(["a".to_owned(), "b".to_owned()]);
    let sessions = read_whole(&path, &SessionFilter::only(named)).unwrap();
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(sessions[0].entries.len(), 2);
    let some = read_whole(&path, &SessionFilter::only(["40000", "b"])).unwrap();
    let ids: Vec<&str> = some.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["b", "40000"]);
    assert!(
        read_whole(&path, &SessionFilter::only(Vec::<String>::new()))
            .unwrap()
            .is_empty()
    );
}

/// Named sessions read only their own rows (docs/sources.md says so): a malformed row of
/// another session is not seen, while `--all` reads it and stops.
#[test]
fn a_malformed_row_of_another_session_stops_all_but_not_a_named_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(dir.path(), &[(1, "good"), (2, "bad"), (3, "good")]);
    execute(
        &path,
        "UPDATE audit_log SET timestamp = 'yesterday' WHERE rowid = 2",
    );
    let named = read_whole(&path, &SessionFilter::only(["good"])).unwrap();
    assert_eq!(named.len(), 1);
    assert_eq!(named[0].entries.len(), 2);
    for err in [
        read_whole(&path, &SessionFilter::All).unwrap_err(),
        read_streamed(&path).unwrap_err(),
        read_whole(&path, &SessionFilter::only(["bad"])).unwrap_err(),
    ] {
        assert!(
            matches!(err, SourceError::BadRow { ref row, .. } if row == "r1"),
            "{err}"
        );
    }
}

#[test]
fn a_view_or_a_without_rowid_audit_log_is_refused_in_one_line() {
    let table = DDL.replacen("audit_log", "audit_rows", 1);
    for (ddl, needle) in [
        (
            format!("{table}; CREATE VIEW audit_log AS SELECT * FROM audit_rows"),
            "its `audit_log` is a view",
        ),
        (
            format!("{DDL} WITHOUT ROWID"),
            "its `audit_log` table is `WITHOUT ROWID`",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.db");
        execute(&path, &ddl);
        let whole = read_whole(&path, &SessionFilter::only(["s"])).unwrap_err();
        let streamed = open(&path).err().unwrap();
        for err in [whole.to_string(), streamed.to_string()] {
            assert!(err.contains(needle), "{err}");
            assert!(!err.contains('\n') && !err.ends_with('.'), "{err}");
        }
    }
}

/// SQLite keeps any value in any column: a value of the wrong kind was named by its index
/// in rusqlite's words (`column 6: Invalid column type Blob at index: 6, name: …`).
#[test]
fn a_value_of_the_wrong_kind_is_named_by_its_column_and_value() {
    for (set, message) in [
        (
            "details_json = X'7B7D00'",
            "`details_json` is a BLOB of 3 bytes, not text",
        ),
        (
            "session_id = X'7331'",
            "`session_id` is a BLOB of 2 bytes, not text",
        ),
        (
            "operation = CAST(X'66FF' AS TEXT)",
            "`operation` is not UTF-8 text: invalid utf-8 sequence of 1 bytes from index 1",
        ),
        (
            "duration_ms = 'fast'",
            "`duration_ms` is the text `fast`, not a number of milliseconds from -9007199254740991 to 9007199254740991",
        ),
        (
            "success = 'yes'",
            "`success` is the text `yes`, not an integer",
        ),
        (
            "success = 1.5",
            "`success` is the real `1.5`, not an integer",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), &[(1, "s")]);
        execute(&path, &format!("UPDATE audit_log SET {set} WHERE rowid = 1"));
        for err in [
            read_whole(&path, &SessionFilter::All).unwrap_err(),
            read_streamed(&path).unwrap_err(),
        ] {
            assert_eq!(
                err.to_string(),
                format!("`{}`: audit_log row `r0`: {message}", path.display()),
                "{set}"
            );
        }
    }
}

/// What `each` makes of every entry of a read with `checked`, whole and streamed, or the
/// read's error.
fn both_ways<T>(
    path: &Path,
    checked: FieldsRead,
    each: impl Fn(&crate::entry::Entry) -> T,
) -> [Result<Vec<T>, String>; 2] {
    let options = ReadOptions {
        checked,
        ..ReadOptions::default()
    };
    let of = |read: Result<Vec<Session>, SourceError>| {
        read.map(|sessions| {
            sessions
                .iter()
                .flat_map(|s| s.entries.iter())
                .map(&each)
                .collect()
        })
        .map_err(|e| e.to_string())
    };
    let whole = CleoDb
        .read(&Input::File(path), &SessionFilter::All, &options)
        .map(|read| read.sessions);
    let streamed = CleoDb
        .open_stream(path, &SessionFilter::All, &options, None)
        .and_then(|stream| drain(stream.expect("`--all` streams")));
    [of(whole), of(streamed)]
}

/// The durations of a read with `checked`, whole and streamed, or the read's error.
fn durations(path: &Path, checked: FieldsRead) -> [Result<Vec<f64>, String>; 2] {
    both_ways(path, checked, |e| e.result.duration)
}

/// A `duration_ms` of 1e308 was read as given, and two of them added up to infinity for a
/// script totalling a session's durations (which then compared it false with any budget);
/// one beyond 2^53 - 1 was rounded without a word; and a text one was refused even by
/// `cleo-v1`, which reads no duration. The column is now read as the JSONL log of the same
/// entries reads `result.duration`.
#[test]
fn a_duration_that_is_no_duration_is_refused_only_by_a_pack_that_reads_durations() {
    let wanted = "not a number of milliseconds from -9007199254740991 to 9007199254740991";
    let all_but_durations = FieldsRead::PARAMS
        .with(FieldsRead::EXIT_CODE)
        .with(FieldsRead::ERROR)
        .with(FieldsRead::METADATA);
    for (value, found) in [
        ("9007199254740993", "the integer `9007199254740993`"),
        ("9007199254740992", "the integer `9007199254740992`"),
        ("-9007199254740992", "the integer `-9007199254740992`"),
        ("1e308", "the real `1e+308`"),
        ("9e999", "the real `Infinity`"),
        ("-9e999", "the real `-Infinity`"),
        ("'fast'", "the text `fast`"),
        ("X'00'", "a BLOB of 1 bytes"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), &[(1, "s"), (2, "s")]);
        execute(
            &path,
            &format!(
                "UPDATE audit_log SET duration_ms = 7 WHERE rowid = 1; \
                 UPDATE audit_log SET duration_ms = {value} WHERE rowid = 2"
            ),
        );
        let refused = Err(format!(
            "`{}`: audit_log row `r1`: `duration_ms` is {found}, {wanted}",
            path.display()
        ));
        assert_eq!(
            durations(&path, FieldsRead::DURATION),
            [refused.clone(), refused],
            "{value}"
        );
        assert_eq!(
            durations(&path, all_but_durations),
            [Ok(vec![7.0, 0.0]), Ok(vec![7.0, 0.0])],
            "{value}"
        );
    }
    // Up to the bound, negative, fractional or none, durations are read as they are.
    let dir = tempfile::tempdir().unwrap();
    let path = database(dir.path(), &[(1, "s"), (2, "s"), (3, "s"), (4, "s")]);
    execute(
        &path,
        "UPDATE audit_log SET duration_ms = 9007199254740991 WHERE rowid = 1; \
             UPDATE audit_log SET duration_ms = -9007199254740991 WHERE rowid = 2; \
             UPDATE audit_log SET duration_ms = 1.5 WHERE rowid = 3",
    );
    let read = vec![9_007_199_254_740_991.0, -9_007_199_254_740_991.0, 1.5, 0.0];
    for checked in [FieldsRead::ALL, FieldsRead::NONE] {
        assert_eq!(
            durations(&path, checked),
            [Ok(read.clone()), Ok(read.clone())]
        );
    }
}

/// Each entry's params as JSON, of a read with `checked`, whole and streamed, or the read's
/// error.
fn params_read(path: &Path, checked: FieldsRead) -> [Result<Vec<String>, String>; 2] {
    both_ways(path, checked, |e| serde_json::to_string(&e.params).unwrap())
}

/// A database of two rows of session `s`: the first with params `{"a":1}`, the second with
/// `details_json` set to the SQL expression `value`.
fn database_with_details(dir: &Path, value: &str) -> PathBuf {
    let path = database(dir, &[(1, "s"), (2, "s")]);
    execute(
        &path,
        &format!(
            "UPDATE audit_log SET details_json = '{{\"a\":1}}' WHERE rowid = 1; \
             UPDATE audit_log SET details_json = {value} WHERE rowid = 2"
        ),
    );
    path
}

/// A `details_json` that holds no params object (JSON of another kind, no JSON, not text)
/// was refused even by a pack that reads no params, while the JSONL log of the same entries
/// left the value out. A pack that reads params (`cleo-v1`) still refuses it, naming the row.
#[test]
fn a_details_json_that_holds_no_params_is_refused_only_by_a_pack_that_reads_params() {
    let all_but_params = FieldsRead::DURATION
        .with(FieldsRead::EXIT_CODE)
        .with(FieldsRead::ERROR)
        .with(FieldsRead::METADATA);
    for (value, message) in [
        ("'5'", "`details_json` holds a number, not a JSON object"),
        ("'[1]'", "`details_json` holds an array, not a JSON object"),
        (
            "'\"x\"'",
            "`details_json` holds a string, not a JSON object",
        ),
        (
            "'true'",
            "`details_json` holds a boolean, not a JSON object",
        ),
        (
            "'{broken'",
            "`details_json` is not JSON: key must be a string at line 1 column 2",
        ),
        (
            "'slow'",
            "`details_json` is not JSON: expected value at line 1 column 1",
        ),
        ("X'7B7D'", "`details_json` is a BLOB of 2 bytes, not text"),
        (
            "CAST(X'7BFF' AS TEXT)",
            "`details_json` is not UTF-8 text: invalid utf-8 sequence of 1 bytes from index 1",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = database_with_details(dir.path(), value);
        let refused = Err(format!(
            "`{}`: audit_log row `r1`: {message}",
            path.display()
        ));
        for checked in [FieldsRead::PARAMS, FieldsRead::ALL] {
            assert_eq!(
                params_read(&path, checked),
                [refused.clone(), refused.clone()],
                "{value}"
            );
        }
        let unread = Ok(vec![r#"{"a":1}"#.to_owned(), "{}".to_owned()]);
        for checked in [all_but_params, FieldsRead::NONE] {
            assert_eq!(
                params_read(&path, checked),
                [unread.clone(), unread.clone()],
                "{value}"
            );
        }
    }
    // No params, however written, is none for every pack.
    for value in ["NULL", "''", "'{}'", "'null'", "' { } '"] {
        let dir = tempfile::tempdir().unwrap();
        let path = database_with_details(dir.path(), value);
        let read = Ok(vec![r#"{"a":1}"#.to_owned(), "{}".to_owned()]);
        for checked in [FieldsRead::ALL, FieldsRead::NONE] {
            assert_eq!(
                params_read(&path, checked),
                [read.clone(), read.clone()],
                "{value}"
            );
        }
    }
}

/// The same JSON as a log's `params` and as a row's `details_json` is refused by the same
/// packs: the two readers of CLEO's entries keep one rule for fields a pack does not read.
#[test]
fn a_details_json_is_checked_for_the_packs_that_check_a_logs_params() {
    for json in [
        "5",
        "[1]",
        "\"x\"",
        "true",
        "null",
        "{}",
        r#"{"a":{"b":[1]}}"#,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = database_with_details(dir.path(), &format!("'{json}'"));
        let line = format!(
            r#"{{"timestamp":"2026-03-01T10:00:00Z","sessionId":"s","domain":"session","operation":"list","params":{json},"result":{{"success":true}}}}"#
        );
        for checked in [FieldsRead::PARAMS, FieldsRead::NONE] {
            let logged = crate::source::cleo_jsonl::parse_line(
                line.as_bytes(),
                Some(&line),
                checked,
                &mut Default::default(),
            )
            .map(|e| serde_json::to_string(&e.params).unwrap());
            let [whole, streamed] = params_read(&path, checked);
            assert_eq!(whole, streamed, "{json}");
            match (logged, whole) {
                (Ok(logged), Ok(rows)) => assert_eq!(rows[1], logged, "{json}"),
                (Err(_), Err(_)) => {}
                (logged, rows) => panic!("{json}: the log read {logged:?}, the database {rows:?}"),
            }
        }
    }
}

/// A database in `dir` whose `audit_log` declares `columns` without a type (so SQLite keeps
/// the values written there as they are: `7` an integer, `1.0` a real), holding one row of
/// session `s` with `set` applied.
fn database_untyped(dir: &Path, columns: &[&str], set: &str) -> PathBuf {
    let path = dir.join("tasks.db");
    let mut ddl = DDL.to_owned();
    for column in columns {
        let typed = [" text", " integer"]
            .iter()
            .map(|ty| format!(" {column}{ty}"))
            .find(|typed| ddl.contains(typed.as_str()))
            .unwrap();
        ddl = ddl.replacen(&typed, &format!(" {column}"), 1);
    }
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(&ddl).unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO audit_log (id, timestamp, action, task_id, domain, operation, session_id, \
         success) VALUES ('r0', '2026-03-01T10:00:00Z', 'list', 'system', 'session', 'list', \
         's', 1); UPDATE audit_log SET {set}"
    ))
    .unwrap();
    path
}

/// CLEO's reader tests `success === 1`. Where `success` has no integer affinity, SQLite keeps
/// `1.0` a real, which JavaScript reads as 1, a success: `grade` refused the row (`success` is
/// the real `1`, not an integer).
#[test]
fn an_integral_real_success_is_read_as_cleos_success_eq_1_reads_it() {
    for (value, success) in [
        ("1.0", true),
        ("0.0", false),
        ("-0.0", false),
        ("2.0", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = database_untyped(dir.path(), &["success"], &format!("success = {value}"));
        let kind: String = Connection::open(&path)
            .unwrap()
            .query_row("SELECT typeof(success) FROM audit_log", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kind, "real", "{value}");
        assert_eq!(
            both_ways(&path, FieldsRead::ALL, |e| (
                e.result.success,
                e.result.exit_code
            )),
            [
                Ok(vec![(success, i64::from(!success))]),
                Ok(vec![(success, i64::from(!success))])
            ],
            "{value}"
        );
    }
    // A fraction is neither 1 nor 0: still refused, naming the row.
    let dir = tempfile::tempdir().unwrap();
    let path = database_untyped(dir.path(), &["success"], "success = 0.5");
    let refused = Err(format!(
        "`{}`: audit_log row `r0`: `success` is the real `0.5`, not an integer",
        path.display()
    ));
    assert_eq!(
        both_ways(&path, FieldsRead::ALL, |e| e.result.success),
        [refused.clone(), refused]
    );
}

/// Where `task_id`, `actor`, `source` or `gateway` has no text affinity, SQLite keeps a
/// number written there a number, and CLEO's reader hands it to its grader as one (its flag
/// names `taskId: 7`): `grade` refused the row (`task_id` is the integer `7`, not text).
#[test]
fn a_metadata_column_holding_a_number_is_read_as_that_number_as_cleo_reads_it() {
    let columns = ["task_id", "actor", "source", "gateway"];
    let dir = tempfile::tempdir().unwrap();
    let path = database_untyped(
        dir.path(),
        &columns,
        "task_id = 7, actor = 1.5, source = 0, gateway = 1e21",
    );
    let metadata = |e: &crate::entry::Entry| serde_json::to_string(&e.metadata).unwrap();
    let read = Ok(vec![
        r#"{"taskId":7,"userId":1.5,"source":0,"gateway":1e+21}"#.to_owned(),
    ]);
    assert_eq!(
        both_ways(&path, FieldsRead::ALL, metadata),
        [read.clone(), read]
    );
    // `system` and `unknown` still name no task; a number never does, as in CLEO.
    let dir = tempfile::tempdir().unwrap();
    let path = database_untyped(dir.path(), &columns, "task_id = 'unknown'");
    assert_eq!(
        both_ways(&path, FieldsRead::ALL, |e| e.metadata.task_id.is_none()),
        [Ok(vec![true]), Ok(vec![true])]
    );
    // A number JavaScript cannot hold exactly (node:sqlite throws on it) is refused.
    for (set, found) in [
        (
            "task_id = 9007199254740992",
            "`task_id` is the integer `9007199254740992`",
        ),
        ("gateway = 9e999", "`gateway` is the real `Infinity`"),
        ("actor = X'00'", "`actor` is a BLOB of 1 bytes"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = database_untyped(dir.path(), &columns, set);
        let refused = Err(format!(
            "`{}`: audit_log row `r0`: {found}, not text",
            path.display()
        ));
        assert_eq!(
            both_ways(&path, FieldsRead::ALL, metadata),
            [refused.clone(), refused],
            "{set}"
        );
    }
}

/// CLEO's reader orders a session's rows by the text of `timestamp`; `grade` by instant.
/// Where spellings mix the two orders differ, and CLEO's grader may grade the session
/// otherwise: `grade` said nothing of it.
#[test]
fn rows_whose_instant_order_is_not_their_timestamp_text_order_are_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(
        dir.path(),
        &[(1, "s"), (2, "s"), (3, "t"), (4, "t"), (5, "u"), (6, "u")],
    );
    execute(
        &path,
        "UPDATE audit_log SET timestamp = '2026-03-01 10:00:05' WHERE rowid = 1; \
             UPDATE audit_log SET timestamp = '2026-03-01T10:00:01Z' WHERE rowid = 2; \
             UPDATE audit_log SET timestamp = '2026-03-01T12:00:00+02:00' WHERE rowid = 3; \
             UPDATE audit_log SET timestamp = '2026-03-01T11:00:00Z' WHERE rowid = 4",
    );
    let wanted = format!(
        "{}: session `s`: its rows are graded in order of instant (`2026-03-01T10:00:01Z` \
         before `2026-03-01 10:00:05`), but CLEO's reader orders them by the text of \
         `timestamp`, so CLEO's own grade of it may differ (and 1 more session)",
        path.display()
    );
    let whole = CleoDb
        .read(
            &Input::File(&path),
            &SessionFilter::All,
            &ReadOptions::default(),
        )
        .unwrap();
    let texts = |warnings: &[SourceWarning]| -> Vec<String> {
        warnings.iter().map(ToString::to_string).collect()
    };
    assert_eq!(texts(&whole.warnings), std::slice::from_ref(&wanted));
    let stream = open(&path).unwrap();
    let delivered = stream
        .map_into(&|s: Session| Ok::<_, ()>(s), &mut |_| {})
        .unwrap_or_else(|_| panic!("the stream fails"));
    assert_eq!(texts(&delivered.warnings), [wanted]);
    // Named sessions: only those read are told of; rows in both orders, none.
    let only = |ids: &[&str]| {
        let filter = SessionFilter::Only(ids.iter().map(|&i| i.to_owned()).collect());
        let read = CleoDb
            .read(&Input::File(&path), &filter, &ReadOptions::default())
            .unwrap();
        texts(&read.warnings)
    };
    assert_eq!(
        only(&["t"]),
        [format!(
            "{}: session `t`: its rows are graded in order of instant (`2026-03-01T12:00:00+02:00` \
             before `2026-03-01T11:00:00Z`), but CLEO's reader orders them by the text of \
             `timestamp`, so CLEO's own grade of it may differ",
            path.display()
        )]
    );
    assert_eq!(only(&["u"]), Vec::<String>::new());
}

/// CLEO writes `details_json` with `JSON.stringify`, which writes `\ud83d` alone for a string
/// cut inside a character; serde_json refused it, and a pack that reads params refused the
/// whole database. Read with U+FFFD, said once, whole, streamed and for named sessions.
#[test]
fn a_lone_surrogate_in_details_json_is_read_as_the_replacement_character() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(dir.path(), &[(1, "s"), (2, "s"), (3, "t")]);
    execute(
        &path,
        r#"UPDATE audit_log SET details_json = '{"title":"a\ud83d","n":[1]}' WHERE rowid = 2;
               UPDATE audit_log SET details_json = '{"title":"\udc00"}' WHERE rowid = 3"#,
    );
    let wanted = |rows: u64| {
        let plural = if rows == 1 { "" } else { "s" };
        format!(
            "{}: audit_log row `r1`: `details_json`: {} ({rows} row{plural})",
            path.display(),
            crate::json::LONE_SURROGATE_READ
        )
    };
    let texts = |warnings: &[SourceWarning]| -> Vec<String> {
        warnings.iter().map(ToString::to_string).collect()
    };
    let titles = |sessions: &[Session]| -> Vec<String> {
        sessions
            .iter()
            .flat_map(|s| &s.entries)
            .filter_map(|e| e.params.get("title").map(ToString::to_string))
            .collect()
    };
    let options = ReadOptions {
        checked: FieldsRead::ALL,
        ..ReadOptions::default()
    };
    let whole = CleoDb
        .read(&Input::File(&path), &SessionFilter::All, &options)
        .unwrap();
    assert_eq!(texts(&whole.warnings), [wanted(2)]);
    assert_eq!(titles(&whole.sessions), ["\"a\u{fffd}\"", "\"\u{fffd}\""]);
    let stream = CleoDb
        .open_stream(&path, &SessionFilter::All, &options, None)
        .unwrap()
        .unwrap();
    let mut streamed = Vec::new();
    let delivered = stream
        .map_into(&|s: Session| Ok::<_, ()>(s), &mut |s| streamed.push(s))
        .unwrap_or_else(|_| panic!("the stream fails"));
    assert_eq!(texts(&delivered.warnings), [wanted(2)]);
    assert_eq!(titles(&streamed), titles(&whole.sessions));
    let named = CleoDb
        .read(
            &Input::File(&path),
            &SessionFilter::Only(["s".to_owned()].into_iter().collect()),
            &options,
        )
        .unwrap();
    assert_eq!(texts(&named.warnings), [wanted(1)]);
}

/// Rows of every kind a projection treats apart: params kept, skipped (nested, escaped, with
/// an exponent serde must read, with a lone surrogate), none; durations; error texts, one
/// naming a missing thing; successes and failures.
fn database_for_projections(dir: &Path) -> PathBuf {
    let path = database(
        dir,
        &[(1, "s"), (2, "s"), (3, "t"), (4, "s"), (5, "t"), (6, "u")],
    );
    execute(
        &path,
        r#"UPDATE audit_log SET details_json = '{"title":"A","description":"","parent":"T1","other":{"deep":[1,{"x":"y"}]},"q":"a\"b\\"}', duration_ms = 12 WHERE rowid = 1;
           UPDATE audit_log SET details_json = '{"note":"caf\u00e9","title":"B"}', success = 0, error_message = 'E_NOT_FOUND: task T9' WHERE rowid = 2;
           UPDATE audit_log SET details_json = '{"n":1e5,"title":"C"}', duration_ms = 1.5, success = 0, error_message = 'boom' WHERE rowid = 3;
           UPDATE audit_log SET details_json = '{"title":"D","w":"\ud83d"}' WHERE rowid = 4;
           UPDATE audit_log SET details_json = NULL, duration_ms = 7 WHERE rowid = 5;
           UPDATE audit_log SET details_json = '{"taskId":"T3"}', success = 0, error_message = 'Task not found' WHERE rowid = 6"#,
    );
    path
}

/// Issue 47: a `tasks.db` read for a pack is read only for what it reads (`duration_ms` and
/// `details_json` not asked of SQLite when not kept, of params only the keys kept, the error
/// text kept only when read), and every field it keeps is what the read of everything gives,
/// whole, streamed and for named sessions; exit codes, which come from the error text, too.
#[test]
fn a_read_for_a_projection_keeps_every_kept_field_as_the_whole_read_reads_it() {
    use crate::field::{Field, Projection};
    let dir = tempfile::tempdir().unwrap();
    let path = database_for_projections(dir.path());
    let sessions = |options: &ReadOptions| -> [Vec<Session>; 3] {
        let whole = CleoDb
            .read(&Input::File(&path), &SessionFilter::All, options)
            .unwrap()
            .sessions;
        let streamed = drain(
            CleoDb
                .open_stream(&path, &SessionFilter::All, options, None)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let named = CleoDb
            .read(
                &Input::File(&path),
                &SessionFilter::only(["t", "u"]),
                options,
            )
            .unwrap()
            .sessions;
        [whole, streamed, named]
    };
    let everything = sessions(&ReadOptions::default());
    assert_eq!(everything[0].len(), 3);
    let title = Projection::of_field(&Field::Params(vec!["title".to_owned()]));
    let projections = [
        Projection::ALL,
        crate::load_pack("cleo-v1", &[]).unwrap().projection(),
        Projection::of_fields(FieldsRead::NONE),
        Projection::of_fields(FieldsRead::EXIT_CODE.with(FieldsRead::METADATA)),
        title.clone(),
        title.with(&Projection::of_fields(
            FieldsRead::ERROR.with(FieldsRead::DURATION),
        )),
    ];
    for kept in projections {
        let options = ReadOptions {
            checked: kept.fields(),
            kept: kept.clone(),
            ..ReadOptions::default()
        };
        let skim = Kept::new(&kept, options.checked);
        for (read, all) in sessions(&options).iter().zip(&everything) {
            assert_eq!(read.len(), all.len(), "{kept:?}");
            for (a, b) in read.iter().zip(all) {
                assert_eq!(a.id, b.id);
                let project = |s: &Session| -> Vec<Entry> {
                    s.entries
                        .iter()
                        .map(|e| crate::source::cleo_jsonl::projected(e, skim))
                        .collect()
                };
                assert_eq!(project(a), project(b), "{kept:?}");
                // What is not kept is not built (params a skim declines are read whole).
                for e in &a.entries {
                    assert!(skim.duration() || e.result.duration == 0.0, "{kept:?}");
                    assert!(skim.error() || e.error.is_none(), "{kept:?}");
                    if matches!(skim.params(), KeptParams::Skipped) {
                        assert!(e.params.is_empty(), "{kept:?}");
                    }
                }
            }
        }
    }
}

/// What SQLite is asked for: a column no field kept reads is asked for as `NULL`, so SQLite
/// hands over no value of it.
#[test]
fn columns_of_fields_a_projection_leaves_out_are_not_asked_of_sqlite() {
    use crate::field::Projection;
    let columns = |kept: &Projection| entry_columns(true, Kept::new(kept, kept.fields()));
    let all = columns(&Projection::ALL);
    assert!(
        all.contains("details_json") && all.contains("duration_ms"),
        "{all}"
    );
    let none = columns(&Projection::of_fields(FieldsRead::NONE));
    assert!(
        !none.contains("details_json") && !none.contains("duration_ms"),
        "{none}"
    );
    assert!(
        none.contains("error_message"),
        "exit codes come from it: {none}"
    );
    let cleo = columns(&crate::load_pack("cleo-v1", &[]).unwrap().projection());
    assert!(
        cleo.contains("details_json") && !cleo.contains("duration_ms"),
        "{cleo}"
    );
    assert_eq!(none.split(", ").count(), ENTRY_COLUMNS.len(), "{none}");
}

mod streaming;
