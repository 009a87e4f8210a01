//! Inputs that never end or never start (issue 12, defect 8): `/dev/zero` grows memory without
//! bound, and opening a FIFO waits for a writer. Every file the program reads whole is a
//! regular file (or a pipe the user named on the command line) with a size cap; anything
//! else is refused at once, naming what it is.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]
#![cfg(unix)]

use crate::common;

use std::path::Path;

use common::*;

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// Copies the shipped `cleo-v1` pack, with its tests, into `to`.
fn copy_cleo_v1(to: &Path) {
    std::fs::create_dir_all(to.join("tests")).unwrap();
    let from = repo_root().join("rubrics/cleo-v1");
    std::fs::copy(from.join("rubric.yaml"), to.join("rubric.yaml")).unwrap();
    for name in ["example.jsonl", "example.expected.jsonl"] {
        std::fs::copy(from.join("tests").join(name), to.join("tests").join(name)).unwrap();
    }
}

#[test]
fn a_pack_test_fixture_that_is_a_device_or_fifo_is_refused_not_read_forever() {
    for (name, make) in [
        ("zero.jsonl", "device"),
        ("fifo.jsonl", "fifo"),
        ("example.expected.jsonl", "fifo expectation"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("pack");
        copy_cleo_v1(&pack);
        let at = pack.join("tests").join(name);
        match make {
            "device" => std::os::unix::fs::symlink("/dev/zero", &at).unwrap(),
            _ => {
                let _ = std::fs::remove_file(&at);
                mkfifo(&at);
            }
        }
        let out = run_in(dir.path(), &["rubric", "test", "./pack"]);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert_ne!(code(&out), 0, "{make}: {said}");
        let kind = if make == "device" {
            "it is a character device, not a regular file"
        } else {
            "it is a FIFO (named pipe), not a regular file"
        };
        assert!(said.contains(kind), "{make}: {said}");
        assert!(said.contains(name), "{make}: {said}");
    }
}

#[test]
fn a_source_line_without_an_end_is_refused_past_the_cap() {
    // A regular file whose second line never ends (a disk image, `/dev/zero` copied out):
    // the reader doubled its buffer for as long as the file went on.
    let dir = tempfile::tempdir().unwrap();
    let first = std::fs::read_to_string(repo_root().join("examples/cleo-audit.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let mut text = format!("{first}\n{{\"timestamp\": \"");
    text.push_str(&"0".repeat(65 << 20));
    std::fs::write(dir.path().join("endless.jsonl"), text).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            "endless.jsonl",
            "--all",
            "--no-record",
        ],
    );
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("endless.jsonl`: line 2 is 64 MiB or longer"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn score_bodies_or_config_ids_from_a_device_are_refused_not_read_forever() {
    let out = grade_bin()
        .current_dir(repo_root())
        .args(["push", "--langfuse", "/dev/zero"])
        .env("LANGFUSE_BASE_URL", "http://127.0.0.1:9")
        .env("LANGFUSE_PUBLIC_KEY", "pk")
        .env("LANGFUSE_SECRET_KEY", "sk")
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("it is a character device, not a file or a pipe"),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--emit",
        "langfuse",
        "--config-ids",
        "/dev/zero",
        "--no-record",
        "--source",
        "examples/cleo-audit.jsonl",
        "--all",
    ]);
    assert_ne!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("it is a character device, not a file or a pipe"),
        "{}",
        stderr(&out)
    );
}
