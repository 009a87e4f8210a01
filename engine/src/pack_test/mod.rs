//! A pack's own tests: its fixtures graded and compared with their expectations. The
//! binary's `grade rubric test` wraps this runner; an embedder can run it the same way.
//!
//! A fixture is any file under the pack's `tests/` folder (a source in a format the
//! registry reads) except `*.expected.jsonl`, `*.judgments.json`, `*.reference.jsonl` and
//! notes (`*.md`, `*.txt`); its expectation is `<name>.expected.jsonl` beside it: one result per session,
//! in order of first appearance. Compared per session: `totalScore`, `maxScore`,
//! `entryCount`, `flags` in order, and each dimension's `score`, `max`, whether it applies,
//! and `evidence` in order. A line may instead expect the session not to be graded:
//! `{"sessionId": "s9", "error": {"code": "E040", "message": "…"}}`, its code and message
//! compared exactly (a line without `message` compares the code alone).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::judgment::{Judgment, JudgmentError};
use crate::source::{Input, Registry};
use crate::{
    CompiledPack, EvalError, GradeOptions, GradeResult, PackOrigin, ReadOptions, SessionFilter,
    SourceError,
};

/// What an expectation file's name adds to its fixture's stem.
pub const EXPECTED_SUFFIX: &str = ".expected.jsonl";
/// What a judgments file's name adds to its fixture's stem.
pub(crate) const JUDGMENTS_SUFFIX: &str = ".judgments.json";
/// What a reference trajectories file's name adds to its fixture's stem.
pub(crate) const REFERENCE_SUFFIX: &str = ".reference.jsonl";

/// One fixture of a pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// As shown to the user: `tests/basic.jsonl`.
    pub name: String,
    /// The source file.
    pub source: PathBuf,
    /// Its expectation, `NAME.expected.jsonl` (it may not exist yet).
    pub expected: PathBuf,
    /// For packs with judged dimensions: `NAME.judgments.json`, an object mapping each
    /// session id of the fixture to its judgment (one object, or an array of chunks).
    pub judgments: PathBuf,
    /// For packs with trajectory metrics: `NAME.reference.jsonl`, the reference trajectories
    /// of the fixture's sessions, as `grade --reference` reads them (it may not exist).
    pub reference: PathBuf,
}

/// Why a pack's tests could not be run (a failing test is not an error: see [`TestRun`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestError {
    /// A file or folder of the tests could not be read or written.
    #[error("cannot access `{}`: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A fixture could not be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A judgment of a judgments file cannot be used.
    #[error(transparent)]
    Judgment(#[from] JudgmentError),
    /// A fixture's reference trajectories cannot be used.
    #[error(transparent)]
    Reference(#[from] crate::reference::ReferenceError),
    /// A judgments file is not an object of judgments.
    #[error("{}: judgments are a JSON object mapping session ids to judgments", path.display())]
    Judgments {
        /// The judgments file.
        path: PathBuf,
    },
    /// A session of a fixture has no judgment, and the pack scores dimensions from one.
    #[error("{fixture}: session `{session}` has no judgment in `{}`, and rubric `{pack}` scores dimensions from one", judgments.display())]
    NoJudgment {
        /// The fixture.
        fixture: String,
        /// The session.
        session: String,
        /// The judgments file.
        judgments: PathBuf,
        /// The pack's id.
        pack: String,
    },
    /// An expectation file could not be read.
    #[error("cannot read expected results `{}`: {source}", path.display())]
    ExpectedRead {
        /// The expectation file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line of an expectation file is not JSON.
    #[error("{}:{line}: not an expected result: {message}", path.display())]
    ExpectedLine {
        /// The expectation file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// A test that failed.
#[derive(Debug)]
pub enum Failure {
    /// The pack could not grade a session of a fixture that has no expectation (reported
    /// beside [`Failure::NoExpectation`], which counts the fixture's sessions as failed).
    Grade {
        /// The fixture.
        fixture: String,
        /// The session.
        session: String,
        /// Why.
        error: EvalError,
    },
    /// The fixture has no expectation file.
    NoExpectation {
        /// The fixture.
        fixture: String,
        /// The expectation file it lacks.
        expected: PathBuf,
    },
    /// A session the fixture has is not in the expectation.
    NotExpected {
        /// The fixture.
        fixture: String,
        /// The session.
        session: String,
    },
    /// The pack could not grade a session its expectation gives a result for.
    NotGraded {
        /// The fixture.
        fixture: String,
        /// The session.
        session: String,
        /// Why.
        error: EvalError,
    },
    /// A session graded otherwise than expected, or not graded otherwise than expected.
    Differs {
        /// The fixture.
        fixture: String,
        /// The session.
        session: String,
        /// The differences, a line each (`  totalScore: expected 10, got 9`,
        /// `  expected error: …` then `  got a result: …`).
        diff: String,
    },
    /// A session the expectation has is not in the fixture.
    Missing {
        /// The fixture.
        fixture: String,
        /// The session.
        session: String,
    },
}

impl fmt::Display for Failure {
    /// `FAIL …`, then the differences, each block ending in a blank line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Grade {
                fixture,
                session,
                error,
            } => writeln!(f, "FAIL {fixture} session `{session}`: {error}\n"),
            Failure::NotGraded {
                fixture,
                session,
                error,
            } => writeln!(
                f,
                "FAIL {fixture} session `{session}`\n  expected a result, got error: {error}\n"
            ),
            Failure::NoExpectation { fixture, expected } => writeln!(
                f,
                "FAIL {fixture}: no expectation `{}`\n",
                file_name(expected)
            ),
            Failure::NotExpected { fixture, session } => {
                writeln!(f, "FAIL {fixture} session `{session}`: not in the expectation\n")
            }
            Failure::Differs {
                fixture,
                session,
                diff,
            } => writeln!(f, "FAIL {fixture} session `{session}`\n{diff}"),
            Failure::Missing { fixture, session } => writeln!(
                f,
                "FAIL {fixture} session `{session}`: expected, but the fixture has no such session\n"
            ),
        }
    }
}

/// The file name of an expectation, as failures show it.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What running a pack's tests found.
#[derive(Debug)]
pub struct TestRun {
    /// Sessions graded as expected.
    pub passed: usize,
    /// Failed tests: sessions, or a fixture without expectation.
    pub failed: usize,
    /// Sessions whose expectation was rewritten (when updating).
    pub updated: usize,
    /// Sessions the pack could not grade, expected so or not (when updating, the ones whose
    /// expectation is now their error).
    pub not_graded: usize,
    /// Every failure, in the order found.
    pub failures: Vec<Failure>,
    /// How often each rule fired over the fixtures.
    pub coverage: Coverage,
}

/// The fixtures of a pack. A built-in pack's are written to a private temporary folder,
/// read like any other and removed when this is dropped.
#[derive(Debug)]
pub struct PackFixtures {
    /// The pack's `tests/` folder.
    pub dir: PathBuf,
    /// Its fixtures, sorted by name.
    pub fixtures: Vec<Fixture>,
    unpacked: Option<PathBuf>,
}

impl Drop for PackFixtures {
    fn drop(&mut self) {
        if let Some(dir) = &self.unpacked {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl PackFixtures {
    /// The fixtures of `pack`: its folder's `tests/`, or a built-in pack's shipped ones.
    pub fn of(pack: &CompiledPack) -> Result<PackFixtures, TestError> {
        let (dir, unpacked) = match &pack.origin {
            PackOrigin::Folder(dir) => (dir.join("tests"), None),
            PackOrigin::Builtin(id) => {
                let root = std::env::temp_dir()
                    .join(format!("grade-rubric-test-{}-{id}", std::process::id()));
                let mut guard = PackFixtures {
                    dir: root.join("tests"),
                    fixtures: Vec::new(),
                    unpacked: Some(root.clone()),
                };
                for (name, text) in crate::builtin_pack_tests(id) {
                    let path = guard.dir.join(name);
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent).map_err(|source| TestError::Io {
                            path: parent.to_owned(),
                            source,
                        })?;
                    }
                    std::fs::write(&path, text).map_err(|source| TestError::Io {
                        path: path.clone(),
                        source,
                    })?;
                }
                guard.fixtures = discover(&guard.dir)?;
                return Ok(guard);
            }
        };
        Ok(PackFixtures {
            fixtures: discover(&dir)?,
            dir,
            unpacked,
        })
    }
}

/// Grades every fixture and compares it with its expectation; with `update`, rewrites the
/// expectations from the results instead. Fixtures are read through `registry` (a pack's
/// plugin formats included, see [`Registry::with_plugins_of`]).
pub fn run(
    pack: &CompiledPack,
    registry: &Registry,
    fixtures: &[Fixture],
    update: bool,
) -> Result<TestRun, TestError> {
    let mut run = TestRun {
        passed: 0,
        failed: 0,
        updated: 0,
        not_graded: 0,
        failures: Vec::new(),
        coverage: Coverage::new(pack),
    };
    for fixture in fixtures {
        let outcomes = grade_fixture(pack, registry, fixture, &mut run.coverage)?;
        run.not_graded += outcomes.iter().filter(|o| o.outcome.is_err()).count();
        if update {
            write_outcomes(&fixture.expected, &outcomes)?;
            run.updated += outcomes.len();
            continue;
        }
        compare_fixture(fixture, outcomes, &mut run)?;
    }
    Ok(run)
}

/// A session of a fixture: its result, or why the pack could not grade it.
struct Outcome {
    session: String,
    outcome: Result<GradeResult, EvalError>,
}

/// What came of each session of a fixture, in order. A session the pack cannot grade is
/// an outcome like a result, which an expectation may expect; a fixture that cannot be
/// read, or a missing judgment, is an error of the run.
fn grade_fixture(
    pack: &CompiledPack,
    registry: &Registry,
    fixture: &Fixture,
    coverage: &mut Coverage,
) -> Result<Vec<Outcome>, TestError> {
    let sessions = registry
        .read(
            &Input::File(&fixture.source),
            None,
            &SessionFilter::All,
            &ReadOptions::default(),
        )?
        .sessions;
    let references = if fixture.reference.is_file() {
        Some(std::sync::Arc::new(crate::reference::References::read(
            &fixture.reference,
        )?))
    } else {
        None
    };
    let options = GradeOptions {
        now: 0,
        explain: true,
        references,
    };
    let judgments = read_judgments(&fixture.judgments, pack)?;
    let mut outcomes = Vec::with_capacity(sessions.len());
    for session in &sessions {
        let judgment = judgments.get(&session.id);
        if judgment.is_none() && pack.judge.is_some() {
            return Err(TestError::NoJudgment {
                fixture: fixture.name.clone(),
                session: session.id.clone(),
                judgments: fixture.judgments.clone(),
                pack: pack.id.clone(),
            });
        }
        // A session not graded fires no rule: it adds nothing to the coverage.
        let outcome = pack.grade_with(session, judgment, &options);
        if let Ok(result) = &outcome {
            coverage.record(result);
        }
        outcomes.push(Outcome {
            session: session.id.clone(),
            outcome,
        });
    }
    Ok(outcomes)
}

/// Compares what came of a fixture's sessions with its expectation, session by session.
fn compare_fixture(
    fixture: &Fixture,
    outcomes: Vec<Outcome>,
    run: &mut TestRun,
) -> Result<(), TestError> {
    let Some(expected) = read_expected(&fixture.expected)? else {
        run.failed += outcomes.len().max(1);
        // Why a session could not be graded helps before its error is written as expected.
        for Outcome { session, outcome } in outcomes {
            if let Err(error) = outcome {
                run.failures.push(Failure::Grade {
                    fixture: fixture.name.clone(),
                    session,
                    error,
                });
            }
        }
        run.failures.push(Failure::NoExpectation {
            fixture: fixture.name.clone(),
            expected: fixture.expected.clone(),
        });
        return Ok(());
    };
    let mut by_id: BTreeMap<String, &Value> = BTreeMap::new();
    for e in &expected {
        by_id.insert(e["sessionId"].as_str().unwrap_or_default().to_owned(), e);
    }
    for Outcome { session, outcome } in outcomes {
        let fixture = fixture.name.clone();
        let Some(want) = by_id.remove(&session) else {
            run.failed += 1;
            run.failures.push(Failure::NotExpected { fixture, session });
            continue;
        };
        let diff = match (want.get("error"), outcome) {
            (Some(error), outcome) => diff_error(error, &outcome),
            (None, Ok(result)) => diff_results(want, &compared_fields(&result)),
            (None, Err(error)) => {
                run.failed += 1;
                run.failures.push(Failure::NotGraded {
                    fixture,
                    session,
                    error,
                });
                continue;
            }
        };
        if diff.is_empty() {
            run.passed += 1;
        } else {
            run.failed += 1;
            run.failures.push(Failure::Differs {
                fixture,
                session,
                diff,
            });
        }
    }
    for session in by_id.into_keys() {
        run.failed += 1;
        run.failures.push(Failure::Missing {
            fixture: fixture.name.clone(),
            session,
        });
    }
    Ok(())
}

fn read_judgments(
    path: &Path,
    pack: &CompiledPack,
) -> Result<BTreeMap<String, Judgment>, TestError> {
    let text =
        match crate::file::read_text_capped(path, crate::file::MAX_DOCUMENT, "judgments file") {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(source) => {
                return Err(TestError::Io {
                    path: path.to_owned(),
                    source,
                })
            }
        };
    let shown = path.display().to_string();
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text) else {
        return Err(TestError::Judgments {
            path: path.to_owned(),
        });
    };
    map.into_iter()
        .map(|(session, judgment)| {
            let origin = format!("{shown} (session `{session}`)");
            let parsed = crate::judgment::parse_judgment(&judgment.to_string(), &origin, pack)?;
            Ok((session, parsed))
        })
        .collect()
}

/// The fixtures under `dir` (and its subfolders), sorted by name; none when it is missing.
pub fn discover(dir: &Path) -> Result<Vec<Fixture>, TestError> {
    let mut fixtures = Vec::new();
    if !dir.is_dir() {
        return Ok(fixtures);
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(folder) = stack.pop() {
        let io = |source| TestError::Io {
            path: folder.clone(),
            source,
        };
        for entry in std::fs::read_dir(&folder).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if name.ends_with(EXPECTED_SUFFIX)
                || name.ends_with(JUDGMENTS_SUFFIX)
                || name.ends_with(REFERENCE_SUFFIX)
                || name.ends_with(".md")
                || name.ends_with(".txt")
                || name.starts_with('.')
            {
                continue;
            }
            let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
            let expected = path.with_file_name(format!("{stem}{EXPECTED_SUFFIX}"));
            let judgments = path.with_file_name(format!("{stem}{JUDGMENTS_SUFFIX}"));
            let reference = path.with_file_name(format!("{stem}{REFERENCE_SUFFIX}"));
            let shown = path
                .strip_prefix(dir.parent().unwrap_or(dir))
                .unwrap_or(&path)
                .display()
                .to_string();
            fixtures.push(Fixture {
                name: shown,
                source: path,
                expected,
                judgments,
                reference,
            });
        }
    }
    fixtures.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(fixtures)
}

mod coverage;
mod expectation;

pub use coverage::Coverage;
pub use expectation::write_expected;
use expectation::{compared_fields, diff_error, diff_results, read_expected, write_outcomes};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_packs_pass_their_own_tests() {
        for id in crate::builtin_pack_ids() {
            let pack = crate::load_pack(id, &[]).unwrap();
            let fixtures = PackFixtures::of(&pack).unwrap();
            let unpacked = fixtures.dir.clone();
            assert!(!fixtures.fixtures.is_empty(), "{id} ships fixtures");
            let run = run(&pack, Registry::builtin(), &fixtures.fixtures, false).unwrap();
            assert_eq!(
                (run.failed, run.failures.len()),
                (0, 0),
                "{id}: {:?}",
                run.failures
            );
            assert!(run.passed > 0, "{id}");
            drop(fixtures);
            assert!(
                !unpacked.exists(),
                "a built-in pack's fixtures are removed after"
            );
        }
    }

    #[test]
    fn a_result_that_differs_from_its_expectation_is_a_failure_naming_the_field() {
        let pack = crate::load_pack("cleo-v1", &[]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("tests").join("log.jsonl");
        std::fs::create_dir_all(source.parent().unwrap()).unwrap();
        let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cleo-audit.jsonl");
        std::fs::copy(&log, &source).unwrap();
        let fixtures = discover(&dir.path().join("tests")).unwrap();
        assert_eq!(fixtures.len(), 1);
        assert_eq!(fixtures[0].name, "tests/log.jsonl");

        // No expectation yet: one failure, then updating writes it and the tests pass.
        let first = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert!(matches!(
            first.failures[..],
            [Failure::NoExpectation { .. }]
        ));
        let updated = run(&pack, Registry::builtin(), &fixtures, true).unwrap();
        assert!(updated.updated > 0);
        let again = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert_eq!((again.failed, again.passed), (0, updated.updated));

        // A total changed by hand is reported with what was expected and what came out.
        let expected = std::fs::read_to_string(&fixtures[0].expected).unwrap();
        let mut lines: Vec<Value> = expected
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let got = lines[0]["totalScore"].clone();
        lines[0]["totalScore"] = Value::from(-1);
        let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(&fixtures[0].expected, text).unwrap();
        let changed = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert_eq!(changed.failed, 1);
        let report = changed.failures[0].to_string();
        assert!(
            report.contains(&format!("  totalScore: expected -1, got {got}")),
            "{report}"
        );
    }
}

#[cfg(test)]
mod expected_errors {
    use super::*;

    const DESCRIPTION: &str = "rubric `cleo-v1` cannot grade session `description-number`: `blank` of selector `task_added_without_description` tests text, and `params.description` of the entry at `not-text.jsonl:5` is a number (`7`) [E040]";

    /// cleo-v1 and a copy of its shipped `not-text` fixture (a graded session and two it
    /// cannot grade), with the shipped expectation.
    fn not_text() -> (CompiledPack, tempfile::TempDir, Vec<Fixture>) {
        let pack = crate::load_pack("cleo-v1", &[]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let tests = dir.path().join("tests");
        std::fs::create_dir_all(&tests).unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rubrics/cleo-v1/tests");
        for name in ["not-text.jsonl", "not-text.expected.jsonl"] {
            std::fs::copy(shipped.join(name), tests.join(name)).unwrap();
        }
        let fixtures = discover(&tests).unwrap();
        (pack, dir, fixtures)
    }

    /// Rewrites the expected line of `session` with `edit`.
    fn expect(fixture: &Fixture, session: &str, edit: impl Fn(&mut Value)) {
        let text = std::fs::read_to_string(&fixture.expected).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            let mut value: Value = serde_json::from_str(line).unwrap();
            if value["sessionId"] == session {
                edit(&mut value);
            }
            out.push_str(&format!("{value}\n"));
        }
        std::fs::write(&fixture.expected, out).unwrap();
    }

    fn report(run: &TestRun) -> String {
        run.failures.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_session_expected_not_to_be_graded_passes_when_it_fails_with_that_error() {
        let (pack, _dir, fixtures) = not_text();
        let run = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert_eq!(
            (run.passed, run.failed, run.not_graded),
            (3, 0, 2),
            "{}",
            report(&run)
        );

        // The code alone, without the message, is enough to expect.
        expect(&fixtures[0], "description-number", |v| {
            v["error"] = serde_json::json!({"code": "E040"});
        });
        let run = super::run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert_eq!((run.passed, run.failed), (3, 0), "{}", report(&run));
    }

    #[test]
    fn an_expected_error_with_another_message_or_code_fails_showing_both() {
        let (pack, _dir, fixtures) = not_text();
        expect(&fixtures[0], "description-number", |v| {
            v["error"] = serde_json::json!({"message": DESCRIPTION.replace("(`7`)", "(`8`)")});
        });
        let run = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert_eq!((run.passed, run.failed), (2, 1));
        assert_eq!(
            report(&run),
            format!(
                "FAIL tests/not-text.jsonl session `description-number`\n  error.code: expected none, got \"E040\"\n  error.message:\n    - {}\n    + {DESCRIPTION}\n\n",
                DESCRIPTION.replace("(`7`)", "(`8`)")
            )
        );
    }

    #[test]
    fn an_expected_error_of_a_session_that_is_graded_fails_showing_the_result() {
        let (pack, _dir, fixtures) = not_text();
        expect(&fixtures[0], "graded", |v| {
            *v = serde_json::json!({"sessionId": "graded", "error": {"code": "E040"}});
        });
        let run = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert_eq!((run.passed, run.failed), (2, 1));
        assert_eq!(
            report(&run),
            "FAIL tests/not-text.jsonl session `graded`\n  expected error: code E040, any message\n  got a result: totalScore 80, maxScore 100\n\n"
        );
    }

    #[test]
    fn an_expected_result_of_a_session_that_is_not_graded_fails_naming_the_error() {
        let (pack, _dir, fixtures) = not_text();
        let graded = std::fs::read_to_string(&fixtures[0].expected).unwrap();
        let graded: Value = serde_json::from_str(graded.lines().next().unwrap()).unwrap();
        expect(&fixtures[0], "description-number", |v| {
            *v = graded.clone();
            v["sessionId"] = "description-number".into();
        });
        let run = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert_eq!((run.passed, run.failed), (2, 1));
        assert!(matches!(run.failures[..], [Failure::NotGraded { .. }]));
        assert_eq!(
            report(&run),
            format!("FAIL tests/not-text.jsonl session `description-number`\n  expected a result, got error: {DESCRIPTION}\n\n")
        );
    }

    /// Before, one session the pack could not grade failed every session of its fixture, and
    /// updating skipped the fixture: its error could not be expected.
    #[test]
    fn updating_writes_the_error_of_a_session_that_is_not_graded() {
        let (pack, _dir, fixtures) = not_text();
        let shipped = std::fs::read_to_string(&fixtures[0].expected).unwrap();
        std::fs::remove_file(&fixtures[0].expected).unwrap();
        let missing = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        assert_eq!(missing.failed, 3);
        assert!(matches!(
            missing.failures[..],
            [
                Failure::Grade { .. },
                Failure::Grade { .. },
                Failure::NoExpectation { .. }
            ]
        ));

        let updated = run(&pack, Registry::builtin(), &fixtures, true).unwrap();
        assert_eq!((updated.updated, updated.not_graded), (3, 2));
        assert!(updated.failures.is_empty());
        let written = std::fs::read_to_string(&fixtures[0].expected).unwrap();
        assert_eq!(written, shipped);
        assert_eq!(
            written.lines().nth(1).unwrap(),
            format!(
                r#"{{"sessionId":"description-number","error":{{"code":"E040","message":{}}}}}"#,
                Value::from(DESCRIPTION)
            )
        );
    }

    #[test]
    fn a_fixture_that_cannot_be_read_stays_an_error_when_updating() {
        let (pack, _dir, fixtures) = not_text();
        let before = std::fs::read_to_string(&fixtures[0].expected).unwrap();
        std::fs::write(&fixtures[0].source, "{\"sessionId\": \n").unwrap();
        for update in [false, true] {
            let err = run(&pack, Registry::builtin(), &fixtures, update).unwrap_err();
            assert!(matches!(err, TestError::Source(_)), "{err}");
        }
        let after = std::fs::read_to_string(&fixtures[0].expected).unwrap();
        assert_eq!(before, after);
    }

    /// A session not graded fires no rule, and the rules the graded one fired still count.
    #[test]
    fn a_session_not_graded_adds_nothing_to_the_coverage() {
        let (pack, _dir, fixtures) = not_text();
        let with_errors = run(&pack, Registry::builtin(), &fixtures, false).unwrap();
        let text = std::fs::read_to_string(&fixtures[0].source).unwrap();
        let graded: String = text
            .lines()
            .filter(|l| l.contains(r#""sessionId": "graded""#))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&fixtures[0].source, graded).unwrap();
        let alone = run(&pack, Registry::builtin(), &fixtures, true).unwrap();
        assert_eq!(alone.not_graded, 0);
        assert_eq!(with_errors.coverage.table(), alone.coverage.table());
        assert_eq!(with_errors.coverage.percent(), alone.coverage.percent());
        assert!(with_errors.coverage.percent() > 0.0);
    }
}
