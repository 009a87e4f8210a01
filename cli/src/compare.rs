//! `grade compare`: the flags become a plan (which form, which sides), the engine's
//! `compare` module does the work, and this file renders it as text, JSON or HTML.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use grade_engine::compare::recorded::{self, RecordedError, RecordedSide};
use grade_engine::compare::{self, Comparison, FailOn, Layout, PackSource, Pairing};
use grade_engine::pack::Field;
use grade_engine::plugin::PluginPolicy;
use grade_engine::{CompiledPack, GradeResult, PackFiles, SessionFilter};

use crate::error::CliError;
use crate::plan::{ComparePlan, Form};
use crate::render;

/// The sessions of a read, its warnings printed as grading prints them: what the read
/// skipped or guessed is no less true of a comparison. How many lines it skipped is kept in
/// `skipped`, for the run's last word on them ([`run`]).
fn warned(
    read: grade_engine::Mapped<compare::GradedSession>,
    source: &Path,
    skipped: &mut Vec<(u64, PathBuf)>,
) -> Vec<compare::GradedSession> {
    for warning in &read.warnings {
        eprintln!("warning: {}", render::for_stderr(&warning.to_string()));
    }
    skipped.push((read.skipped_lines, source.to_owned()));
    read.results
}

fn usage(message: impl Into<String>) -> CliError {
    CliError::Usage(message.into())
}

/// A pack and the files it was compiled from.
type Loaded = (CompiledPack, PackFiles);

fn source_of((pack, files): &Loaded) -> PackSource<'_> {
    PackSource { pack, files }
}

fn load(spec: &str, search_path: &[PathBuf], policy: PluginPolicy) -> Result<Loaded, CliError> {
    let files = grade_engine::locate_pack(spec, search_path)?;
    let pack = grade_engine::pack::compile_pack_with(&files, policy)?;
    if let Some(why) = compare::judged_refusal(&pack) {
        return Err(usage(format!(
            "{why} (`grade compare BASE.jsonl CAND.jsonl`)"
        )));
    }
    Ok((pack, files))
}

/// Compares as planned, then says how many lines each source read lost, as grading ends:
/// after the report, whether the comparison passed, failed or found nothing to compare.
pub fn run(plan: ComparePlan) -> Result<(), CliError> {
    let mut skipped = Vec::new();
    let outcome = run_comparison(plan, &mut skipped);
    for (lines, source) in &skipped {
        crate::report_skipped(*lines, source);
    }
    outcome
}

/// What every form of comparison shares: the plan's settings, and what the run has found so
/// far (lines a source read skipped, grades that could not be made).
struct Run<'a> {
    plan: &'a ComparePlan,
    skipped: &'a mut Vec<(u64, PathBuf)>,
    failed: usize,
}

fn run_comparison(plan: ComparePlan, skipped: &mut Vec<(u64, PathBuf)>) -> Result<(), CliError> {
    let mut run = Run {
        plan: &plan,
        skipped,
        failed: 0,
    };
    let rules = &plan.rules;
    let mut report = match &plan.form {
        Form::Rubrics {
            base,
            cand,
            source,
            all,
        } => run.rubrics(base, cand, source, *all)?,
        Form::Recorded { base, cand } => run.recorded(base, cand)?,
        Form::Arms {
            rubric,
            arms,
            pair_by,
        } => run.arms(rubric, arms, pair_by.as_deref(), rules)?,
    };
    warn_unmatched(&report);
    // A comparison of nothing has no mean change: every gate would pass on it in silence.
    if let Some(why) = report.nothing_to_compare() {
        return Err(CliError::Usage(format!("nothing to compare: {why}")));
    }
    crate::compare_render::deliver(&plan.output, &mut report)?;
    let verdict = report.verdict(rules);
    if let Some(why) = &verdict.unjudged {
        eprintln!("warning: {why}");
    }
    if !verdict.failures.is_empty() {
        return Err(CliError::CheckFailed(format!(
            "compare failed: {}",
            verdict.failures.join("; ")
        )));
    }
    if run.failed > 0 {
        return Err(CliError::CheckFailed(format!(
            "{} grade{} could not be made",
            run.failed,
            if run.failed == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

impl Run<'_> {
    /// Two rubrics over the sessions of one source, each session graded by both in one read
    /// ([`compare::TwoPacks`]).
    fn rubrics(
        &mut self,
        base: &str,
        cand: &str,
        source: &crate::input::Source,
        all: bool,
    ) -> Result<Comparison, CliError> {
        // Both packs are loaded before either is refused, so that one run says what is
        // wrong with each.
        let (a, b) = match (
            load(base, &self.plan.search_path, self.plan.policy),
            load(cand, &self.plan.search_path, self.plan.policy),
        ) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(ea), Err(eb)) => {
                eprintln!("error: {}", render::for_stderr(&ea.to_string()));
                return Err(eb);
            }
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let two = compare::TwoPacks::new(source_of(&a), base, source_of(&b), cand);
        let named = (!all).then_some(self.plan.named.as_slice());
        let graded = warned(
            two.grade_source(
                &source.path,
                self.plan.format.as_deref(),
                named,
                self.plan.skip_bad_lines,
                self.plan.references.clone(),
            )?,
            &source.path,
            self.skipped,
        );
        let done = two
            .compare(graded, named, &source.path, &self.plan.options)
            .map_err(|e| usage(e.to_string()))?;
        for e in &done.failed {
            eprintln!(
                "error: {}",
                crate::render::for_stderr(&crate::error::grade_error_message(e))
            );
            self.failed += 1;
        }
        Ok(done.report)
    }

    /// Two files of recorded results, compared by the engine ([`recorded::compare_recorded`]).
    fn recorded(&mut self, base: &Path, cand: &Path) -> Result<Comparison, CliError> {
        let (ra, pa) = read_recorded(base, &self.plan.search_path, self.plan.policy)?;
        let (rb, pb) = read_recorded(cand, &self.plan.search_path, self.plan.policy)?;
        recorded::compare_recorded(
            RecordedSide::new(base.display().to_string(), ra, pa.as_ref()),
            RecordedSide::new(cand.display().to_string(), rb, pb.as_ref()),
            &self.plan.options,
            recorded::Hints::BINARY,
            &mut |warning| eprintln!("warning: {warning}"),
        )
        .map_err(|e| usage(e.to_string()))
    }

    /// One rubric over two arms, paired by `pair_by` or not at all (then `--fail-on flips`
    /// is refused, once the arms are read).
    fn arms(
        &mut self,
        rubric: &str,
        arms: &[(String, crate::input::Source); 2],
        pair_by: Option<&str>,
        rules: &[FailOn],
    ) -> Result<Comparison, CliError> {
        let p = load(rubric, &self.plan.search_path, self.plan.policy)?;
        let layout = Layout::of_pack(&p.0);
        let field = pair_by
            .map(Field::parse)
            .transpose()
            .map_err(|e| usage(format!("`--pair-by`: {e}")))?;
        let mut sides = Vec::new();
        for (name, source) in arms {
            let mut graded = warned(
                compare::grade_source(
                    &[(&p.0, &layout)],
                    &source.path,
                    self.plan.format.as_deref(),
                    &SessionFilter::All,
                    field.as_ref(),
                    self.plan.skip_bad_lines,
                    self.plan.references.clone(),
                )?,
                &source.path,
                self.skipped,
            );
            let (side, errors) = compare::sides_of(name, &layout, &mut graded, 0);
            for e in &errors {
                eprintln!(
                    "error: arm `{name}`: {}",
                    crate::error::grade_error_message(e)
                );
                self.failed += 1;
            }
            if let Some(key) = pair_by {
                warn_unkeyed(name, key, &side.keys);
            }
            sides.push(side);
        }
        let pairing = match pair_by {
            Some(k) => Pairing::ByKey(k.to_owned()),
            None => Pairing::Unpaired,
        };
        if pairing == Pairing::Unpaired && rules.contains(&FailOn::Flips) {
            return Err(usage(
                "`--fail-on flips` needs paired sessions: pair the arms with `--pair-by FIELD`",
            ));
        }
        Ok(compare::compare(
            &sides[0],
            &sides[1],
            &pairing,
            None,
            &self.plan.options,
        ))
    }
}

/// Sessions of an arm that cannot be paired: without the key, or sharing it.
fn warn_unkeyed(name: &str, key: &str, keys: &[Option<String>]) {
    let unkeyed = keys.iter().filter(|k| k.is_none()).count();
    if unkeyed > 0 {
        eprintln!(
            "warning: arm `{name}`: {unkeyed} session{} without `{key}` cannot be paired",
            if unkeyed == 1 { "" } else { "s" }
        );
    }
    if let Some(warning) = shared_keys_warning(name, key, keys) {
        eprintln!(
            "warning: {}",
            crate::render::for_stderr(&warning.to_string())
        );
    }
}

/// Sessions left out of the comparison, said before the report.
fn warn_unmatched(report: &Comparison) {
    for left in report.left_out() {
        eprintln!("warning: {}", left.warning(render::escape_controls));
    }
}

/// Sessions of an arm that share a pairing key pair with nobody (which of them would be the
/// pair is a guess): says how many, and the first such key.
fn shared_keys_warning(arm: &str, key: &str, keys: &[Option<String>]) -> Option<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for k in keys.iter().flatten() {
        *count.entry(k.as_str()).or_insert(0) += 1;
    }
    let shared: usize = count.values().filter(|&&n| n > 1).sum();
    if shared == 0 {
        return None;
    }
    let first = keys
        .iter()
        .flatten()
        .find(|k| count.get(k.as_str()).is_some_and(|&n| n > 1))?;
    Some(format!(
        "arm `{arm}`: {shared} sessions share a `{key}` with another session of the arm (`{}` first) and cannot be paired",
        render::escape_controls(first)
    ))
}

/// The results of a file (the last of each session), and their pack when it is at hand with
/// the digest the results name (then its starts, clamps and rule changes are known), as the
/// engine reads them ([`recorded::read_side`]); what it warns of is printed as it is found.
fn read_recorded(
    path: &Path,
    search_path: &[PathBuf],
    policy: PluginPolicy,
) -> Result<(Vec<GradeResult>, Option<Loaded>), CliError> {
    let text = crate::grades::read_text(path)?
        .ok_or_else(|| usage(format!("results file `{}` does not exist", path.display())))?;
    let read = recorded::read_side(
        &path.display().to_string(),
        &text,
        "the file",
        search_path,
        policy,
        &mut |warning| eprintln!("warning: {warning}"),
    )
    .map_err(|e| match e {
        RecordedError::NotAResult { line, message, .. } => CliError::GradesLine {
            path: path.to_owned(),
            line,
            message,
        },
        e => usage(e.to_string()),
    })?;
    Ok((read.results, read.pack))
}
