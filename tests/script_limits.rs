//! What stops a pack's script (issue 12, defect 7): every script must fail or finish within
//! seconds, with the limits the `grade` binary runs it under.

mod common;

use std::path::Path;

use common::*;

/// A pack in `dir/name` whose one rule runs `script` (as `rule.rhai`).
fn pack_with_script(dir: &Path, name: &str, script: &str) {
    let pack = dir.join(name);
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(
        pack.join("rubric.yaml"),
        format!("id: {name}\nversion: 0.1.0\nname: One script\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - id: r\n        doc: runs the script\n        script: rule.rhai\n"),
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
