//! `grade rubric test`: the engine's pack test runner ([`grade_engine::pack_test`]) with the
//! binary's flags, report and exit codes.

use grade_engine::pack_test::{self, Failure, PackFixtures};
use grade_engine::{PackOrigin, Registry};

use crate::args::RubricTestArgs;
use crate::error::CliError;
use crate::write_stdout;

/// Runs a pack's tests (or, with `--update`, rewrites their expectations) and reports.
pub fn run(
    args: &RubricTestArgs,
    search_path: &[std::path::PathBuf],
    policy: grade_engine::plugin::PluginPolicy,
) -> Result<(), CliError> {
    let files = grade_engine::locate_pack(&args.pack, search_path)?;
    let pack = grade_engine::pack::compile_pack_with(&files, policy)?;
    if let (PackOrigin::Builtin(id), true) = (&pack.origin, args.update) {
        return Err(CliError::Usage(format!(
            "`--update` rewrites a pack's files, and `{id}` is built into the binary; run it on the pack's folder (`rubrics/{id}`)"
        )));
    }
    let fixtures = PackFixtures::of(&pack)?;
    if fixtures.fixtures.is_empty() {
        return Err(CliError::CheckFailed(format!(
            "pack `{}` has no test fixtures in `{}` (add `tests/NAME.jsonl` with `tests/NAME{}`)",
            pack.id,
            fixtures.dir.display(),
            pack_test::EXPECTED_SUFFIX
        )));
    }
    // A fixture in a format of the pack's plugins is read by that plugin.
    let registry = Registry::with_plugins_of(&pack)
        .map_err(|e| CliError::Usage(format!("rubric `{}`: {e}", pack.id)))?;
    let run = pack_test::run(&pack, &registry, &fixtures.fixtures, args.update)?;
    let mut out: String = run.failures.iter().map(describe).collect();
    if args.coverage || args.min_coverage.is_some() {
        out.push_str(&run.coverage.table());
    }
    out.push_str(&if args.update {
        // An error written as expected passes from then on: say so, for the diff's review.
        let not_graded = match run.not_graded {
            0 => String::new(),
            1 => " (1 not graded: its error is expected)".to_owned(),
            n => format!(" ({n} not graded: their errors are expected)"),
        };
        format!(
            "updated the expectations of {} session{} in {} fixture{}{not_graded}\n",
            run.updated,
            plural_s(run.updated),
            fixtures.fixtures.len(),
            plural_s(fixtures.fixtures.len())
        )
    } else {
        format!("{} passed, {} failed\n", run.passed, run.failed)
    });
    write_stdout(out.as_bytes())?;
    verdict(&run, args.min_coverage)
}

/// A failure as the report shows it, with the flag that helps where one does.
pub(crate) fn describe(failure: &Failure) -> String {
    match failure {
        Failure::Grade {
            fixture,
            session,
            error,
        } => format!(
            "FAIL {fixture} session `{session}`: {}\n\n",
            crate::error::eval_message(error)
        ),
        Failure::NotGraded {
            fixture,
            session,
            error,
        } => format!(
            "FAIL {fixture} session `{session}`\n  expected a result, got error: {}\n\n",
            crate::error::eval_message(error)
        ),
        Failure::NoExpectation { fixture, expected } => format!(
            "FAIL {fixture}: no expectation `{}` (run with `--update` to write it from the current results)\n\n",
            pack_test::file_name(expected)
        ),
        other => other.to_string(),
    }
}

/// Exit 1 when a test failed or the rules' coverage is below `--min-coverage`.
fn verdict(run: &pack_test::TestRun, min_coverage: Option<f64>) -> Result<(), CliError> {
    if run.failed > 0 {
        return Err(CliError::CheckFailed(format!(
            "{} pack test{} failed",
            run.failed,
            plural_s(run.failed)
        )));
    }
    match min_coverage {
        Some(min) if run.coverage.percent() < min => Err(CliError::CheckFailed(format!(
            "rule coverage {}% is below the required {}%: {} never fired",
            grade_engine::entry::js_number(run.coverage.percent()),
            grade_engine::entry::js_number(min),
            run.coverage.never_fired().join(", ")
        ))),
        _ => Ok(()),
    }
}

fn plural_s(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
