//! What stops a pack's script (issue 12, defect 7): every script must fail or finish within
//! seconds, with the limits the `grade` binary runs it under.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::path::Path;

use common::*;

/// A pack in `dir/name` whose one rule runs `script` (as `rule.rhai`).
fn pack_with_script(dir: &Path, name: &str, script: &str) {
    pack_with_script_and(dir, name, script, "");
}

/// [`pack_with_script`] with `top` (top-level keys) added to `rubric.yaml`.
fn pack_with_script_and(dir: &Path, name: &str, script: &str, top: &str) {
    let pack = dir.join(name);
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        format!("id: {name}\nversion: 0.1.0\nname: One script\n{top}dimensions:\n  - id: d\n    max: 10\n    rules:\n      - id: r\n        doc: runs the script\n        script: rule.rhai\n"),
    )
    .unwrap();
    std::fs::write(pack.join("rule.rhai"), script).unwrap();
}

fn grade_example_with(dir: &Path, pack: &str) -> std::process::Output {
    run_in(
        dir,
        &[
            "--rubric",
            &format!("./{pack}"),
            "--source",
            repo_root()
                .join("examples/cleo-audit.jsonl")
                .to_str()
                .unwrap(),
            "--no-record",
            "session-demo-good",
        ],
    )
}

#[test]
fn copying_a_large_array_again_and_again_fails_the_session_within_seconds() {
    // Each `let b = a` copies a million items and counts as one operation: within the
    // operation budget the loop ran for minutes. What the run allocates in all stops it.
    let dir = tempfile::tempdir().unwrap();
    pack_with_script(
        dir.path(),
        "copies",
        "let a = []; a.pad(1000000, 0);\nfor i in 0..1000000 { let b = a; b.push(1); }\n#{ points: 1 }\n",
    );
    let out = grade_example_with(dir.path(), "copies");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("rule.rhai:2: it allocated more than 4096 MiB in all"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_value_grown_past_the_memory_cap_fails_the_session_not_the_process() {
    let dir = tempfile::tempdir().unwrap();
    pack_with_script(dir.path(), "grows", "let s = \"x\";\nloop { s += s; }\n");
    let out = grade_example_with(dir.path(), "grows");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("its values take more than 128 MiB of memory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_script_cannot_sleep() {
    // `sleep` held a grading thread for as long as the script asked, one operation.
    let dir = tempfile::tempdir().unwrap();
    pack_with_script(dir.path(), "sleeps", "sleep(100000.0);\n#{ points: 1 }\n");
    let out = grade_example_with(dir.path(), "sleeps");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`sleep` is not available to scripts"),
        "{}",
        stderr(&out)
    );
}

/// A built-in over a huge value counts as one operation: `contains` on a 20-million-character
/// string 100,000 times ran for minutes within the operation budget. A run is also bounded by
/// the processor time it takes (10 s, or the pack's `limits.script_seconds`), and stops with
/// a clear error like the operation limit's.
#[test]
fn a_script_of_slow_built_ins_is_stopped_at_its_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    pack_with_script_and(
        dir.path(),
        "slow",
        "let s = \"x\";\nfor i in 0..24 { s += s; }\nlet n = 0;\nfor i in 0..100000 { if s.contains(\"y\") { n += 1; } }\n#{ points: 1 }\n",
        "limits:\n  script_seconds: 0.5\n",
    );
    let out = grade_example_with(dir.path(), "slow");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "rule.rhai:4: it took more than 0.51 s of processor time (`limits.script_seconds` in `rubric.yaml` sets the fixed part, 0.5 s; each entry of the session adds 0.001 s)"
        ),
        "{}",
        stderr(&out)
    );
    // A limit a pack cannot set.
    for (given, shown) in [("0", "0"), ("-1", "-1"), ("3601", "3601")] {
        pack_with_script_and(
            dir.path(),
            &format!("bad{shown}"),
            "#{ points: 1 }\n",
            &format!("limits: {{ script_seconds: {given} }}\n"),
        );
        let out = grade_example_with(dir.path(), &format!("bad{shown}"));
        assert_ne!(code(&out), 0, "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "`script_seconds` must be more than 0 and at most 3600, not {shown} [E036]"
            )),
            "{}",
            stderr(&out)
        );
    }
}
