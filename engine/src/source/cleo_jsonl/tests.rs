//! Unit tests of the CLEO JSONL source: sessions, bad lines, projection and streaming.

use super::*;
use crate::entry::{MetaValue, Session};
use serde_json::Value;

/// Why a pack that reads every field refuses `line`.
fn refused(line: &[u8], text: Option<&str>) -> LineError {
    parse_line(line, text, FieldsRead::ALL, &mut Default::default()).unwrap_err()
}

#[test]
fn a_missing_field_is_named() {
    let err = parse_line(br#"{"timestamp":"2026-03-01T00:00:00Z","domain":"tasks","operation":"find","result":{"success":true}}"#, None, FieldsRead::ALL, &mut Default::default())
            .unwrap_err();
    assert!(
        err.message.contains("missing field `sessionId`"),
        "{}",
        err.message
    );
}

/// JSON that is no object was named in serde's words (`invalid length 0, expected
/// struct RawEntry with 8 elements`), and a list of an entry's fields in order was read
/// as an entry: each is named for what it is, and is no line still being written.
#[test]
fn a_line_that_is_json_but_no_object_is_named_for_what_it_is() {
    let fields = r#" ["2026-03-01T00:00:00Z","s","tasks","find",{},{"success":true},{},null]"#;
    for (line, kind) in [
        ("[]", "array"),
        ("[1]", "array"),
        (fields, "array"),
        ("\"x\"", "string"),
        ("5", "number"),
        ("null", "null"),
        ("true", "boolean"),
    ] {
        for text in [Some(line), None] {
            let err = refused(line.as_bytes(), text);
            assert_eq!(
                err,
                LineError {
                    message: format!("the line is a JSON {kind}, not an object"),
                    not_json: false,
                }
            );
        }
    }
    // A list cut off is a line still being written, as an object cut off is.
    let err = refused(b"[1,", None);
    assert!(err.not_json, "{}", err.message);
}

#[test]
fn a_line_behind_a_byte_order_mark_says_so() {
    let line = "\u{FEFF}{\"timestamp\":\"2026-03-01T00:00:00Z\",\"sessionId\":\"s\",\"domain\":\"tasks\",\"operation\":\"find\",\"result\":{\"success\":true}}";
    for text in [Some(line), None] {
        let err = refused(line.as_bytes(), text);
        assert!(err.not_json);
        assert!(
            err.message
                .contains("starts with a byte order mark (U+FEFF)"),
            "{}",
            err.message
        );
    }
}

/// `1e400` is JSON that serde_json cannot read into a float, and files under syntax
/// errors: a finished last line holding one was skipped as a line still being written.
#[test]
fn a_number_out_of_range_is_not_taken_for_a_line_still_being_written() {
    let line = br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","result":{"success":true,"duration":1e400}}"#;
    let err = parse_line(line, None, FieldsRead::NONE, &mut Default::default()).unwrap_err();
    assert!(!err.not_json, "{err:?}");
    assert!(
        err.message.contains("beyond what a 64-bit float holds"),
        "{}",
        err.message
    );
}

/// serde's own words for these named neither the field nor, for `result`, anything but
/// a Rust type (`expected struct RawOutcome`).
#[test]
fn a_required_field_of_another_kind_is_refused_by_name() {
    let cases = [
        (
            r#""timestamp":5"#,
            "field `timestamp` must be a string, not 5",
        ),
        (
            r#""sessionId":["s"]"#,
            "field `sessionId` must be a string, not an array",
        ),
        (
            r#""domain":null"#,
            "field `domain` must be a string, not null",
        ),
        (
            r#""operation":{}"#,
            "field `operation` must be a string, not an object",
        ),
        (
            r#""result":null"#,
            "field `result` must be an object, not null",
        ),
        (
            r#""result":"ok""#,
            "field `result` must be an object, not a string",
        ),
        (
            r#""result":{"success":1}"#,
            "field `result.success` must be a boolean, not 1",
        ),
        (
            r#""result":{"success":"true"}"#,
            "field `result.success` must be a boolean, not a string",
        ),
    ];
    for (field, message) in cases {
        let key = &field[..field.find(':').unwrap()];
        let mut parts = [
            r#""timestamp":"2026-03-01T00:00:00Z""#,
            r#""sessionId":"s""#,
            r#""domain":"d""#,
            r#""operation":"o""#,
            r#""result":{"success":true}"#,
        ];
        for part in parts.iter_mut() {
            if part.starts_with(key) {
                *part = field;
            }
        }
        let line = format!("{{{}}}", parts.join(","));
        for reads in [FieldsRead::ALL, FieldsRead::NONE] {
            let err = parse_line(line.as_bytes(), Some(&line), reads, &mut Default::default())
                .unwrap_err();
            assert!(
                err.message.starts_with(&format!("{message} (column ")),
                "{line}: {}",
                err.message
            );
            assert!(!err.not_json);
        }
    }
}

/// CLEO's grader reads lines with `JSON.parse`, which keeps a repeated key's last
/// value whatever the earlier ones were.
#[test]
fn a_repeated_field_keeps_its_last_value_and_is_named() {
    let head = r#"{"timestamp":"2026-03-01T00:00:00Z","domain":"d","operation":"o""#;
    let read = |rest: &str, reads| {
        let line = format!("{head},{rest}}}");
        let mut notes = LineNotes::default();
        let entry = parse_line(line.as_bytes(), Some(&line), reads, &mut notes);
        (entry, notes.repeated)
    };
    let (e, repeated) = read(
        r#""sessionId":"a","sessionId":"b","result":{"success":true}"#,
        FieldsRead::ALL,
    );
    assert_eq!(e.unwrap().session_id, "b");
    assert_eq!(repeated, Some("sessionId"));
    let (e, repeated) = read(
        r#""sessionId":"s","result":{"success":true,"exitCode":3,"success":false}"#,
        FieldsRead::ALL,
    );
    let e = e.unwrap();
    assert_eq!((e.result.success, e.result.exit_code), (false, 3));
    assert_eq!(repeated, Some("result.success"));
    // A value of the wrong kind first is no matter; last, it is the field's value.
    let (e, _) = read(
        r#""sessionId":7,"sessionId":"s","params":[1],"params":{"q":1},"result":{"success":true}"#,
        FieldsRead::ALL,
    );
    assert_eq!(e.unwrap().params["q"], 1);
    let (e, repeated) = read(
        r#""sessionId":"s","params":{"q":1},"params":[1],"result":{"success":true}"#,
        FieldsRead::ALL,
    );
    assert_eq!(
        e.unwrap_err().message,
        "field `params` must be an object, not an array"
    );
    assert_eq!(repeated, Some("params"));
    // The column of an error is the last value's (its `7`), in the line as written.
    let (e, _) = read(
        r#""sessionId":"s","sessionId":7,"result":{"success":true}"#,
        FieldsRead::NONE,
    );
    let e = e.unwrap_err();
    assert_eq!(
        e.message,
        "field `sessionId` must be a string, not 7 (column 94)"
    );
    assert!(!e.not_json);
}

/// A line refused for another reason is not told of as read with U+FFFD.
#[test]
fn a_malformed_line_with_a_lone_surrogate_is_refused_not_noted() {
    let mut notes = LineNotes::default();
    let line = br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"a\ud83d","domain":"d""#;
    assert!(parse_line(line, None, FieldsRead::ALL, &mut notes).is_err());
    assert_eq!(notes, LineNotes::default());
    let line = br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"a\ud83d","domain":"d","operation":"o","result":{"success":true}}"#;
    let entry = parse_line(line, None, FieldsRead::ALL, &mut notes).unwrap();
    assert_eq!(entry.session_id, "a\u{fffd}");
    assert!(notes.lone_surrogate);
}

/// serde meets a repeated field before the end of a line cut off while it was written,
/// which must still read as such a line, not as one that repeats a field.
#[test]
fn a_line_cut_off_after_a_repeated_field_is_not_json() {
    let line = br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"a","sessionId":"b","dom"#;
    let mut notes = LineNotes::default();
    let err = parse_line(line, None, FieldsRead::ALL, &mut notes).unwrap_err();
    assert!(err.not_json, "{err:?}");
    assert_eq!(
        err.message,
        "not valid JSON: EOF while parsing a string (column 72)"
    );
    assert_eq!(notes, LineNotes::default());
}

#[test]
fn defaults_follow_cleo() {
    let e = parse_line(br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"tasks","operation":"find","result":{"success":false}}"#, None, FieldsRead::ALL, &mut Default::default())
            .unwrap();
    assert_eq!(e.result.exit_code, 1);
    assert_eq!(e.metadata.source, MetaValue::from("mcp"));
    assert!(e.params.is_empty());
}

#[test]
fn metadata_is_read_as_from_map_reads_it() {
    let line = br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","result":{"success":true},"metadata":{"source":null,"taskId":"T1","x":{"y":1},"role":null,"gateway":"a","gateway":"query","userId":7}}"#;
    let e = parse_line(line, None, FieldsRead::ALL, &mut Default::default()).unwrap();
    let v: Value = serde_json::from_slice(line).unwrap();
    let map = v["metadata"].as_object().unwrap().clone();
    assert_eq!(e.metadata, Metadata::from_map(map, "mcp"));
    assert_eq!(e.metadata.gateway, Some(MetaValue::from("query")));
}
/// What a read gave: its warnings and sessions.
type Read = (Vec<SourceWarning>, Vec<Session>);

/// A log of 30,000 lines of about 200 bytes (about 6 MB: more than one chunk, many
/// pieces), line `n` (from 0) holding `fields(n)`'s session and result keys and params;
/// read whole and streamed, each read's warnings and sessions (id, entries).
fn read_both_ways(
    fields: impl Fn(u64) -> (String, String, String),
) -> (tempfile::TempDir, PathBuf, [Read; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let pad = "p".repeat(150);
    let mut text = String::new();
    for n in 0..30_000u64 {
        let (sessions, result, params) = fields(n);
        text.push_str(&format!(
                "{{\"timestamp\":\"2026-03-01T00:00:00Z\",{sessions},\"domain\":\"tasks\",\"operation\":\"show\",\"params\":{{{params},\"pad\":\"{pad}\"}},\"result\":{{{result}}}}}\n"
            ));
    }
    assert!(text.len() > chunks::CHUNK_BYTES);
    std::fs::write(&path, &text).unwrap();
    let options = ReadOptions::default();
    let read = CleoJsonl
        .read(&Input::File(&path), &SessionFilter::All, &options)
        .unwrap();
    assert_eq!(read.skipped_lines, 0);
    let streamed = super::super::Registry::builtin()
        .map_sessions(&path, None, &SessionFilter::All, &options, None, |s| {
            Ok::<_, ()>(s)
        })
        .unwrap();
    assert_eq!(streamed.skipped_lines, 0);
    for line in text.lines().take(10) {
        assert_eq!(skim::skim_agrees_with_parse(line), Ok(true), "{line}");
    }
    let both = [
        (read.warnings, read.sessions),
        (streamed.warnings, streamed.results),
    ];
    (dir, path, both)
}

/// Lines that repeat a field, across pieces and chunks: one warning for the log, naming
/// the first and how many, whether the log is read whole or streamed; each entry in the
/// session it names last.
#[test]
fn repeated_fields_are_said_once_for_the_log_whether_read_whole_or_streamed() {
    let (_dir, path, both) = read_both_ways(|n| {
        let sessions = match n % 7_001 {
            1_000 => r#""sessionId":"b","sessionId":"a""#,
            _ => r#""sessionId":"a""#,
        };
        let success = match n % 9_001 {
            2_000 => r#""success":false,"success":true"#,
            _ => r#""success":true"#,
        };
        (
            sessions.to_owned(),
            success.to_owned(),
            format!("\"n\":{n}"),
        )
    });
    // Lines 1,001, 8,002, 15,003, 22,004 and 29,005 repeat `sessionId`; 2,001, 11,002,
    // 20,003 and 29,004 `result.success`.
    let expected = vec![SourceWarning {
            path: path.clone(),
            place: Place::Line(1_001),
            message: "key `sessionId` appears more than once; the last value is used, as CLEO's grader does (9 lines)".to_owned(),
        }];
    for (warnings, sessions) in both {
        assert_eq!(warnings, expected);
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].entries.len(), 30_000);
        assert!(sessions[0].entries.iter().all(|e| e.result.success));
    }
}

/// JavaScript's `JSON.stringify` writes `\ud83d` alone for a string cut inside a
/// character, and CLEO's grader reads the line; serde_json refused it, so the whole log
/// failed as "not valid JSON". Read with U+FFFD, said once, the session's own id too.
#[test]
fn lone_surrogates_are_read_as_the_replacement_character_and_said_once() {
    let (_dir, path, both) = read_both_ways(|n| {
        let (session, title) = match n % 10_007 {
            5 => (r"b\ud83d", r"x\udc00"),
            6 => ("a", r"\ud83d\ude00 \ud800"),
            _ => ("a", "t"),
        };
        (
            format!("\"sessionId\":\"{session}\""),
            "\"success\":true".to_owned(),
            format!("\"title\":\"{title}\""),
        )
    });
    // Lines 6, 7, 10,013, 10,014, 20,020 and 20,021.
    let expected = vec![SourceWarning {
        path: path.clone(),
        place: Place::Line(6),
        message: format!("{} (6 lines)", crate::json::LONE_SURROGATE_READ),
    }];
    for (warnings, sessions) in both {
        assert_eq!(warnings, expected);
        let counts: Vec<(&str, usize)> = sessions
            .iter()
            .map(|s| (s.id.as_str(), s.entries.len()))
            .collect();
        assert_eq!(counts, [("a", 29_997), ("b\u{fffd}", 3)]);
        let titles: Vec<&serde_json::Value> = sessions[0].entries[5..7]
            .iter()
            .filter_map(|e| e.params.get("title"))
            .collect();
        assert_eq!(titles, ["\u{1f600} \u{fffd}", "t"]);
    }
}

/// Each entry's origin is its line of the log, across pieces and chunks, blank and
/// skipped lines counted, whether the log is read whole or streamed.
#[test]
fn entries_name_the_line_they_were_read_from() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let pad = "p".repeat(150);
    let mut text = String::new();
    let mut line = 0u64;
    let mut expected = Vec::new();
    // About 6 MB: more than one chunk, many pieces.
    for n in 0..30_000u64 {
        line += 1;
        if n % 997 == 0 {
            text.push_str("   \n");
            line += 1;
        }
        if n % 1_499 == 0 {
            text.push_str("{not json}\n");
            line += 1;
        }
        let session = if n % 3 == 0 { "a" } else { "b" };
        text.push_str(&format!(
                "{{\"timestamp\":\"2026-03-01T00:00:00Z\",\"sessionId\":\"{session}\",\"domain\":\"tasks\",\"operation\":\"show\",\"params\":{{\"n\":{n},\"pad\":\"{pad}\"}},\"result\":{{\"success\":true}}}}\n"
            ));
        expected.push((n, line));
    }
    assert!(text.len() > chunks::CHUNK_BYTES);
    std::fs::write(&path, &text).unwrap();
    let options = ReadOptions {
        skip_bad_lines: true,
        ..ReadOptions::default()
    };
    let lines_of = |sessions: Vec<crate::entry::Session>| {
        let mut got: Vec<(u64, u64)> = sessions
            .iter()
            .flat_map(|s| &s.entries)
            .map(|e| {
                assert_eq!(e.origin.file().as_deref(), Some(&*path.to_string_lossy()));
                let Some(crate::entry::OriginKind::Line(line)) = e.origin.kind() else {
                    panic!("no line: {:?}", e.origin)
                };
                (e.params["n"].as_u64().unwrap(), line)
            })
            .collect();
        got.sort_unstable();
        got
    };
    let read = CleoJsonl
        .read(&Input::File(&path), &SessionFilter::All, &options)
        .unwrap();
    assert_eq!(read.skipped_lines, 21);
    assert_eq!(lines_of(read.sessions), expected);
    let streamed = super::super::Registry::builtin()
        .map_sessions(&path, None, &SessionFilter::All, &options, None, |s| {
            Ok::<_, ()>(s)
        })
        .unwrap();
    assert_eq!(lines_of(streamed.results), expected);
}

/// Chunks no longer count their lines; the reads that walk them do, and a line too long
/// to read, found after several chunks, is still named by its line.
#[test]
fn a_line_too_long_after_several_chunks_is_named_by_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let entry = format!(
            "{{\"timestamp\":\"2026-03-01T00:00:00Z\",\"sessionId\":\"a\",\"domain\":\"tasks\",\"operation\":\"show\",\"params\":{{\"pad\":\"{}\"}},\"result\":{{\"success\":true}}}}\n",
            "p".repeat(200)
        );
    let mut text = entry.repeat(40_000);
    text.push_str("\n  \n");
    assert!(text.len() > 2 * chunks::CHUNK_BYTES);
    text.push_str(&"x".repeat(chunks::MAX_LINE_BYTES + 1));
    std::fs::write(&path, &text).unwrap();
    let expected = "line 40003 is 64 MiB or longer";
    let whole = CleoJsonl
        .read(
            &Input::File(&path),
            &SessionFilter::All,
            &ReadOptions::default(),
        )
        .map(|_| ())
        .unwrap_err();
    assert!(whole.to_string().contains(expected), "{whole}");
    let streamed = super::super::Registry::builtin()
        .map_sessions(
            &path,
            None,
            &SessionFilter::All,
            &ReadOptions::default(),
            None,
            |s| Ok::<_, ()>(s.entries.len()),
        )
        .map(|_| ())
        .unwrap_err();
    assert!(format!("{streamed:?}").contains(expected), "{streamed:?}");
}
