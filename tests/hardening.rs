//! Regression tests for inputs an attacker or a careless user gives: each test is named after
//! the defect it guards against (issue 12), and fails on the code before its fix.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;

use common::*;

const EXAMPLE: &str = "examples/cleo-audit.jsonl";
const TRANSCRIPT: &str =
    "rubrics/claude-code-v1/tests/real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
const JUDGE: &str = "tests/fixtures/judge/judge.sh";

fn example() -> std::path::PathBuf {
    repo_root().join(EXAMPLE)
}

#[test]
fn a_judge_timeout_too_large_to_add_to_the_clock_is_a_usage_error() {
    for given in ["9223372036854775807", "0", "86401"] {
        let out = run(&[
            "--rubric",
            "langfuse-v1",
            "--source",
            TRANSCRIPT,
            "--all",
            "--judge-cmd",
            JUDGE,
            "--judge-timeout",
            given,
            "--no-record",
        ]);
        assert_eq!(code(&out), 2, "{given}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("--judge-timeout"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_judge_that_leaves_a_child_holding_its_output_is_stopped_at_the_deadline() {
    // The judge answers, then leaves a child that keeps its stdout open for a minute: the
    // deadline must end the wait and kill the child with its group.
    let cmd = format!("sh {JUDGE}; (sleep 60 &)");
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        TRANSCRIPT,
        "--all",
        "--judge-cmd",
        &cmd,
        "--judge-timeout",
        "1",
        "--no-record",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "it exited but left a process holding its output open within 1 s (`--judge-timeout`)"
        ),
        "{}",
        stderr(&out)
    );
}

/// A judge command writing without end (`cat /dev/zero`) was read whole: 2.6 GB in 4 s, and
/// more until `--judge-timeout`. Its stdout and its stderr are capped (`--judge-max-output`,
/// 64 MiB by default) and the judge is stopped at the cap, failing its session by name.
#[test]
fn a_judge_command_printing_without_end_is_stopped_at_the_output_cap() {
    for (cmd, stream) in [("cat /dev/zero", "stdout"), ("cat /dev/zero >&2", "stderr")] {
        let out = run(&[
            "--rubric",
            "langfuse-v1",
            "--source",
            TRANSCRIPT,
            "--all",
            "--judge-cmd",
            cmd,
            "--judge-max-output",
            "1",
            "--no-record",
        ]);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "it printed more than 1 MiB on {stream} (`--judge-max-output`), and was stopped"
            )),
            "{}",
            stderr(&out)
        );
    }
}

/// A one-shot HTTP server answering every request with `response`; returns its address and
/// a count of the requests it saw.
fn answering(response: &'static str) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut writer = stream;
            let mut request = String::new();
            if reader.read_line(&mut request).unwrap_or(0) == 0 {
                continue;
            }
            let mut length = 0;
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap_or(0);
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            log.lock().unwrap().push(request.trim_end().to_owned());
            let _ = writer.write_all(response.as_bytes());
        }
    });
    (url, seen)
}

#[test]
fn push_counts_only_2xx_answers_as_stored_and_follows_no_redirect() {
    let dir = tempfile::tempdir().unwrap();
    let bodies = dir.path().join("scores.jsonl");
    std::fs::write(
        &bodies,
        "{\"name\":\"goal_achievement\",\"value\":1,\"traceId\":\"t1\"}\n",
    )
    .unwrap();
    let cases = [
        (
            "HTTP/1.1 302 Found\r\nLocation: /login\r\nContent-Length: 0\r\n\r\n",
            "302 Found to `/login` (redirects are not followed)",
        ),
        ("HTTP/1.1 204 No Content\r\n\r\n", ""),
        ("HTTP/1.1 199 Odd\r\nContent-Length: 0\r\n\r\n", "199"),
    ];
    for (response, needle) in cases {
        let (url, seen) = answering(response);
        let out = grade_bin()
            .env("LANGFUSE_PUBLIC_KEY", "pk")
            .env("LANGFUSE_SECRET_KEY", "sk")
            .env("LANGFUSE_HOST", &url)
            .args([
                "push",
                "--langfuse",
                bodies.to_str().unwrap(),
                "--attempts",
                "1",
            ])
            .output()
            .unwrap();
        if needle.is_empty() {
            assert_eq!(code(&out), 0, "{response:?}: {}", stderr(&out));
            assert!(
                stdout(&out).starts_with("pushed 1 score"),
                "{}",
                stdout(&out)
            );
        } else {
            assert_eq!(code(&out), 2, "{response:?}: {}", stdout(&out));
            assert!(
                stderr(&out).contains(needle),
                "{response:?}: {}",
                stderr(&out)
            );
            assert!(!stdout(&out).contains("pushed"), "{}", stdout(&out));
        }
        // Only the one POST: a redirect is not followed with a body-less GET.
        let seen = seen.lock().unwrap();
        assert!(
            seen.iter()
                .all(|r| r.starts_with("POST /api/public/scores ")),
            "{seen:?}"
        );
    }
}

/// The grades file may have been opened (created empty), but holds no grade.
fn assert_no_grade(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(text, "", "a grade was recorded");
}

/// Grades `session-demo-good` from the example, recording into `grades`.
fn grade_into(dir: &Path, grades: &str) -> std::process::Output {
    run_in(
        dir,
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            example().to_str().unwrap(),
            "--grades",
            grades,
            "--format",
            "jsonl",
            "session-demo-good",
        ],
    )
}

#[test]
fn a_failed_grades_append_leaves_the_file_exactly_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let grades = dir.path().join("GRADES.jsonl");
    // Most of a 512-byte block already used: the next grade line fits only part-way, the
    // way a full disk takes the first bytes of a write and refuses the rest.
    let before = format!(
        "{{\"sessionId\":\"old\",\"totalScore\":1,\"maxScore\":2,\"pad\":\"{}\"}}\n",
        "x".repeat(300)
    );
    std::fs::write(&grades, &before).unwrap();
    // SIGXFSZ ignored is inherited through exec, so the write fails with EFBIG instead.
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 1; exec \"$0\" --rubric cleo-v1 --source {} --grades GRADES.jsonl --format jsonl session-demo-good",
            example().display()
        ))
        .arg(env!("CARGO_BIN_EXE_grade"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write grades file `GRADES.jsonl`")
            && stderr(&out).contains("the file was left as it was"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&grades).unwrap(), before);
}

#[test]
fn a_torn_last_grades_line_is_reported_listed_around_and_never_glued_onto() {
    let dir = tempfile::tempdir().unwrap();
    let out = grade_into(dir.path(), "GRADES.jsonl");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let grades = dir.path().join("GRADES.jsonl");
    let whole = std::fs::read_to_string(&grades).unwrap();
    // A crash half-way through a later write.
    std::fs::write(&grades, format!("{whole}{{\"sessionId\":\"torn\",\"tot")).unwrap();

    let listed = run_in(
        dir.path(),
        &["--list", "--grades", "GRADES.jsonl", "--format", "jsonl"],
    );
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    assert_eq!(json_lines(&stdout(&listed)).len(), 1);
    assert!(
        stderr(&listed).contains("GRADES.jsonl:2: the last line is torn"),
        "{}",
        stderr(&listed)
    );

    let out = grade_into(dir.path(), "GRADES.jsonl");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ended in a torn line"),
        "{}",
        stderr(&out)
    );
    let text = std::fs::read_to_string(&grades).unwrap();
    let lines = json_lines(&text);
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines.iter().all(|g| g["sessionId"] == "session-demo-good"));
}

#[test]
fn grades_into_dev_null_are_written_without_a_sync() {
    let dir = tempfile::tempdir().unwrap();
    let out = grade_into(dir.path(), "/dev/null");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_lines(&stdout(&out)).len(), 1);
}

#[test]
fn grades_are_not_recorded_when_the_output_could_not_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = grade_bin()
        .current_dir(dir.path())
        .args([
            "--rubric",
            "cleo-v1",
            "--source",
            example().to_str().unwrap(),
            "--grades",
            "GRADES.jsonl",
            "session-demo-good",
        ])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write to standard output"),
        "{}",
        stderr(&out)
    );
    assert_no_grade(&dir.path().join("GRADES.jsonl"));
}

/// Grades the example with `extra` flags, recording into `GRADES.jsonl` of a fresh folder,
/// while the reader of its output goes away before reading a byte (as `head -c0` would):
/// the exit status, what it said on stderr, and the folder.
fn grade_into_a_closed_pipe(extra: &[&str]) -> (Option<i32>, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = grade_bin()
        .current_dir(dir.path())
        .args([
            "--rubric",
            "cleo-v1",
            "--source",
            example().to_str().unwrap(),
            "--all",
            "--grades",
            "GRADES.jsonl",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err, dir)
}

#[test]
fn a_closed_output_pipe_ends_the_run_quietly_with_success() {
    let (status, err, dir) = grade_into_a_closed_pipe(&[]);
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(err, "");
    assert_no_grade(&dir.path().join("GRADES.jsonl"));
}

/// A closed pipe drops what was left to print and records nothing, but the run's checks
/// still decide its exit status: `grade … --fail-under 99 | head -1` exited 0 and passed a
/// CI gate that fails.
#[test]
fn a_closed_output_pipe_does_not_turn_a_failed_gate_into_success() {
    let (status, err, dir) = grade_into_a_closed_pipe(&["--fail-under", "99"]);
    assert_eq!(status, Some(1), "{err}");
    assert!(err.contains("scored below 99% (`--fail-under`)"), "{err}");
    assert_no_grade(&dir.path().join("GRADES.jsonl"));
}

#[test]
fn terminal_escapes_from_the_data_are_shown_escaped_in_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let line = std::fs::read_to_string(example())
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .replace("session-demo-good", "evil\\u001b]0;pwned\\u0007\\u001b[2J");
    let source = dir.path().join("evil.jsonl");
    std::fs::write(&source, format!("{line}\n")).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "evil.jsonl",
            "--all",
            "--color",
            "never",
            "--grades",
            "GRADES.jsonl",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(
        text.contains("evil\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"),
        "{text}"
    );

    let listed = run_in(dir.path(), &["--list", "--grades", "GRADES.jsonl"]);
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    let text = stdout(&listed);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(text.contains("evil\\u{1b}]0;pwned"), "{text}");
}

/// The summary after `--all` lists the most frequent flags, which quote the source's text:
/// escaped there as in each report, so a line break in a domain cannot forge a line.
#[test]
fn the_summary_shows_flags_with_their_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let line = r#"{"timestamp":"2026-03-01T10:00:00Z","sessionId":"s","domain":"tasks\n    ! injected\u001b[2J","operation":"show","result":{"success":false,"exitCode":4}}"#;
    std::fs::write(dir.path().join("inj.jsonl"), format!("{line}\n")).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "inj.jsonl",
            "--all",
            "--color",
            "never",
            "--no-record",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let summary = &text[text
        .find("most frequent flags")
        .expect("a summary with flags")..];
    assert!(!summary.contains('\u{1b}'), "{summary:?}");
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("! injected")),
        "{text}"
    );
    assert!(summary.contains("tasks\\n    ! injected"), "{summary}");
}

#[test]
fn a_min_coverage_that_is_not_a_percentage_is_refused() {
    for given in ["NaN", "inf", "-1", "101"] {
        let flag = format!("--min-coverage={given}");
        let out = run(&["rubric", "test", "cleo-v1", &flag]);
        assert_eq!(code(&out), 2, "{given}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("is not a percentage from 0 to 100"),
            "{given}: {}",
            stderr(&out)
        );
    }
}

/// The files in a folder with their contents.
fn folder_snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

fn grade_db_all(dir: &Path) -> std::process::Output {
    run_in(
        dir,
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "tasks.db",
            "--all",
            "--format",
            "jsonl",
            "--no-record",
        ],
    )
}

#[test]
fn a_wal_database_is_read_without_creating_or_changing_files_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    write_cleo_db(&example(), &db);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }
    // Closed cleanly: only tasks.db is left, and reading it must not add -wal or -shm.
    let before = folder_snapshot(dir.path());
    assert_eq!(before.len(), 1);
    let out = grade_db_all(dir.path());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        folder_snapshot(dir.path()),
        before,
        "files changed beside the database"
    );

    // A writer with a session only in its WAL, not yet checkpointed, still connected.
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer
        .execute_batch(
            "PRAGMA wal_autocheckpoint=0;
             INSERT INTO audit_log (id, timestamp, action, task_id, domain, operation, session_id, success)
             VALUES ('wal-1', '2026-03-02T10:00:00.000Z', 'list', 'system', 'session', 'list', 'session-in-wal', 1);",
        )
        .unwrap();
    let before = folder_snapshot(dir.path());
    assert!(before
        .iter()
        .any(|(n, b)| n == "tasks.db-wal" && !b.is_empty()));
    let out = grade_db_all(dir.path());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let ids: Vec<String> = json_lines(&stdout(&out))
        .iter()
        .map(|g| g["sessionId"].as_str().unwrap().to_owned())
        .collect();
    assert!(ids.iter().any(|id| id == "session-in-wal"), "{ids:?}");
    assert_eq!(
        folder_snapshot(dir.path()),
        before,
        "files changed beside the database"
    );
    drop(writer);
}

#[test]
fn a_locked_database_is_reported_as_locked_not_as_foreign() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    write_cleo_db(&example(), &db);
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer
        .execute_batch("BEGIN EXCLUSIVE; UPDATE audit_log SET action = action;")
        .unwrap();
    let out = grade_db_all(dir.path());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`tasks.db` is locked by another process"),
        "{}",
        stderr(&out)
    );
    writer.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn a_hot_journal_is_reported_as_one_not_as_foreign() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    write_cleo_db(&example(), &db);
    let writer = rusqlite::Connection::open(&db).unwrap();
    // A write caught half-way: the page cache spills, so the database file is changed and
    // its journal holds the pages to roll back. A copy of both is a crashed write.
    writer
        .execute_batch("PRAGMA cache_size=1; BEGIN; UPDATE audit_log SET details_json = hex(randomblob(2000));")
        .unwrap();
    std::fs::copy(&db, dir.path().join("tasks.db")).unwrap();
    std::fs::copy(
        dir.path().join("live.db-journal"),
        dir.path().join("tasks.db-journal"),
    )
    .unwrap();
    writer.execute_batch("ROLLBACK").unwrap();
    let out = grade_db_all(dir.path());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`tasks.db` has a hot journal `tasks.db-journal`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn source_format_cleo_db_and_cleo_jsonl_are_obeyed_when_streaming() {
    let dir = tempfile::tempdir().unwrap();
    write_cleo_db(&example(), &dir.path().join("tasks.db"));
    let cases = [
        (
            "cleo-db",
            example().display().to_string(),
            "is not a CLEO database",
        ),
        ("cleo-jsonl", "tasks.db".to_owned(), "tasks.db:1:"),
    ];
    for (format, source, needle) in cases {
        let out = run_in(
            dir.path(),
            &[
                "--rubric",
                "cleo-v1",
                "--source",
                &source,
                "--source-format",
                format,
                "--all",
                "--format",
                "jsonl",
                "--no-record",
            ],
        );
        assert_eq!(code(&out), 2, "{format}: {}", stdout(&out));
        assert!(stderr(&out).contains(needle), "{format}: {}", stderr(&out));
    }
}

#[cfg(unix)]
#[test]
fn a_dangling_link_or_fifo_in_a_project_folder_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::copy(repo_root().join(TRANSCRIPT), project.join("real.jsonl")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("gone.jsonl"),
        project.join("dangling.jsonl"),
    )
    .unwrap();
    let fifo = project.join("pipe.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", project.join("zero.jsonl")).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "claude-code-v1",
            "--source",
            "project",
            "--all",
            "--format",
            "jsonl",
            "--no-record",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_lines(&stdout(&out)).len(), 1);
    let err = stderr(&out);
    assert!(
        err.contains("dangling.jsonl: skipped: a link to a file that does not exist"),
        "{err}"
    );
    assert!(
        err.contains("pipe.jsonl: skipped: not a regular file"),
        "{err}"
    );
    assert!(
        err.contains("zero.jsonl: skipped: not a regular file"),
        "{err}"
    );
}

/// `grade` with the example on standard input through `args`.
fn grade_piped(args: &[&str]) -> std::process::Output {
    grade_piped_with(args, std::fs::read(example()).unwrap())
}

/// `grade` with `text` on standard input through `args`.
fn grade_piped_with(args: &[&str], text: Vec<u8>) -> std::process::Output {
    let mut child = grade_bin()
        .current_dir(repo_root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&text);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn a_source_read_from_a_pipe_is_read_whole_and_dash_means_stdin() {
    let whole = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--all",
        "--format",
        "jsonl",
        "--no-record",
    ]);
    assert_eq!(code(&whole), 0, "{}", stderr(&whole));
    let strip = |text: &str| -> Vec<serde_json::Value> {
        json_lines(text)
            .into_iter()
            .map(|mut g| {
                g["timestamp"] = serde_json::Value::Null;
                g
            })
            .collect()
    };
    let expected = strip(&stdout(&whole));
    assert_eq!(expected.len(), 2);
    for source in ["-", "/dev/stdin"] {
        let out = grade_piped(&[
            "--rubric",
            "cleo-v1",
            "--source",
            source,
            "--all",
            "--format",
            "jsonl",
            "--no-record",
        ]);
        assert_eq!(code(&out), 0, "{source}: {}", stderr(&out));
        assert_eq!(strip(&stdout(&out)), expected, "{source}");
    }
}

/// `grade compare` reads a piped source as `grade` does: `--source -`, an arm `NAME=-`.
#[test]
fn compare_reads_a_source_from_standard_input_as_grade_does() {
    let from_file = run(&[
        "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", EXAMPLE, "--all",
        "--format", "json",
    ]);
    assert_eq!(code(&from_file), 0, "{}", stderr(&from_file));
    for source in ["-", "/dev/stdin"] {
        let piped = grade_piped(&[
            "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", source, "--all",
            "--format", "json",
        ]);
        assert_eq!(code(&piped), 0, "{source}: {}", stderr(&piped));
        assert_eq!(stdout(&piped), stdout(&from_file), "{source}");
    }
    let arms = grade_piped(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--arm",
        "piped=-",
        "--arm",
        &format!("file={EXAMPLE}"),
        "--format",
        "json",
    ]);
    assert_eq!(code(&arms), 0, "{}", stderr(&arms));
    let report: serde_json::Value = serde_json::from_str(&stdout(&arms)).unwrap();
    assert_eq!(report["summary"]["nBaseline"], 2, "{report}");
    let both = run(&[
        "compare", "--rubric", "cleo-v1", "--arm", "a=-", "--arm", "b=-",
    ]);
    assert_eq!(code(&both), 2);
    assert!(
        stderr(&both).contains("both arms read standard input"),
        "{}",
        stderr(&both)
    );
}

/// A piped source is read through a private copy; what is said about it names the source as
/// the user gave it, with the right line.
#[test]
fn messages_name_a_piped_source_as_given_not_its_private_copy() {
    let mut text = std::fs::read(example()).unwrap();
    text.extend_from_slice(b"{\"sessionId\": \"s\"}\n");
    let lines = String::from_utf8_lossy(&text).lines().count();
    let args = [
        "--rubric",
        "cleo-v1",
        "--all",
        "--format",
        "jsonl",
        "--no-record",
    ];
    let out = grade_piped_with(&[&args[..], &["--source", "-"]].concat(), text.clone());
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with(&format!(
            "error[E104]: <stdin>:{lines}: missing field `timestamp`"
        )),
        "{}",
        stderr(&out)
    );
    let out = grade_piped_with(
        &[&args[..], &["--source", "/dev/stdin", "--skip-bad-lines"]].concat(),
        text,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "warning: /dev/stdin:{lines}: skipped a malformed line"
        )),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("grade-source-"), "{}", stderr(&out));
    let out = grade_piped_with(&[&args[..], &["--source", "-"]].concat(), Vec::new());
    assert_eq!(
        stderr(&out),
        "warning: `<stdin>` holds no sessions: nothing was graded\n"
    );
}

#[cfg(unix)]
#[test]
fn a_device_as_source_judgment_or_grades_is_refused_not_read_forever() {
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        "/dev/zero",
        "--all",
        "--no-record",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("source `/dev/zero` is a character device, not a file"),
        "{}",
        stderr(&out)
    );
    let out = run(&["--list", "--grades", "/dev/zero"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot read grades file `/dev/zero`: it is a character device"),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--judgment",
        "/dev/zero",
        "--no-record",
        "s1",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`/dev/zero`: it is a character device"),
        "{}",
        stderr(&out)
    );
}

/// Copies a shipped pack's top-level files into `to`.
fn copy_pack(id: &str, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for item in std::fs::read_dir(repo_root().join("rubrics").join(id)).unwrap() {
        let path = item.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

#[cfg(unix)]
#[test]
fn a_pack_file_linked_outside_the_pack_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    copy_pack("claude-code-v1", &outside);

    // The manifest itself a link out of the pack.
    let pack = dir.path().join("manifest-out");
    std::fs::create_dir(&pack).unwrap();
    std::os::unix::fs::symlink(outside.join("rubric.yaml"), pack.join("rubric.yaml")).unwrap();
    // A script a link out of the pack.
    let script_out = dir.path().join("script-out");
    copy_pack("claude-code-v1", &script_out);
    std::fs::remove_file(script_out.join("blind_retry.rhai")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("blind_retry.rhai"),
        script_out.join("blind_retry.rhai"),
    )
    .unwrap();
    // A link inside the pack is fine.
    let inside = dir.path().join("inside");
    copy_pack("claude-code-v1", &inside);
    std::fs::rename(inside.join("blind_retry.rhai"), inside.join("real.txt")).unwrap();
    std::os::unix::fs::symlink(inside.join("real.txt"), inside.join("blind_retry.rhai")).unwrap();

    for (pack, file) in [
        ("manifest-out", "rubric.yaml"),
        ("script-out", "blind_retry.rhai"),
    ] {
        let out = run_in(dir.path(), &["rubric", "validate", &format!("./{pack}")]);
        assert_eq!(code(&out), 2, "{pack}: {}", stdout(&out));
        assert!(
            stderr(&out).contains(&format!("`./{pack}/{file}` leads out of the pack folder")),
            "{pack}: {}",
            stderr(&out)
        );
    }
    let out = run_in(dir.path(), &["rubric", "validate", "./inside"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn non_finite_numbers_in_a_pack_are_refused_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("odd");
    copy_pack("cleo-v1", &pack);
    let text = std::fs::read_to_string(pack.join("rubric.yaml")).unwrap();
    let text = text.replacen("    max: 20", "    max: .inf", 1).replacen(
        "        points: 10",
        "        points: .nan",
        1,
    );
    std::fs::write(pack.join("rubric.yaml"), text).unwrap();
    let out = run_in(dir.path(), &["rubric", "validate", "./odd"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains("`.inf` is not a finite number"), "{said}");
    assert!(said.contains("`.nan` is not a finite number"), "{said}");
    assert!(said.contains("max"), "{said}");
}

#[test]
fn yaml_nested_past_the_cap_is_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("deep");
    std::fs::create_dir(&pack).unwrap();
    let text = format!(
        "id: deep\nversion: \"1\"\nname: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(pack.join("rubric.yaml"), text).unwrap();
    let out = run_in(dir.path(), &["rubric", "validate", "./deep"]);
    assert_ne!(code(&out), 0);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("line 3: brackets nested more than 64 deep"),
        "{said}"
    );
}

#[test]
fn a_judgment_with_a_key_twice_is_refused_not_graded_on_one_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let judgment = dir.path().join("judgment.json");
    std::fs::write(
        &judgment,
        r#"{"goal_achievement": {"score": 0, "evidence": [], "rationale": "a"},
            "goal_achievement": {"score": 3, "evidence": [], "rationale": "b"}}"#,
    )
    .unwrap();
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--judgment",
        judgment.to_str().unwrap(),
        "--no-record",
        "s1",
    ]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("the key `goal_achievement` appears twice in the object at `/`"),
        "{}",
        stderr(&out)
    );
}

/// A Claude Code transcript of `n` messages, each with one `Read` of a different file.
fn one_read_per_message(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&serde_json::json!({"type": "assistant", "sessionId": "long", "uuid": format!("u{i}"),
            "timestamp": "2026-04-01T10:00:00.000Z",
            "message": {"id": format!("msg_{i}"), "role": "assistant",
                "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Read", "input": {"file_path": format!("/f{i}.py")}}]}}).to_string());
        text.push('\n');
        text.push_str(&serde_json::json!({"type": "user", "sessionId": "long", "uuid": format!("r{i}"),
            "timestamp": "2026-04-01T10:00:01.000Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "ok"}]}}).to_string());
        text.push('\n');
    }
    text
}

#[test]
fn sequential_lookups_walks_a_long_run_once_within_the_operation_budget() {
    // 2,000 lookups in a row: checking each against the whole run so far took ~16M
    // operations and hit the limit; one map lookup per call stays far below it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("long.jsonl"), one_read_per_message(2000)).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "claude-code-v1",
            "--source",
            "long.jsonl",
            "--all",
            "--format",
            "jsonl",
            "--no-record",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let result = &json_lines(&stdout(&out))[0];
    let flags = result["flags"].to_string();
    assert!(flags.contains("2000 Read calls one per message"), "{flags}");
}

#[test]
fn a_script_walking_a_long_session_once_gets_operations_per_entry() {
    // 2M loop steps over 100,000 entries are past the fixed 2M budget; a walk
    // that is linear in the session must not be stopped, while a loop still is.
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("walker");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        "id: walker\nversion: 0.1.0\nname: Walks every entry\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - id: walk\n        doc: counts entries the long way\n        script: walk.rhai\n",
    )
    .unwrap();
    std::fs::write(
        pack.join("walk.rhai"),
        "let n = 0;\nfor i in 0..session.len() * 20 { n += 1; }\n#{ points: 10, evidence: `${n}` }\n",
    )
    .unwrap();
    let mut log = String::new();
    for i in 0..100_000 {
        log.push_str(&format!(
            "{{\"timestamp\":\"2026-03-01T09:00:00.000Z\",\"sessionId\":\"big\",\"domain\":\"tasks\",\"operation\":\"show\",\"params\":{{\"i\":{i}}},\"result\":{{\"success\":true,\"exitCode\":0,\"duration\":1}},\"metadata\":{{\"source\":\"mcp\"}}}}\n"
        ));
    }
    std::fs::write(dir.path().join("big.jsonl"), log).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "./walker",
            "--source",
            "big.jsonl",
            "--all",
            "--format",
            "jsonl",
            "--no-record",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_lines(&stdout(&out))[0]["totalScore"], 10);
    // The fixed part of the budget still stops a loop that does not end.
    let out = run(&[
        "--rubric",
        "tests/fixtures/packs/runaway",
        "--source",
        EXAMPLE,
        "--no-record",
        "session-demo-sloppy",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("too many operations"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_script_nesting_values_without_end_fails_its_session_not_the_process() {
    // `a = [a]` 100,000 times overflowed the stack in Rhai's recursion over the value and
    // aborted the whole run (exit 134); now that session fails with a named error, the
    // other sessions are graded, and the run ends with exit 1.
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("nesting");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        "id: nesting\nversion: 0.1.0\nname: Nests values for one session\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - id: nest\n        doc: nests an array in itself for the sloppy session\n        script: nest.rhai\n",
    )
    .unwrap();
    std::fs::write(
        pack.join("nest.rhai"),
        "if session.id == \"session-demo-sloppy\" {\n    let a = [];\n    for i in 0..100000 { a = [a]; }\n    let m = #{};\n    for i in 0..100000 { m = #{ inner: m }; }\n    let same = a == a;\n}\n#{ points: 10, evidence: \"fine\" }\n",
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "./nesting",
            "--source",
            example().to_str().unwrap(),
            "--all",
            "--format",
            "jsonl",
            "--no-record",
        ],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "session `session-demo-sloppy`: the script failed: nest.rhai:3: a value nests more than 256 levels deep"
        ),
        "{}",
        stderr(&out)
    );
    let graded = json_lines(&stdout(&out));
    assert!(
        graded
            .iter()
            .any(|r| r["sessionId"] == "session-demo-good" && r["totalScore"] == 10),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_selector_graph_that_doubles_per_level_is_matched_once_per_selector_and_entry() {
    // `s{i+1}: {any: [s{i}, s{i}]}` over 28 levels is 2^28 paths: deciding each selector by
    // walking every path took minutes to validate (a 900-byte file); each is decided once,
    // whether decided ahead (an operation) or per entry (a field), in either order.
    for (leaf, reversed) in [
        ("{operation: add}", false),
        ("{operation: add}", true),
        ("{field: params.title, equals: x}", false),
        ("{field: params.title, equals: x}", true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("doubling");
        std::fs::create_dir(&pack).unwrap();
        let mut selectors: Vec<String> = (1..=28)
            .map(|i| format!("  s{i}: {{any: [s{}, s{}]}}\n", i - 1, i - 1))
            .collect();
        selectors.insert(0, format!("  s0: {leaf}\n"));
        if reversed {
            selectors.reverse();
        }
        std::fs::write(
            pack.join("rubric.yaml"),
            format!(
                "id: doubling\nversion: 0.1.0\nname: Selectors that double per level\nselectors:\n{}dimensions:\n  - id: d\n    max: 10\n    rules:\n      - id: r\n        doc: any add\n        when: {{count: s28, at_least: 1}}\n        points: -1\n",
                selectors.concat()
            ),
        )
        .unwrap();
        let out = run_in(dir.path(), &["rubric", "validate", "./doubling"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let out = run_in(
            dir.path(),
            &[
                "--rubric",
                "./doubling",
                "--source",
                example().to_str().unwrap(),
                "--all",
                "--format",
                "jsonl",
                "--no-record",
            ],
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(json_lines(&stdout(&out)).len(), 2, "{}", stdout(&out));
    }
}

/// `-o` or `--grades` naming the source wrote results over the data they were graded from
/// (a tasks.db replaced by text, or cut at its last newline byte as a "torn line" and
/// appended to); and a database named as the grades file was mangled the same way.
#[test]
fn results_are_never_written_over_the_source_or_into_a_database() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example(), dir.path().join("audit.jsonl")).unwrap();
    let original = std::fs::read(dir.path().join("audit.jsonl")).unwrap();
    for args in [
        &["--grades", "audit.jsonl"][..],
        &["--no-record", "--output", "./audit.jsonl"],
    ] {
        let mut all = vec!["--rubric", "cleo-v1", "--source", "audit.jsonl", "--all"];
        all.extend(args);
        let out = run_in(dir.path(), &all);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("is the source being graded"),
            "{}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read(dir.path().join("audit.jsonl")).unwrap(),
            original
        );
    }
    let mut database = b"SQLite format 3\0".to_vec();
    database.extend([7u8; 4080]);
    database.extend(b"\nno line end");
    std::fs::write(dir.path().join("tasks.db"), &database).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "audit.jsonl",
            "--all",
            "--grades",
            "tasks.db",
        ],
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is an SQLite database, not a grades file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(dir.path().join("tasks.db")).unwrap(),
        database
    );
}

/// Help and version go to standard output like any result: a write that fails (a full
/// disk) is an error, as it is for every other command, not a silent success.
#[test]
fn help_that_cannot_be_written_is_an_error_not_a_success() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    for flag in ["--help", "--version"] {
        let out = grade_bin()
            .arg(flag)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{flag}: {}", stderr(&out));
        // In words, as every other failed write says it (not `No space left on device (os
        // error 28)`).
        assert_eq!(
            stderr(&out),
            "error[E215]: cannot write to standard output: no space left on device\n",
            "{flag}"
        );
    }
}
