//! The everyday command line of issue 15: named sessions that are not in the source, the
//! `--all` summary, `--list` per rubric, completions and the man page, `--fail-under`,
//! `--output`, `--jobs`, where grades are recorded, what a script's wrong type says, YAML
//! indentation hints, `rubric validate|test` in the pack's own folder, dimensions that do
//! not apply, where `--explain` places an entry (log line, database row id, transcript line
//! and `tool_use` id), and a reader that stops early (`| head -1`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;
use serde_json::{json, Value};

const EXAMPLE: &str = "examples/cleo-audit.jsonl";
const TRANSCRIPTS: &str = "rubrics/claude-code-v1/tests/real/claude_code_transcripts";

/// Output with the run's clock and temporary folder made stable for snapshots.
fn stable(text: &str, tmp: Option<&std::path::Path>) -> String {
    let mut text = text.to_owned();
    if let Some(tmp) = tmp {
        text = text.replace(&tmp.display().to_string(), "[TMP]");
    }
    text.split('\n')
        .map(|line| match line.find("graded 20") {
            Some(at) => format!("{}graded [TIMESTAMP]", &line[..at]),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_session_the_source_does_not_hold_is_an_error_suggesting_close_ids() {
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "session-demo-god",
        "session-demo-good",
        "elsewhere",
    ]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "", "nothing is graded when a name is wrong");
    insta::assert_snapshot!("unknown_sessions", stderr(&out));
}

#[test]
fn allow_empty_grades_and_records_the_zero_result_as_cleo_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo_root().join(EXAMPLE), dir.path().join("audit.jsonl")).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "audit.jsonl",
            "--allow-empty",
            "--format",
            "jsonl",
            "nobody",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let r = &json_lines(&stdout(&out))[0];
    assert_eq!(
        (r["totalScore"].as_i64(), r["entryCount"].as_i64()),
        (Some(0), Some(0))
    );
    let recorded = std::fs::read_to_string(dir.path().join(".cleo/metrics/GRADES.jsonl")).unwrap();
    assert_eq!(json_lines(&recorded)[0]["sessionId"], "nobody");
    assert!(
        stderr(&out).contains("recorded 1 grade to .cleo/metrics/GRADES.jsonl"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn help_mentions_allow_empty_so_the_conformance_check_passes_it() {
    let out = run(&["--help"]);
    assert!(stdout(&out).contains("--allow-empty"));
}

#[test]
fn all_in_human_format_ends_with_a_summary() {
    let out = run(&[
        "--rubric",
        "claude-code-v1",
        "--source",
        &format!("{TRANSCRIPTS}/synthetic/daaain__test_data"),
        "--all",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let summary = &text[text.rfind("\n\n").expect("a blank line before the summary") + 2..];
    insta::assert_snapshot!("all_summary", summary);

    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--all",
        "--no-record",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("2 sessions graded, mean 60%\ngrades: A 1 · F 1\nmost frequent flags:\n     2× tasks.add without description (taskId: T40) · and 1 like it\n"),
        "{text}"
    );
    // Only human output gets it: JSON lines stay one result per line.
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(json_lines(&stdout(&out)).len(), 2);
}

#[test]
fn list_shows_the_rubric_of_each_grade_and_filters_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let grades = dir.path().join("grades.jsonl");
    let grades = grades.to_str().unwrap();
    for rubric in ["cleo-v1", "cleo-v2"] {
        let out = run(&[
            "--rubric",
            rubric,
            "--source",
            EXAMPLE,
            "--grades",
            grades,
            "--format",
            "jsonl",
            "session-demo-good",
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let table = stdout(&run(&["--list", "--grades", grades]));
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().take(4).collect())
        .collect();
    assert_eq!(rows[0], ["SESSION", "RUBRIC", "SCORE", "PERCENT"]);
    assert_eq!(rows[1][..3], ["session-demo-good", "cleo-v1", "1.0.0"]);
    assert_eq!(rows[2][..3], ["session-demo-good", "cleo-v2", "2.0.0"]);

    for filter in ["cleo-v2", "cleo-v2@2.0.0"] {
        let only = stdout(&run(&["--list", "--grades", grades, "--rubric", filter]));
        assert_eq!(only.lines().count(), 2, "{only}");
        assert!(only.lines().nth(1).unwrap().contains("cleo-v2 2.0.0"));
    }
    let none = stdout(&run(&[
        "--list",
        "--grades",
        grades,
        "--rubric",
        "cleo-v2@9",
    ]));
    assert_eq!(
        none,
        format!("no grades recorded that match `--rubric`/`--session` in `{grades}`\n")
    );
}

/// `--list` turns each grade into what it prints as it reads it, rather than holding a JSON
/// tree of every line (384 MiB for a 46 MB file of 50,000 grades, 78 MiB since); what it
/// prints is still the pretty array, or the lines, of the grades kept, whatever they hold.
#[test]
fn the_listed_grades_are_the_recorded_lines_as_json_prints_them() {
    let dir = tempfile::tempdir().unwrap();
    let grades = dir.path().join("GRADES.jsonl");
    let lines = [
        r#"{"sessionId":"s1","totalScore":5,"maxScore":10,"rubric":{"id":"a","version":"1"},"flags":[],"dimensions":{}}"#,
        r#"{"sessionId":"s2","totalScore":7.5,"maxScore":10,"rubric":{"id":"b","version":"2"},"flags":["x\ny","é \u0001"],"nested":{"deep":[[],{},[1,{"k":null}]]}}"#,
        "",
        r#"{"sessionId":"s1","totalScore":10,"maxScore":10,"rubric":{"id":"a","version":"2"},"flags":["\"q\""],"timestamp":"2026-11-27T00:00:00.000Z"}"#,
    ];
    std::fs::write(&grades, lines.join("\n") + "\n").unwrap();
    let grades = grades.to_str().unwrap();
    let values: Vec<Value> = lines
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kept = |pick: &[usize]| -> Vec<&Value> { pick.iter().map(|&i| &values[i]).collect() };
    for (filter, pick) in [
        (&[][..], &[0, 1, 2][..]),
        (&["--session", "s1"][..], &[0, 2][..]),
        (&["--rubric", "a@2"][..], &[2][..]),
        (&["--session", "s2", "--rubric", "a"][..], &[][..]),
    ] {
        let listed = |format: &str| {
            let out = run(&[
                &["--list", "--grades", grades, "--format", format][..],
                filter,
            ]
            .concat());
            assert_eq!(code(&out), 0, "{filter:?}: {}", stderr(&out));
            stdout(&out)
        };
        let want = kept(pick);
        assert_eq!(
            listed("json"),
            serde_json::to_string_pretty(&want).unwrap() + "\n",
            "{filter:?}"
        );
        let jsonl: String = want
            .iter()
            .map(|v| serde_json::to_string(v).unwrap() + "\n")
            .collect();
        assert_eq!(listed("jsonl"), jsonl, "{filter:?}");
        let table = listed("human");
        let sessions: Vec<&str> = table
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let want_sessions: Vec<&str> = want
            .iter()
            .map(|v| v["sessionId"].as_str().unwrap())
            .collect();
        assert_eq!(sessions, want_sessions, "{filter:?}: {table}");
    }
}

/// CLEO's grader writes its grades with `JSON.stringify`, which keeps a lone surrogate of a
/// text cut inside a character (a flag naming a task id: `taskId: T\ud83d`). `--list` and
/// `compare` refused the whole file, calling the line "not a grade result"; they read it as
/// every source does, U+FFFD in its place and a warning naming the first line and how many.
#[test]
fn a_grades_file_with_a_lone_surrogate_is_listed_and_compared_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let grades = dir.path().join("GRADES.jsonl");
    std::fs::write(
        &grades,
        concat!(
            r#"{"sessionId":"s0","totalScore":9,"maxScore":10,"flags":[],"dimensions":{}}"#,
            "\n",
            r#"{"sessionId":"s1","totalScore":5,"maxScore":10,"flags":["Task \ud83d cut"],"dimensions":{}}"#,
            "\n",
            r#"{"sessionId":"s2","totalScore":5,"maxScore":10,"flags":["\udc00"],"dimensions":{}}"#,
            "\n",
        ),
    )
    .unwrap();
    let grades = grades.to_str().unwrap();
    let warning = format!("warning: {grades}:2: a string holds a lone UTF-16 surrogate");
    let out = run(&["--list", "--grades", grades, "--format", "jsonl"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let flags: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["flags"].clone())
        .collect();
    assert_eq!(
        flags,
        [json!([]), json!(["Task \u{fffd} cut"]), json!(["\u{fffd}"])]
    );
    assert!(stderr(&out).starts_with(&warning), "{}", stderr(&out));
    assert!(stderr(&out).contains("(2 lines)"), "{}", stderr(&out));

    let out = run(&["compare", grades, grades]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stderr(&out).matches(&warning).count(),
        2,
        "{}",
        stderr(&out)
    );

    // A last line without its line end is checked for a torn write the same way: whole, with
    // its lone surrogate, it is listed, not skipped as torn.
    let text = std::fs::read_to_string(grades).unwrap();
    std::fs::write(grades, text.trim_end()).unwrap();
    let out = run(&["--list", "--grades", grades, "--format", "jsonl"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 3, "{}", stderr(&out));
    assert!(!stderr(&out).contains("torn"), "{}", stderr(&out));
}

#[test]
fn completions_for_each_shell_and_a_man_page() {
    for (shell, marker) in [
        ("bash", "complete -F _grade"),
        ("zsh", "#compdef grade"),
        ("fish", "complete -c grade"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = run(&["completions", shell]);
        assert_eq!(code(&out), 0, "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(script.contains("fail-under"), "{shell} completes the flags");
    }
    let out = run(&["completions", "tcsh"]);
    assert_eq!(code(&out), 2);

    let man = stdout(&run(&["man"]));
    assert!(man.starts_with(".ie \\n(.g"), "{man}");
    assert!(man.contains(".TH grade 1"));
    assert!(man.contains("allow\\-empty"));
    // The page lists `grade-compare(1)` and the rest: each is a page `grade man` prints (they
    // named pages that existed nowhere).
    assert!(man.contains("grade\\-compare(1)"), "{man}");
    let page = stdout(&run(&["man", "compare"]));
    assert!(page.contains(".TH grade-compare 1"), "{page}");
    assert!(page.contains("pass\\-at"), "{page}");
    let page = stdout(&run(&["man", "rubric", "validate"]));
    assert!(page.contains(".TH grade-rubric-validate 1"), "{page}");
    let out = run(&["man", "comapre"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`grade` has no subcommand `comapre` (its pages: `rubric`"),
        "{}",
        stderr(&out)
    );
}

/// `grade --rubric-path DIR rubric list` reads `rubric` as a session to grade (the flag
/// belongs to the grading command), and said only that `--rubric` was missing.
#[test]
fn a_command_after_a_grading_flag_is_named_with_where_it_goes() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    for (args, command) in [
        (&["--rubric-path", dir, "rubric", "list"][..], "rubric"),
        (&["--format", "json", "compare", "a", "b"][..], "compare"),
    ] {
        let out = run(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error[E201]: `{command}` is a command, and a flag before it makes it read as a session to grade: write the command first (`grade {command} …` with its flags after it)\n"
            ),
            "{args:?}"
        );
    }
    // The command first works.
    let out = run(&["rubric", "--rubric-path", dir, "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // With a rubric, a session that happens to be named like a command is graded as asked.
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        "/nonexistent/x.jsonl",
        "rubric",
    ]);
    assert!(!stderr(&out).contains("is a command"), "{}", stderr(&out));
}

/// `--rubric-path` and `--allow-plugins` were global: `grade man`, `grade completions`,
/// `grade push` and `grade rubric explain` listed them in their help and took them, meaning
/// nothing. Only commands that find a pack take `--rubric-path`, and only those that load
/// one take `--allow-plugins`; the environment variables stay harmless everywhere.
#[test]
fn pack_flags_are_refused_by_commands_that_load_no_pack() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let commands: [&[&str]; 4] = [
        &["man"],
        &["completions", "bash"],
        &["push", "--langfuse", "-"],
        &["rubric", "explain", "E012"],
    ];
    for command in commands {
        for flag in [&["--rubric-path", dir][..], &["--allow-plugins"][..]] {
            let out = run(&[command, flag].concat());
            assert_eq!(code(&out), 2, "{command:?} {flag:?}: {}", stderr(&out));
            assert!(
                stderr(&out)
                    .starts_with(&format!("error: unexpected argument '{}' found", flag[0])),
                "{command:?} {flag:?}: {}",
                stderr(&out)
            );
        }
        let help = stdout(&run(&[command, &["--help"]].concat()));
        assert!(!help.contains("--rubric-path"), "{command:?}: {help}");
        assert!(!help.contains("--allow-plugins"), "{command:?}: {help}");
    }
    // `pin` finds a pack by id but loads none of its plugins; `new` loads those of the pack
    // it copies.
    let help = stdout(&run(&["rubric", "pin", "--help"]));
    assert!(help.contains("--rubric-path <DIR>"), "{help}");
    assert!(!help.contains("--allow-plugins"), "{help}");
    let help = stdout(&run(&["rubric", "new", "--help"]));
    assert!(help.contains("--rubric-path <DIR>"), "{help}");
    assert!(help.contains("--allow-plugins"), "{help}");
    let out = run(&["rubric", "pin", "--allow-plugins", "cleo-v1"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("error: unexpected argument '--allow-plugins' found"),
        "{}",
        stderr(&out)
    );

    // Before the subcommand's name the group takes them, and hands them on or refuses them.
    let out = run(&["rubric", "--rubric-path", dir, "explain", "E012"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with(
            "error: `--rubric-path` is not taken by `grade rubric explain`, which finds no pack\n\nUsage: grade rubric explain"
        ),
        "{}",
        stderr(&out)
    );
    let out = run(&["rubric", "--allow-plugins", "pin", "cleo-v1"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with(
            "error: `--allow-plugins` is not taken by `grade rubric pin`, which loads no plugin\n"
        ),
        "{}",
        stderr(&out)
    );

    // Set in the environment, they are for the commands that use them: the others run.
    for command in [
        &["man"][..],
        &["completions", "bash"],
        &["rubric", "explain", "E012"],
    ] {
        let out = grade_bin()
            .current_dir(repo_root())
            .env("GRADE_RUBRIC_PATH", dir)
            .env("GRADE_ALLOW_PLUGINS", "1")
            .args(command)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{command:?}: {}", stderr(&out));
    }

    // The manual pages and completion scripts follow the help.
    let page = stdout(&run(&["man", "push"]));
    assert!(!page.contains("rubric\\-path"), "{page}");
    let page = stdout(&run(&["man", "compare"]));
    assert!(page.contains("rubric\\-path"), "{page}");
    assert!(page.contains("allow\\-plugins"), "{page}");
    let fish = stdout(&run(&["completions", "fish"]));
    for line in fish.lines().filter(|l| l.contains("-l rubric-path")) {
        for command in ["man", "completions", "push", "explain"] {
            assert!(
                !line.contains(&format!("subcommand {command}"))
                    && !line.contains(&format!("from {command}\"")),
                "{line}"
            );
        }
    }
    assert!(
        fish.lines()
            .any(|l| l.contains("__fish_seen_subcommand_from validate\"")
                && l.contains("-l allow-plugins")),
        "{fish}"
    );
}

/// Where the pack flags worked while they were global they still work: after a command's
/// name (`grade rubric list --rubric-path DIR`, `grade compare … --allow-plugins`), at the
/// top for grading, and between `rubric` and its subcommand (`grade rubric --rubric-path DIR
/// list`). A flag on the command line beats the environment, and the subcommand's own beats
/// the group's, as clap settled global flags.
#[test]
fn pack_flags_work_before_and_after_a_rubric_subcommand_name() {
    let empty = tempfile::tempdir().unwrap();
    let empty = empty.path().to_str().unwrap();
    let after = run(&["rubric", "list", "--rubric-path", "tests/packs"]);
    assert_eq!(code(&after), 0, "{}", stderr(&after));
    assert!(
        stdout(&after).starts_with("cleo-v1-scripted 1.0.0"),
        "{}",
        stdout(&after)
    );
    let before = run(&["rubric", "--rubric-path", "tests/packs", "list"]);
    assert_eq!(code(&before), 0, "{}", stderr(&before));
    assert_eq!(stdout(&before), stdout(&after));

    let show = run(&["rubric", "--rubric-path", "tests/packs", "show", "tutorial"]);
    assert_eq!(code(&show), 0, "{}", stderr(&show));
    let leaf_wins = run(&[
        "rubric",
        "--rubric-path",
        empty,
        "list",
        "--rubric-path",
        "tests/packs",
    ]);
    assert_eq!(stdout(&leaf_wins), stdout(&after));

    let with_env = |args: &[&str]| {
        grade_bin()
            .current_dir(repo_root())
            .env("GRADE_RUBRIC_PATH", "tests/packs")
            .args(args)
            .output()
            .unwrap()
    };
    assert_eq!(stdout(&with_env(&["rubric", "list"])), stdout(&after));
    for args in [
        &["rubric", "--rubric-path", empty, "list"][..],
        &["rubric", "list", "--rubric-path", empty],
    ] {
        let out = with_env(args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert!(
            !stdout(&out).contains("tutorial"),
            "{args:?}: {}",
            stdout(&out)
        );
        assert!(
            stdout(&out).starts_with("claude-code-v1"),
            "{args:?}: {}",
            stdout(&out)
        );
    }

    let graded = run(&[
        "--rubric-path",
        "tests/packs",
        "--rubric",
        "tutorial",
        "--source",
        EXAMPLE,
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code(&graded), 0, "{}", stderr(&graded));
    assert!(json_lines(&stdout(&graded))
        .iter()
        .all(|r| r["rubric"]["id"] == "tutorial"));
}

#[test]
fn fail_under_exits_1_when_a_session_scores_below_it() {
    let args = [
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ];
    let out = run(&[&args[..], &["--fail-under", "50"]].concat());
    assert_eq!(code(&out), 1);
    assert_eq!(
        json_lines(&stdout(&out)).len(),
        2,
        "the results are still printed"
    );
    assert_eq!(
        stderr(&out),
        "error[E202]: 1 of 2 sessions scored below 50% (`--fail-under`): `session-demo-sloppy` (20%)\n"
    );
    let out = run(&[&args[..], &["--fail-under", "20"]].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = run(&[&args[..], &["--fail-under", "120"]].concat());
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("not a percentage from 0 to 100"));
}

/// An empty log (or the wrong file) prints no result: the run says so, in every format,
/// whether it streams or not, and a `--fail-under` gate that checked nothing fails (it passed).
#[test]
fn all_over_a_source_without_sessions_says_nothing_was_graded() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("audit.jsonl");
    std::fs::write(&empty, "\n").unwrap();
    let source = empty.to_str().unwrap();
    for format in ["human", "json", "jsonl"] {
        let args = [
            "--rubric",
            "cleo-v1",
            "--source",
            source,
            "--all",
            "--no-record",
            "--format",
            format,
        ];
        let out = run(&[&args[..], &["--fail-under", "50"]].concat());
        assert_eq!(code(&out), 1, "{format}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error[E202]: `--fail-under` checked no session: `{source}` holds no sessions\n"
            ),
            "{format}"
        );
        let out = run(&args);
        assert_eq!(code(&out), 0, "{format}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("warning: `{source}` holds no sessions: nothing was graded\n"),
            "{format}"
        );
    }
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(stderr(&out), "", "a source with sessions warns of nothing");
}

#[test]
fn output_writes_the_results_to_a_file_instead_of_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.txt");
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "--output",
        file.to_str().unwrap(),
        "session-demo-good",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("session-demo-good  100/100 (100%) · grade A\n"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no colour in a file unless asked");

    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--no-record",
        "--output",
        dir.path().join("missing/report.txt").to_str().unwrap(),
        "session-demo-good",
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("error[E201]: cannot write output file `"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn jobs_changes_the_threads_not_the_results() {
    let graded = |jobs: &[&str]| {
        let out = run(&[
            &[
                "--rubric",
                "cleo-v1",
                "--source",
                EXAMPLE,
                "--all",
                "--no-record",
                "--format",
                "jsonl",
            ][..],
            jobs,
        ]
        .concat());
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        json_lines(&stdout(&out))
            .into_iter()
            .map(|mut r| {
                r.as_object_mut().unwrap().remove("timestamp");
                r
            })
            .collect::<Vec<Value>>()
    };
    assert_eq!(graded(&["--jobs", "1"]), graded(&[]));
    assert_eq!(graded(&["-j", "3"]), graded(&[]));
    assert_eq!(
        code(&run(&["--rubric", "cleo-v1", "--jobs", "0", "--all"])),
        2
    );
}

#[test]
fn only_cleo_sources_record_by_default_and_the_run_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = repo_root()
        .join(TRANSCRIPTS)
        .join("real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let transcript = transcript.to_str().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "claude-code-v1",
            "--source",
            transcript,
            "--all",
            "--format",
            "jsonl",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        !dir.path().join(".cleo").exists(),
        "a transcript's grades are not CLEO's history"
    );
    assert_eq!(stderr(&out), "");

    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "claude-code-v1",
            "--source",
            transcript,
            "--all",
            "--format",
            "jsonl",
            "--grades",
            "cc-grades.jsonl",
        ],
    );
    assert_eq!(stderr(&out), "recorded 1 grade to cc-grades.jsonl\n");
    assert_eq!(
        json_lines(&std::fs::read_to_string(dir.path().join("cc-grades.jsonl")).unwrap()).len(),
        1
    );

    std::fs::copy(repo_root().join(EXAMPLE), dir.path().join("audit.jsonl")).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "audit.jsonl",
            "--all",
            "--format",
            "jsonl",
        ],
    );
    assert_eq!(
        stderr(&out),
        "recorded 2 grades to .cleo/metrics/GRADES.jsonl\n"
    );
}

#[test]
fn a_script_of_the_wrong_type_names_its_file_line_and_the_type_in_script_words() {
    let pack = "tests/fixtures/packs/wrong-type";
    let out = run(&[
        "--rubric",
        pack,
        "--source",
        EXAMPLE,
        "--no-record",
        "session-demo-good",
    ]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out),
        "error[E042]: rubric `wrong-type`, rule `count-failures`, session `session-demo-good`: the script failed: count.rhai:4: the script must end with a map `#{ points, evidence, flags, entries }` or `()`, not an integer\nerror[E202]: 1 of 1 session could not be graded\n"
    );
    let test = run(&["rubric", "test", pack]);
    assert_eq!(
        code(&test),
        1,
        "a failing script fails the pack's test: {}",
        stderr(&test)
    );
    assert!(stdout(&test).contains("count.rhai:4:"), "{}", stdout(&test));

    let validate = run(&["rubric", "validate", pack]);
    assert_eq!(code(&validate), 1);
    let fractional = run(&[
        "rubric",
        "validate",
        "tests/fixtures/packs/fractional-points",
    ]);
    assert_eq!(code(&fractional), 1);
    let indentation = run(&[
        "rubric",
        "validate",
        "tests/fixtures/packs/broken-indentation",
    ]);
    assert_eq!(code(&indentation), 1);
    insta::assert_snapshot!(
        "script_type_and_points_and_indentation",
        [stdout(&validate), stdout(&fractional), stdout(&indentation)].join("\n")
    );
}

#[test]
fn rubric_validate_and_test_default_to_the_current_folder() {
    let pack = repo_root().join("tests/packs/tutorial");
    let out = run_in(&pack, &["rubric", "validate"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("tutorial 1.0.0 is valid"),
        "{}",
        stdout(&out)
    );
    let out = run_in(&pack, &["rubric", "test"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));

    let empty = tempfile::tempdir().unwrap();
    let out = run_in(empty.path(), &["rubric", "validate"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`.` has no `rubric.yaml`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn dimensions_with_nothing_to_judge_are_not_applicable_and_left_out_of_the_total() {
    let no_calls = format!("{TRANSCRIPTS}/synthetic/daaain__test_data/session_b.jsonl");
    let some = format!("{TRANSCRIPTS}/synthetic/simonw__tests/sample_session.jsonl");
    let out = run(&[
        "--rubric",
        "claude-code-v1",
        "--source",
        &no_calls,
        "--all",
        "--format",
        "json",
    ]);
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_valid_grade(&grade_schema(), &r);
    // No score at all, not a 0% that would count in every mean (issue 48, friction 10).
    assert_eq!(
        (r["maxScore"].as_i64(), &r["percent"]),
        (Some(0), &Value::Null)
    );
    assert!(r.get("grade").is_none(), "nothing to grade is not an A");
    assert!(r["dimensions"]
        .as_object()
        .unwrap()
        .values()
        .all(|d| d["notApplicable"] == true));

    let out = run(&[
        "--rubric",
        "claude-code-v1",
        "--source",
        &some,
        "--all",
        "--format",
        "json",
    ]);
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_valid_grade(&grade_schema(), &r);
    assert_eq!(
        (r["totalScore"].as_i64(), r["maxScore"].as_i64()),
        (Some(60), Some(60))
    );
    assert_eq!(r["dimensions"]["errorRecovery"]["notApplicable"], true);
    assert!(r["dimensions"]["readBeforeEdit"]
        .get("notApplicable")
        .is_none());

    let human = |source: &str| {
        let out = run(&["--rubric", "claude-code-v1", "--source", source, "--all"]);
        stable(&stdout(&out), None)
    };
    insta::assert_snapshot!(
        "not_applicable_human",
        [human(&no_calls), human(&some)].join("\n")
    );
}

/// Issue 48, friction 14: the tutorial gave only one of its four sessions' lines; it shows
/// the whole fixture log a reader saves, as the repository ships it.
#[test]
fn the_tutorial_shows_the_fixture_log_it_grades() {
    let tutorial = std::fs::read_to_string(repo_root().join("docs/tutorial.md")).unwrap();
    let after = "Save these 28 lines as `tutorial/tests/sessions.jsonl`";
    let start = tutorial.find(after).expect("the tutorial shows the log");
    let block = &tutorial[start..];
    let block = &block[block.find("```json\n").unwrap() + 8..];
    let block = &block[..block.find("```").unwrap()];
    let log =
        std::fs::read_to_string(repo_root().join("tests/packs/tutorial/tests/sessions.jsonl"))
            .unwrap();
    assert_eq!(block, log);
    assert_eq!(log.lines().count(), 28);
    for session in ["tut-clean", "tut-sloppy", "tut-mixed", "tut-quiet"] {
        assert!(log.contains(&format!("\"{session}\"")), "{session}");
    }
}

/// `--explain` entries of a CLEO source name where they are: the audit log's file and line,
/// the database's file and row id; the human report prints the same place.
#[test]
fn explain_places_cleo_entries_by_their_log_line_and_database_row_id() {
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(repo_root().join(EXAMPLE)).unwrap();
    // Blank lines count: a line number is the one an editor shows.
    let log: String = example.lines().map(|l| format!("{l}\n\n")).collect();
    std::fs::write(dir.path().join("audit.jsonl"), &log).unwrap();
    write_cleo_db(&repo_root().join(EXAMPLE), &dir.path().join("tasks.db"));
    let explain = |source: &str, format: &str| {
        run_in(
            dir.path(),
            &[
                "--rubric",
                "cleo-v1",
                "--source",
                source,
                "--no-record",
                "--explain",
                "--format",
                format,
                "session-demo-sloppy",
            ],
        )
    };
    let entries = |source: &str| -> Vec<Value> {
        let out = explain(source, "json");
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_valid_grade(&grade_schema(), &result);
        result["explain"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|traces| traces.as_array().unwrap())
            .flat_map(|trace| trace["entries"].as_array().cloned().unwrap_or_default())
            .collect()
    };
    let example_lines: Vec<&str> = example.lines().collect();
    let from_log = entries("audit.jsonl");
    assert!(!from_log.is_empty());
    for e in &from_log {
        let line = e["line"].as_u64().expect("a line") as usize;
        let text: Value = serde_json::from_str(log.lines().nth(line - 1).unwrap()).unwrap();
        let operation = format!(
            "{}.{}",
            text["domain"].as_str().unwrap(),
            text["operation"].as_str().unwrap()
        );
        assert_eq!(
            (&text["timestamp"], operation.as_str()),
            (&e["timestamp"], e["operation"].as_str().unwrap()),
            "{e}"
        );
        assert_eq!(e["file"], "audit.jsonl");
        assert_eq!(
            e["place"],
            format!("#{} (audit.jsonl:{line})", e["position"])
        );
        assert!(e.get("rowId").is_none());
    }
    let from_db = entries("tasks.db");
    assert_eq!(from_db.len(), from_log.len());
    for (e, in_log) in from_db.iter().zip(&from_log) {
        // The database's rows were written one per line of the example, in order.
        let row = e["rowId"].as_u64().expect("a row id") as usize;
        let text: Value = serde_json::from_str(example_lines[row - 1]).unwrap();
        assert_eq!(text["timestamp"], e["timestamp"], "{e}");
        assert_eq!(e["position"], in_log["position"]);
        assert_eq!(e["file"], "tasks.db");
        assert_eq!(
            e["place"],
            format!("#{} (tasks.db row {row})", e["position"])
        );
        assert!(e.get("line").is_none());
    }
    let human = stdout(&explain("tasks.db", "human"));
    assert!(
        human.contains("rule not-found-recovery            -10  #3 (tasks.db row 9) tasks.show"),
        "{human}"
    );
}

#[test]
fn explain_places_transcript_calls_by_their_file_line_and_tool_use_id() {
    // One assistant message spread over several lines, with parallel calls: the line is the
    // one holding the `tool_use` block, not the message's first.
    let transcript = format!("{TRANSCRIPTS}/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(repo_root().join(&transcript))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let explain = |format: &str| {
        run(&[
            "--rubric",
            "claude-code-v1",
            "--source",
            repo_root().join(&transcript).to_str().unwrap(),
            "--all",
            "--explain",
            "--format",
            format,
        ])
    };
    let out = explain("json");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_valid_grade(&grade_schema(), &result);
    let entries: Vec<&Value> = result["explain"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|traces| traces.as_array().unwrap())
        .flat_map(|trace| trace["entries"].as_array().into_iter().flatten())
        .collect();
    assert!(entries.len() >= 5, "{entries:?}");
    for e in entries {
        let line = e["line"].as_u64().expect("a line") as usize;
        let id = e["toolUseId"].as_str().expect("a tool_use id");
        let record: Value = serde_json::from_str(&lines[line - 1]).unwrap();
        let blocks = record["message"]["content"].as_array().unwrap();
        let block = blocks
            .iter()
            .find(|b| b["type"] == "tool_use" && b["id"] == id)
            .unwrap_or_else(|| panic!("line {line} holds `{id}`: {e}"));
        assert_eq!(
            e["operation"],
            format!("tool.{}", block["name"].as_str().unwrap())
        );
        assert_eq!(
            e["place"],
            format!(
                "#{} (1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl:{line}, {id})",
                e["position"]
            )
        );
    }
    let human = stdout(&explain("human"));
    let placed: Vec<&str> = human
        .lines()
        .filter(|l| l.trim_start().starts_with("rule ") && l.contains("toolu_"))
        .collect();
    insta::assert_snapshot!("transcript_explain_places", placed.join("\n"));
}

#[test]
fn a_reader_that_stops_after_the_first_line_ends_the_run_quietly_with_success() {
    use std::io::{BufRead, Read};
    // `grade … --format jsonl | head -1`: far more output than a pipe holds, so the run is
    // still writing when its reader goes away.
    for format in ["jsonl", "human"] {
        let mut child = grade_bin()
            .args([
                "--rubric",
                "cleo-v1",
                "--source",
                repo_root()
                    .join("tests/fixtures/conformance/audit.jsonl")
                    .to_str()
                    .unwrap(),
                "--all",
                "--no-record",
                "--format",
                format,
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "{format}: a first line");
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{format}: {err}");
        assert_eq!(err, "", "{format}");
    }
}

/// A flag the rest of the command line leaves nothing to act on is refused, all of them in
/// one run: dropped without a word, each left its user believing it did something.
#[test]
fn flags_that_would_do_nothing_are_refused_all_at_once() {
    let base = [
        "--rubric",
        "cleo-v1",
        "--source",
        EXAMPLE,
        "--all",
        "--no-record",
    ];
    let refused = |extra: &[&str]| {
        let out = run(&[&base[..], extra].concat());
        assert_eq!(code(&out), 2, "{extra:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{extra:?}");
        stderr(&out)
    };
    let err = refused(&[
        "--config-ids",
        "ids.json",
        "--judge-runs",
        "3",
        "--agreement",
        "a.json",
    ]);
    assert_eq!(
        err,
        "error[E201]: `--config-ids` names the score configs of `--emit langfuse` or `--push langfuse`, and neither is given\n\
         error[E201]: `--judge-runs` is about asking a judge, and no judge is asked: give `--judge PROVIDER:MODEL` or `--judge-cmd CMD`\n\
         error[E201]: `--agreement` is about asking a judge, and no judge is asked: give `--judge PROVIDER:MODEL` or `--judge-cmd CMD`\n"
    );
    let err = refused(&["--emit", "langfuse", "--format", "json"]);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = refused(&["--emit", "langfuse", "--explain"]);
    assert!(
        err.contains("`--emit` prints score bodies, which hold no rule traces"),
        "{err}"
    );
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        "rubrics/claude-code-v1/tests/real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        "--all",
        "--print-prompt",
        "--fail-under",
        "50",
        "--output",
        "x.txt",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`--print-prompt` prints the judge's prompts instead of grading: drop `--fail-under`, `--output`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn counts_of_one_are_said_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    write_one_entry_log(dir.path());
    let report = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "one.jsonl",
            "--all",
            "--no-record",
        ],
    );
    assert_eq!(code(&report), 0, "{}", stderr(&report));
    assert!(
        stdout(&report).contains("rubric cleo-v1 1.0.0 · 1 entry · graded"),
        "{}",
        stdout(&report)
    );
    let compared = run_in(
        dir.path(),
        &[
            "compare",
            "--rubric",
            "cleo-v1",
            "--rubric",
            "cleo-v2",
            "--source",
            "one.jsonl",
            "--all",
        ],
    );
    assert_eq!(code(&compared), 0, "{}", stderr(&compared));
    assert!(
        stdout(&compared).contains("\n1 session paired by sessionId ·"),
        "{}",
        stdout(&compared)
    );
    // A pack of one dimension, and one that does not load for one problem.
    let packs = dir.path().join("packs");
    let single = packs.join("single");
    std::fs::create_dir_all(&single).unwrap();
    let tutorial =
        std::fs::read_to_string(repo_root().join("tests/packs/tutorial/rubric.yaml")).unwrap();
    let cut = tutorial.find("\n  - id: discovery").unwrap();
    std::fs::write(
        single.join("rubric.yaml"),
        tutorial[..cut]
            .replace("id: tutorial", "id: single")
            .replace("max: 10\n    start: 10", "max: 1\n    start: 1"),
    )
    .unwrap();
    std::fs::copy(
        repo_root().join("tests/packs/tutorial/failure_streak.rhai"),
        single.join("failure_streak.rhai"),
    )
    .unwrap();
    let broken = packs.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("rubric.yaml"),
        "id: broken\nversion: 1.0.0\nname: Broken\ndimensions: []\n",
    )
    .unwrap();
    let listed = run_in(dir.path(), &["rubric", "list", "--rubric-path", "packs"]);
    let text = stdout(&listed);
    assert!(
        text.lines()
            .any(|l| l.starts_with("single ") && l.contains(" 1 dimension,  max 1 ")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("invalid (1 problem; run `grade rubric validate`)")),
        "{text}"
    );
    let shown = run_in(dir.path(), &["rubric", "show", "packs/single"]);
    assert!(
        stdout(&shown).contains("(recovery) — 1 point, starts at 1\n"),
        "{}",
        stdout(&shown)
    );
}

/// A session with nothing to grade has `percent: null`, not a 0 that counts in a mean: the
/// summary leaves it out with a count, and a grade that stands on some dimensions only says
/// so beside its letter (issue 48, friction 10).
#[test]
fn nothing_to_grade_is_left_out_of_the_summary_with_a_count() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "daaain__test_data/session_b.jsonl",
        "simonw__tests/sample_session.jsonl",
    ] {
        let from = repo_root().join(TRANSCRIPTS).join("synthetic").join(name);
        let to = dir.path().join(name.replace('/', "-"));
        std::fs::copy(from, to).unwrap();
    }
    let folder = dir.path().to_str().unwrap();
    let out = run(&["--rubric", "claude-code-v1", "--source", folder, "--all"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("2 sessions · 1 graded, mean 100% · 1 with nothing to grade"),
        "{text}"
    );
    assert!(
        text.contains("(100%) · grade A on 3 of 5 dimensions"),
        "{text}"
    );
    let out = run(&[
        "--rubric",
        "claude-code-v1",
        "--source",
        folder,
        "--all",
        "--format",
        "jsonl",
    ]);
    let percents: Vec<Value> = json_lines(&stdout(&out))
        .iter()
        .map(|r| r["percent"].clone())
        .collect();
    assert!(percents.contains(&Value::Null), "{percents:?}");
    assert!(percents.contains(&json!(100)), "{percents:?}");
}

/// `grade --list` in a folder without CLEO's history file said "no grades recorded" without
/// naming the file it looked for (issue 48, friction 9).
#[test]
fn list_without_a_grades_file_names_the_file_it_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["--list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "no grades recorded: there is no `.cleo/metrics/GRADES.jsonl` (a run over a CLEO source records there; `--grades FILE` lists another file)\n"
    );
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    let out = run_in(dir.path(), &["--list", "--grades", "empty.jsonl"]);
    assert_eq!(stdout(&out), "no grades recorded in `empty.jsonl`\n");
}
