//! The formats CI reads (issue 48, item 3): `--format csv`, `--format junit` and `--format
//! markdown`, written by the engine's row sinks in both delivery paths (a whole source
//! streamed, named sessions read whole); `-q/--quiet`; bare `grade` prints its usage.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;

const EXAMPLE: &str = "examples/cleo-audit.jsonl";
const NOTHING_TO_GRADE: &str =
    "rubrics/claude-code-v1/tests/real/claude_code_transcripts/synthetic/daaain__test_data/session_b.jsonl";

fn graded(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stdout(&out)
}

/// A CLEO log whose session ids hold what each format must escape: a comma and quotes
/// (CSV), markup and a pipe (Markdown), `<`, `&` and a control character XML cannot hold.
fn odd_ids_log(dir: &std::path::Path) -> std::path::PathBuf {
    let ids = [
        "plain",
        "a,\"quoted\" id",
        "two\nlines|<b>bold</b> & *stars* `tick`",
        "esc\u{1b}[31mred\u{0}",
    ];
    let mut log = String::new();
    for id in ids {
        let line = serde_json::json!({
            "timestamp": "2026-03-01T00:00:00Z", "sessionId": id, "domain": "tasks",
            "operation": "add", "params": {"title": "x"}, "result": {"success": true}
        });
        log.push_str(&line.to_string());
        log.push('\n');
    }
    let path = dir.join("odd.jsonl");
    std::fs::write(&path, log).unwrap();
    path
}

#[test]
fn csv_junit_and_markdown_of_a_run_as_ci_reads_them() {
    for format in ["csv", "junit", "markdown"] {
        let text = graded(&[
            "--rubric",
            "cleo-v1",
            "--source",
            EXAMPLE,
            "--all",
            "--no-record",
            "--format",
            format,
        ]);
        insta::assert_snapshot!(format!("format_{format}"), text);
    }
}

/// The streamed path (`--all` over a log) and the whole-read one (named sessions) write the
/// same bytes: the head is made after the rows in both.
#[test]
fn row_formats_are_the_same_streamed_and_read_whole() {
    for format in ["csv", "junit", "markdown"] {
        let streamed = graded(&[
            "--rubric",
            "cleo-v1",
            "--source",
            EXAMPLE,
            "--all",
            "--no-record",
            "--format",
            format,
        ]);
        let named = graded(&[
            "--rubric",
            "cleo-v1",
            "--source",
            EXAMPLE,
            "--no-record",
            "--format",
            format,
            "session-demo-good",
            "session-demo-sloppy",
        ]);
        assert_eq!(streamed, named, "{format}");
    }
}

#[test]
fn csv_quotes_fields_as_rfc_4180_says_with_a_column_per_dimension() {
    let dir = tempfile::tempdir().unwrap();
    let log = odd_ids_log(dir.path());
    let text = graded(&[
        "--rubric",
        "cleo-v1",
        "--source",
        log.to_str().unwrap(),
        "--all",
        "--no-record",
        "--format",
        "csv",
    ]);
    assert!(text.ends_with("\r\n"), "records end with CRLF");
    // Read back by the rules of RFC 4180: every record has the header's fields, and the
    // session ids come back as they were.
    let records = parse_csv(&text);
    let header = &records[0];
    assert_eq!(&header[..3], ["sessionId", "taskId", "source"]);
    assert!(
        header.contains(&"dimensions.taskHygiene".to_owned()),
        "{header:?}"
    );
    assert_eq!(header.last().map(String::as_str), Some("flags"));
    assert!(
        records.iter().all(|r| r.len() == header.len()),
        "{records:?}"
    );
    let ids: Vec<&str> = records[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        ids,
        [
            "plain",
            "a,\"quoted\" id",
            "two\nlines|<b>bold</b> & *stars* `tick`",
            "esc\u{1b}[31mred\u{0}"
        ]
    );
}

/// RFC 4180 read back: quoted fields may hold commas, doubled quotes and line breaks.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => {
                assert!(!matches!(c, '"' | '\n' | '\r'), "a bare {c:?} in {text:?}");
                field.push(c);
            }
        }
    }
    assert!(
        field.is_empty() && record.is_empty(),
        "the last record ends with CRLF"
    );
    records
}

#[test]
fn junit_escapes_every_text_and_skips_a_session_with_nothing_to_grade() {
    let dir = tempfile::tempdir().unwrap();
    let log = odd_ids_log(dir.path());
    let text = graded(&[
        "--rubric",
        "cleo-v1",
        "--source",
        log.to_str().unwrap(),
        "--all",
        "--no-record",
        "--format",
        "junit",
    ]);
    assert_well_formed_xml(&text);
    assert!(
        text.contains("name=\"two&#10;lines|&lt;b&gt;bold&lt;/b&gt; &amp; *stars* `tick`\""),
        "{text}"
    );
    assert!(text.contains("name=\"esc\\u{1b}[31mred\\u{0}\""), "{text}");
    assert!(text.contains("tests=\"4\" failures=\"4\""), "{text}");

    let text = graded(&[
        "--rubric",
        "claude-code-v1",
        "--source",
        NOTHING_TO_GRADE,
        "--all",
        "--format",
        "junit",
    ]);
    assert_well_formed_xml(&text);
    assert!(
        text.contains("tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\""),
        "{text}"
    );
    assert!(
        text.contains("<skipped message=\"nothing to grade: no dimension applies\"/>"),
        "{text}"
    );
}

/// A session fails its test case below `--fail-under` when it is given, else below the
/// pack's pass mark (C = 60 for CLEO); the exit status is `--fail-under`'s.
#[test]
fn junit_fails_a_case_below_fail_under_or_the_pass_band() {
    let junit = |extra: &[&str]| {
        let mut args = vec![
            "--rubric",
            "cleo-v1",
            "--source",
            EXAMPLE,
            "--all",
            "--no-record",
            "--format",
            "junit",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let out = junit(&[]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("failures=\"1\""));
    assert!(stdout(&out).contains("message=\"20/100 (20%) · grade F: below 60%\""));
    let out = junit(&["--fail-under", "10"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("failures=\"0\""), "{}", stdout(&out));
    let out = junit(&["--fail-under", "100"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("failures=\"1\""),
        "the report is written before the gate fails"
    );
}

#[test]
fn markdown_escapes_pipes_and_markup_and_counts_sessions_with_nothing_to_grade() {
    let dir = tempfile::tempdir().unwrap();
    let log = odd_ids_log(dir.path());
    let text = graded(&[
        "--rubric",
        "cleo-v1",
        "--source",
        log.to_str().unwrap(),
        "--all",
        "--no-record",
        "--format",
        "markdown",
    ]);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
    let cells = |row: &str| row.replace("\\|", "").matches('|').count();
    assert!(rows.iter().all(|r| cells(r) == cells(rows[0])), "{text}");
    assert!(
        text.contains("| two lines\\|&lt;b&gt;bold&lt;/b&gt; &amp; \\*stars\\* \\`tick\\` |"),
        "{text}"
    );
    assert!(text.contains("| esc\\u{1b}\\[31mred\\u{0} |"), "{text}");

    let text = graded(&[
        "--rubric",
        "claude-code-v1",
        "--source",
        NOTHING_TO_GRADE,
        "--all",
        "--format",
        "markdown",
    ]);
    assert!(text.contains("**0 sessions graded** · 0 below the pass mark of 60% · 1 with nothing to grade (left out of the mean)"), "{text}");
}

#[test]
fn quiet_prints_the_results_and_errors_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo_root().join(EXAMPLE), dir.path().join("audit.jsonl")).unwrap();
    std::fs::write(dir.path().join("bad.jsonl"), "{not json\n").unwrap();
    let args = [
        "--rubric",
        "cleo-v1",
        "--source",
        "audit.jsonl",
        "--all",
        "--format",
        "csv",
    ];
    let loud = run_in(dir.path(), &args);
    assert!(
        stderr(&loud).contains("recorded 2 grades"),
        "{}",
        stderr(&loud)
    );
    let quiet = run_in(dir.path(), &[&args[..], &["-q"]].concat());
    assert_eq!(code(&quiet), 0);
    assert_eq!(stderr(&quiet), "");
    assert_eq!(stdout(&quiet), stdout(&loud));
    // Errors are still said.
    let out = run_in(
        dir.path(),
        &[
            "-q",
            "--rubric",
            "cleo-v1",
            "--source",
            "bad.jsonl",
            "--all",
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("error[E102]: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bare_grade_prints_its_usage() {
    let out = run(&[]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("Usage: grade [OPTIONS] [SESSION]..."),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("--format <FORMAT>"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn formats_only_results_are_written_in_are_refused_where_there_are_none() {
    let out = run(&["--list", "--format", "junit"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error[E201]: `--list` prints recorded grades as `human`, `json` or `jsonl`, not `junit`\n"
    );
}

/// Well-formed XML, checked by hand (no XML crate is built for one test): tags nest and
/// close, attribute values are quoted without `<` or a bare quote, text holds no bare `<`,
/// every `&` starts a reference, and no character XML 1.0 forbids appears.
fn assert_well_formed_xml(text: &str) {
    let forbidden = |c: char| {
        (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || matches!(c, '\u{fffe}' | '\u{ffff}')
    };
    assert!(
        !text.chars().any(forbidden),
        "a character XML forbids: {text:?}"
    );
    let body = text
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("an XML declaration");
    let mut open: Vec<String> = Vec::new();
    let mut rest = body;
    let references = |s: &str| {
        s.split('&').skip(1).all(|r| {
            [
                "amp;", "lt;", "gt;", "quot;", "apos;", "#10;", "#13;", "#9;",
            ]
            .iter()
            .any(|e| r.starts_with(e))
        })
    };
    while let Some(at) = rest.find('<') {
        assert!(references(&rest[..at]), "a bare `&` in {:?}", &rest[..at]);
        let end = rest[at..].find('>').map(|e| at + e).expect("a tag ends");
        let tag = &rest[at + 1..end];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop().as_deref(), Some(name), "closing tags match");
        } else {
            let name: String = tag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            assert!(!name.is_empty(), "a tag has a name: {tag:?}");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "attribute values are quoted: {tag:?}"
            );
            assert!(references(tag), "a bare `&` in {tag:?}");
            if !tag.ends_with('/') {
                open.push(name);
            }
        }
        rest = &rest[end + 1..];
    }
    assert!(
        rest.trim().is_empty() && open.is_empty(),
        "every tag is closed: {open:?}"
    );
}
