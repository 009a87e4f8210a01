//! The Rhai form of cleo-v1 (`tests/packs/cleo-v1-scripted`, used by the benchmarks to compare
//! the cost of scripted and declarative rules) must grade exactly as cleo-v1 does.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::path::{Path, PathBuf};

use grade_engine::{GradeOptions, ReadOptions, SessionFilter};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A result as JSON, without what names the rubric (id and digest differ by design).
fn comparable(result: &grade_engine::GradeResult) -> Value {
    let mut v = serde_json::to_value(result).unwrap();
    v.as_object_mut().unwrap().remove("rubric");
    v
}

fn assert_same_grades(source: &Path) {
    let declarative = grade_engine::load_pack("cleo-v1", &[]).unwrap();
    let scripted = grade_engine::load_pack(
        root()
            .join("tests/packs/cleo-v1-scripted")
            .to_str()
            .unwrap(),
        &[],
    )
    .unwrap();
    let ids: Vec<String> =
        std::fs::read_to_string(root().join("tests/fixtures/conformance/sessions.txt"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
    let mut sessions =
        grade_engine::read_sessions(source, &SessionFilter::only(ids.iter().cloned())).unwrap();
    // Sessions named in sessions.txt but absent from the log get the empty-session grade.
    for id in &ids {
        if !sessions.iter().any(|s| &s.id == id) {
            sessions.push(grade_engine::Session {
                id: id.clone(),
                ..grade_engine::Session::default()
            });
        }
    }
    let options = GradeOptions {
        now: 0,
        explain: false,
        references: None,
    };
    let mut graded = 0;
    for session in &sessions {
        let a = comparable(&declarative.grade(session, &options).unwrap());
        let b = comparable(&scripted.grade(session, &options).unwrap());
        assert_eq!(a, b, "session `{}` grades differently", session.id);
        graded += 1;
    }
    assert_eq!(graded, 301);
}

#[test]
fn the_scripted_pack_grades_the_corpus_as_cleo_v1() {
    assert_same_grades(&root().join("tests/fixtures/conformance/audit.jsonl"));
}

#[test]
fn the_scripted_pack_grades_the_corpus_database_as_cleo_v1() {
    // The same corpus through the tasks.db reader (instant order, exit codes from error text).
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    common::write_cleo_db(&root().join("tests/fixtures/conformance/audit.jsonl"), &db);
    assert_same_grades(&db);
}

/// A `tasks.db` read for what cleo-v1 and cleo-v2 read (issue 47: `duration_ms` and, of
/// `details_json`, every key but the ones they name left unread; the error text not kept)
/// grades every session of the corpus as the read that keeps everything, streamed and for
/// named sessions; and as the scripted twin, whose scripts may read any param (`e.params`)
/// and so read every row whole, as before.
#[test]
fn a_database_read_for_what_a_pack_reads_grades_as_the_whole_read_and_the_scripted_twin() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    common::write_cleo_db(&root().join("tests/fixtures/conformance/audit.jsonl"), &db);
    let scripted = grade_engine::load_pack(
        root()
            .join("tests/packs/cleo-v1-scripted")
            .to_str()
            .unwrap(),
        &[],
    )
    .unwrap();
    assert!(
        scripted.projection().keeps_all(),
        "its scripts read e.params"
    );
    let options = GradeOptions {
        now: 0,
        explain: true,
        references: None,
    };
    let grades = |pack: &grade_engine::CompiledPack, read: &ReadOptions, filter: &SessionFilter| {
        grade_engine::run::map_source(
            grade_engine::Registry::builtin(),
            &db,
            None,
            filter,
            read,
            None,
            |session| comparable(&pack.grade(&session, &options).unwrap()),
        )
        .unwrap()
        .results
    };
    let some: SessionFilter = SessionFilter::only(
        ["session-7-00001", "session-7-00115", "session-7-00256"].map(str::to_owned),
    );
    for id in ["cleo-v1", "cleo-v2"] {
        let pack = grade_engine::load_pack(id, &[]).unwrap();
        let projected = ReadOptions {
            checked: pack.fields_read(),
            kept: pack.projection(),
            ..ReadOptions::default()
        };
        assert!(!projected.kept.keeps_all(), "{id}");
        for filter in [&SessionFilter::All, &some] {
            let whole = grades(&pack, &ReadOptions::default(), filter);
            assert!(
                whole.len() == 3 || whole.len() > 250,
                "{id}: {}",
                whole.len()
            );
            assert_eq!(grades(&pack, &projected, filter), whole, "{id}");
            if id == "cleo-v1" {
                let mut twin = grades(&scripted, &ReadOptions::default(), filter);
                for r in &mut twin {
                    // Its rules are scripts: the explanations say so, the scores do not.
                    r.as_object_mut().unwrap().remove("explain");
                }
                let mut whole = whole;
                for r in &mut whole {
                    r.as_object_mut().unwrap().remove("explain");
                }
                assert_eq!(twin, whole);
            }
        }
    }
}

/// Grades `sessions` twice with a pack whose scripts remember outcomes (the second pass
/// reuses what the first remembered) and once with one whose scripts always run: every
/// result, explanations included, is the same.
fn assert_remembered_outcomes_are_fresh_ones(pack: &str, sessions: &[grade_engine::Session]) {
    let remembering = grade_engine::load_pack(pack, &[]).unwrap();
    let mut fresh = grade_engine::load_pack(pack, &[]).unwrap();
    fresh.remember_script_outcomes(false);
    let options = GradeOptions {
        now: 0,
        explain: true,
        references: None,
    };
    for pass in 0..2 {
        for session in sessions {
            let got = remembering.grade(session, &options).unwrap();
            let want = fresh.grade(session, &options).unwrap();
            assert_eq!(
                got, want,
                "{pack}: session `{}` (pass {pass}) grades differently when remembered",
                session.id
            );
        }
    }
}

#[test]
fn remembered_script_outcomes_are_those_of_fresh_runs_on_the_corpus() {
    let sessions = grade_engine::read_sessions(
        &root().join("tests/fixtures/conformance/audit.jsonl"),
        &SessionFilter::All,
    )
    .unwrap();
    assert!(sessions.len() > 250);
    let pack = root().join("tests/packs/cleo-v1-scripted");
    assert_remembered_outcomes_are_fresh_ones(pack.to_str().unwrap(), &sessions);
}

#[test]
fn remembered_script_outcomes_are_those_of_fresh_runs_on_transcripts() {
    let mut sessions = Vec::new();
    let mut folders = vec![root().join("rubrics/claude-code-v1/tests")];
    while let Some(folder) = folders.pop() {
        for item in std::fs::read_dir(&folder).unwrap() {
            let path = item.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if !path.to_string_lossy().contains(".expected.")
                && path
                    .extension()
                    .is_some_and(|e| e == "jsonl" || e == "json")
            {
                sessions.extend(grade_engine::read_sessions(&path, &SessionFilter::All).unwrap());
            }
        }
    }
    assert!(sessions.len() >= 15, "{} sessions", sessions.len());
    assert_remembered_outcomes_are_fresh_ones("claude-code-v1", &sessions);
}
