//! Regression tests for the files `grade` reads and writes, attacked as a hostile user or a
//! hostile project folder would (issue 41): each test is named after the defect it guards
//! against, and fails on the code before its fix.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]
#![cfg(unix)]

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn example() -> std::path::PathBuf {
    repo_root().join("examples/cleo-audit.jsonl")
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

/// Grades `session-demo-good` from the example in `dir`, with `extra` flags.
fn grade_good(dir: &Path, extra: &[&str]) -> Output {
    let example = example();
    let mut args = vec![
        "--rubric",
        "cleo-v1",
        "--source",
        example.to_str().unwrap(),
        "--format",
        "jsonl",
    ];
    args.extend(extra);
    args.push("session-demo-good");
    run_in(dir, &args)
}

/// The output of `child`, which must end within `limit`: a run that hangs is killed and fails
/// the test instead of hanging it.
fn within(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn spawn_in(dir: &Path, args: &[&str]) -> Child {
    grade_bin()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `--grades notes.md` cut the last line of the notes as a "torn line" and appended grades;
/// a file whose lines are not all grades is refused, named with its first line that is not
/// one, and left byte for byte as it was.
#[test]
fn a_file_that_is_not_a_grades_file_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let grade =
        std::fs::read_to_string(repo_root().join("rubrics/cleo-v1/tests/example.expected.jsonl"))
            .unwrap();
    let first = grade.lines().next().unwrap();
    for (name, text, line) in [
        (
            "notes.md",
            "# notes\nsome text\nlast line no end".to_owned(),
            1,
        ),
        ("ended.md", "# notes\n".to_owned(), 1),
        ("later.jsonl", format!("{first}\nexport X=1\n{first}\n"), 2),
        (
            "entry.jsonl",
            format!("{first}\n{{\"sessionId\":\"s\",\"op\":1}}"),
            2,
        ),
        (
            "torn-first.jsonl",
            format!("{{\"sessionId\":\"to\n{first}\n"),
            1,
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let out = grade_good(dir.path(), &["--grades", name]);
        assert_eq!(code(&out), 2, "{name}: {}", stderr(&out));
        let said = stderr(&out);
        assert!(
            said.contains(&format!("cannot write grades file `{name}`: it is not a grades file: line {line} is no grade")),
            "{name}: {said}"
        );
        assert!(said.contains("it was left as it was"), "{name}: {said}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{name}");
        // Refused before the results were printed: nothing looks recorded.
        assert_eq!(stdout(&out), "", "{name}");
    }
    // A grades file whose last grade was cut short by a crash is still mended.
    let path = dir.path().join("GRADES.jsonl");
    std::fs::write(&path, format!("{first}\n{{\"sessionId\":\"cut\",\"tot")).unwrap();
    let out = grade_good(dir.path(), &["--grades", "GRADES.jsonl"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ended in a torn line"),
        "{}",
        stderr(&out)
    );
    let lines = json_lines(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["sessionId"], "session-demo-good");
}

/// A `.cleo/metrics/GRADES.jsonl` that is a symbolic link (to a shell rc file, say) had its
/// last line cut and grades appended, session ids and all; a linked `metrics` folder sent the
/// history elsewhere. The default history follows no link; `--grades` names a link on purpose.
#[test]
fn the_default_grades_history_follows_no_symbolic_link() {
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc.sh");
    let rc_text = "export PATH=$PATH:/opt/bin\nalias ll='ls -l'";
    std::fs::write(&rc, rc_text).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir(dir.path().join("project")).unwrap();
    let project = dir.path().join("project");
    let metrics = project.join(".cleo/metrics");
    let cases: [(&str, &dyn Fn()); 3] = [
        (".cleo/metrics/GRADES.jsonl", &|| {
            std::fs::create_dir_all(&metrics).unwrap();
            std::os::unix::fs::symlink(&rc, metrics.join("GRADES.jsonl")).unwrap();
        }),
        (".cleo/metrics", &|| {
            std::fs::create_dir_all(project.join(".cleo")).unwrap();
            std::os::unix::fs::symlink(&elsewhere, &metrics).unwrap();
        }),
        (".cleo", &|| {
            std::os::unix::fs::symlink(&elsewhere, project.join(".cleo")).unwrap();
        }),
    ];
    for (link, make) in cases {
        let _ = std::fs::remove_dir_all(project.join(".cleo"));
        let _ = std::fs::remove_file(project.join(".cleo"));
        make();
        let out = grade_good(&project, &[]);
        assert_eq!(code(&out), 2, "{link}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("`{link}` is a symbolic link")),
            "{link}: {}",
            stderr(&out)
        );
        assert_eq!(std::fs::read_to_string(&rc).unwrap(), rc_text, "{link}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "{link}");
    }
    // Without links the history is created and recorded to, as always.
    let _ = std::fs::remove_file(project.join(".cleo"));
    let out = grade_good(&project, &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let recorded = std::fs::read_to_string(metrics.join("GRADES.jsonl")).unwrap();
    assert_eq!(json_lines(&recorded).len(), 1);
    // A link named with `--grades` is followed, as the user asked, to a grades file.
    let kept = dir.path().join("kept.jsonl");
    std::fs::write(&kept, &recorded).unwrap();
    std::os::unix::fs::symlink(&kept, project.join("link.jsonl")).unwrap();
    let out = grade_good(&project, &["--grades", "link.jsonl"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        json_lines(&std::fs::read_to_string(&kept).unwrap()).len(),
        2
    );
}

/// `--grades FIFO` that nobody reads: a few grades were "recorded" into the pipe and lost
/// (exit 0), many hung. A grades file that is not a regular file is refused (`/dev/null`, which
/// keeps nothing as asked, aside).
#[test]
fn a_grades_file_that_is_a_fifo_or_a_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("fifo"));
    let example = example();
    for grades in ["fifo", "/dev/zero"] {
        let child = spawn_in(
            dir.path(),
            &[
                "--rubric",
                "cleo-v1",
                "--source",
                example.to_str().unwrap(),
                "--all",
                "--grades",
                grades,
            ],
        );
        let out = within(child, Duration::from_secs(30), grades);
        assert_eq!(code(&out), 2, "{grades}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not a regular file; grades are appended to a regular file"),
            "{grades}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("recorded"), "{}", stderr(&out));
    }
}

/// A FIFO with no writer given to `--list --grades`, `compare`, `--judgment` or `--source`
/// waited forever for one (the files read whole by the binary did not go through the
/// engine's non-blocking open). Each is refused at once; a FIFO something writes to is read.
#[test]
fn a_fifo_nothing_writes_to_is_refused_at_once_wherever_a_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("fifo"));
    let runs: [&[&str]; 5] = [
        &["--list", "--grades", "fifo"],
        &["compare", "fifo", "fifo"],
        &[
            "--rubric",
            "langfuse-v1",
            "--judgment",
            "fifo",
            "--no-record",
            "s1",
        ],
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "fifo",
            "--all",
            "--no-record",
        ],
        &["push", "--langfuse", "fifo"],
    ];
    for args in runs {
        let child = spawn_in(dir.path(), args);
        let out = within(child, Duration::from_secs(30), &args.join(" "));
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("`fifo`: it is a FIFO (named pipe) that nothing writes to"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A writer already waiting on the FIFO is read from, as `<(cmd)` is.
    let fifo = dir.path().join("fifo");
    let text = std::fs::read(example()).unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
        pipe.write_all(&text).unwrap();
    });
    std::thread::sleep(Duration::from_millis(300));
    let child = spawn_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "fifo",
            "--all",
            "--no-record",
            "--format",
            "jsonl",
        ],
    );
    let out = within(child, Duration::from_secs(60), "a FIFO with a writer");
    writer.join().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_lines(&stdout(&out)).len(), 2);
}

/// `--output` or `--grades` naming a hard link to the source overwrote the audit log or
/// appended grades to it: a symbolic link was refused, a hard link (another path to the same
/// inode) was not. Files are compared by device and inode.
#[test]
fn a_hard_link_to_the_source_is_never_written_as_output_or_grades() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example(), dir.path().join("audit.jsonl")).unwrap();
    std::fs::hard_link(
        dir.path().join("audit.jsonl"),
        dir.path().join("linked.jsonl"),
    )
    .unwrap();
    let original = std::fs::read(dir.path().join("audit.jsonl")).unwrap();
    for args in [
        &["--grades", "linked.jsonl"][..],
        &["--no-record", "--output", "linked.jsonl"],
    ] {
        let mut all = vec!["--rubric", "cleo-v1", "--source", "audit.jsonl", "--all"];
        all.extend(args);
        let out = run_in(dir.path(), &all);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("linked.jsonl` is the source being graded"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read(dir.path().join("audit.jsonl")).unwrap(),
            original
        );
    }
    // The output over a hard link to the grades file would wipe the history.
    std::fs::write(dir.path().join("GRADES.jsonl"), "").unwrap();
    std::fs::hard_link(dir.path().join("GRADES.jsonl"), dir.path().join("g2.jsonl")).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "audit.jsonl",
            "--all",
            "--grades",
            "GRADES.jsonl",
            "--output",
            "g2.jsonl",
        ],
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is the grades file this run records to"),
        "{}",
        stderr(&out)
    );
}

/// A WAL-mode `tasks.db` whose `-wal` was a symbolic link (to anything, of any size) had the
/// link's target copied into the temporary folder and read as the database's log. A side file
/// that is a link, a FIFO or a device is refused; the database is read when they are regular.
#[test]
fn a_wal_side_file_that_is_a_link_or_not_a_regular_file_is_refused() {
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
    let secret = dir.path().join("secret");
    std::fs::write(&secret, vec![b'k'; 1 << 16]).unwrap();
    let grade_db = || {
        let child = spawn_in(
            dir.path(),
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
        );
        within(child, Duration::from_secs(30), "tasks.db")
    };
    for side in ["tasks.db-wal", "tasks.db-shm"] {
        let at = dir.path().join(side);
        for kind in ["link", "fifo"] {
            let _ = std::fs::remove_file(&at);
            match kind {
                "link" => std::os::unix::fs::symlink(&secret, &at).unwrap(),
                _ => mkfifo(&at),
            }
            let out = grade_db();
            assert_eq!(code(&out), 2, "{side} {kind}: {}", stderr(&out));
            let what = if kind == "link" {
                "a symbolic link"
            } else {
                "a FIFO (named pipe)"
            };
            assert!(
                stderr(&out).contains(&format!("`{side}`: it is {what}, not a regular file")),
                "{side} {kind}: {}",
                stderr(&out)
            );
        }
        std::fs::remove_file(&at).unwrap();
    }
    let out = grade_db();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_lines(&stdout(&out)).len(), 2);
}

/// A CLEO audit log of `sessions` copies of the example's sessions, each under ids of its own.
fn many_sessions(path: &Path, sessions: usize) {
    let text = std::fs::read_to_string(example()).unwrap();
    let mut out = String::with_capacity(text.len() * sessions / 2);
    for n in 0..sessions / 2 {
        for line in text.lines() {
            out.push_str(&line.replace(
                "\"sessionId\": \"session-demo-",
                &format!("\"sessionId\": \"s{n}-"),
            ));
            out.push('\n');
        }
    }
    std::fs::write(path, out).unwrap();
}

/// SIGINT or SIGTERM during the final append left thousands of lines of a failed run and a
/// torn tail. The signal is held back until the append ends: the run's lines land whole or
/// not at all. The signal is sent the moment the file starts to grow, a few times over.
#[test]
fn a_signal_during_the_grades_append_leaves_all_of_the_run_or_none_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = 8_000;
    many_sessions(&dir.path().join("audit.jsonl"), sessions);
    let grades = dir.path().join("GRADES.jsonl");
    let mut caught_mid_append = 0;
    for (attempt, signal) in ["INT", "TERM", "INT", "TERM"].iter().enumerate() {
        std::fs::write(&grades, "").unwrap();
        let child = grade_bin()
            .current_dir(dir.path())
            .args([
                "--rubric",
                "cleo-v1",
                "--source",
                "audit.jsonl",
                "--all",
                "--format",
                "jsonl",
                "--output",
                "out.jsonl",
                "--grades",
                "GRADES.jsonl",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id().to_string();
        let start = Instant::now();
        let mut sent = false;
        let mut child = child;
        while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(300) {
            if !sent && std::fs::metadata(&grades).map_or(0, |m| m.len()) > 0 {
                Command::new("kill")
                    .args([&format!("-{signal}"), &pid])
                    .status()
                    .unwrap();
                sent = true;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        let status = child.wait().unwrap();
        let text = std::fs::read_to_string(&grades).unwrap();
        let lines = text.lines().count();
        assert!(
            text.is_empty() || (text.ends_with('\n') && lines == sessions),
            "attempt {attempt} (SIG{signal}, {status}): {lines} of {sessions} lines recorded, ending {:?}",
            &text[text.len().saturating_sub(40)..]
        );
        if sent && status.code().is_none() {
            caught_mid_append += 1;
        }
    }
    // The signal came while the file grew: the run was stopped by it, after its append.
    assert!(caught_mid_append > 0, "no run was signalled mid-append");
}

/// Format detection read a one-line file whole, twice (a 1.2 GB line took 2.4 GB), before the
/// reader's 64 MiB line cap refused it. Detection reads at most 64 MiB of a line, and does not
/// read a document larger than that whole; it says how to name the format instead.
#[test]
fn format_detection_reads_a_bounded_prefix_of_a_long_line_or_a_large_document() {
    let dir = tempfile::tempdir().unwrap();
    let mut line = String::from(
        r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"tasks","x":""#,
    );
    line.push_str(&"a".repeat(65 << 20));
    line.push_str("\"}\n");
    std::fs::write(dir.path().join("long.jsonl"), &line).unwrap();
    // The same bytes spread over lines: a document that opens on its first line.
    let document = format!(
        "{{\n\"observations\": [],\n\"pad\": \"{}\"\n}}\n",
        "a".repeat(65 << 20)
    );
    std::fs::write(dir.path().join("doc.json"), &document).unwrap();
    drop((line, document));
    for (file, said) in [
        (
            "long.jsonl",
            "line 1 is longer than 64 MiB, more than format detection reads",
        ),
        (
            "doc.json",
            "one larger than 64 MiB is not read whole to tell its format",
        ),
    ] {
        let out = run_in(
            dir.path(),
            &[
                "--rubric",
                "cleo-v1",
                "--source",
                file,
                "--all",
                "--no-record",
            ],
        );
        assert_eq!(code(&out), 2, "{file}: {}", stderr(&out));
        assert!(stderr(&out).contains(said), "{file}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("`--source-format`"),
            "{}",
            stderr(&out)
        );
    }
}
