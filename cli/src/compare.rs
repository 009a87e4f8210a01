//! `grade compare`: the flags become a plan (which form, which sides), the engine's
//! `compare` module does the work, and this file renders it as text, JSON or HTML.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use grade_engine::compare::{
    self, CompareOptions, Comparison, FailOn, Layout, PackSource, Pairing, Side, Status,
};
use grade_engine::pack::Field;
use grade_engine::plugin::PluginPolicy;
use grade_engine::{CompiledPack, GradeResult, PackFiles, SessionFilter};

use crate::args::CompareArgs;
use crate::error::CliError;
use crate::render::{self, use_color, Paint};

/// What the flags ask for, checked.
enum Form {
    /// Two rubrics, one source: each session graded by both in one read.
    Rubrics {
        base: String,
        cand: String,
        source: crate::input::Source,
        filter: SessionFilter,
    },
    /// Two files of recorded results.
    Recorded { base: PathBuf, cand: PathBuf },
    /// One rubric, two sources.
    Arms {
        rubric: String,
        arms: [(String, crate::input::Source); 2],
        pair_by: Option<String>,
    },
}

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

fn plan(args: &CompareArgs) -> Result<Form, CliError> {
    if !args.arms.is_empty() {
        if args.rubric.len() != 1 {
            return Err(usage(
                "arms are graded by one rubric: give `--rubric ID|PATH` once with `--arm NAME=SOURCE` twice",
            ));
        }
        if args.arms.len() != 2 {
            return Err(usage(format!(
                "give exactly two arms (`--arm NAME=SOURCE` twice), not {}",
                args.arms.len()
            )));
        }
        if args.source.is_some() || args.all || !args.inputs.is_empty() {
            return Err(usage(
                "with `--arm`, each arm names its source and all its sessions are compared: drop `--source`, `--all` and session ids",
            ));
        }
        let mut arms = Vec::new();
        for arm in &args.arms {
            let Some((name, source)) = arm
                .split_once('=')
                .filter(|(n, s)| !n.is_empty() && !s.is_empty())
            else {
                return Err(usage(format!("`--arm {arm}` is not `NAME=SOURCE`")));
            };
            let path = PathBuf::from(source);
            if source != "-" && !path.exists() {
                return Err(usage(format!(
                    "source `{source}` of arm `{name}` does not exist"
                )));
            }
            arms.push((name.to_owned(), path));
        }
        if arms[0].0 == arms[1].0 {
            return Err(usage(format!("both arms are named `{}`", arms[0].0)));
        }
        if arms.iter().all(|(_, path)| path.as_os_str() == "-") {
            return Err(usage(
                "both arms read standard input (`-`), which can be read once: save one to a file",
            ));
        }
        // A pipe or standard input is read whole first, as `grade --source` reads it.
        let mut read = Vec::new();
        for (name, path) in arms {
            read.push((name, crate::input::source(&path)?));
        }
        let mut arms = read;
        if let Some(field) = &args.pair_by {
            Field::parse(field).map_err(|e| usage(format!("`--pair-by`: {e}")))?;
        }
        let second = arms.pop();
        let first = arms.pop();
        let (Some(first), Some(second)) = (first, second) else {
            return Err(usage("give exactly two arms"));
        };
        return Ok(Form::Arms {
            rubric: args.rubric[0].clone(),
            arms: [first, second],
            pair_by: args.pair_by.clone(),
        });
    }
    if args.pair_by.is_some() {
        return Err(usage(
            "`--pair-by` pairs the sessions of two arms (`--arm NAME=SOURCE`); rubric versions and recorded results pair by session id",
        ));
    }
    match args.rubric.len() {
        2 => {
            if args.all && !args.inputs.is_empty() {
                return Err(usage("give session ids or `--all`, not both"));
            }
            if !args.all && args.inputs.is_empty() {
                return Err(usage(
                    "name the sessions to compare, or pass `--all` to compare every session of the source",
                ));
            }
            // A pipe or standard input is read whole first, as `grade --source` reads it.
            let source = crate::input::source(&match &args.source {
                Some(path) => path.clone(),
                None => crate::default_source()?,
            })?;
            let filter = if args.all {
                SessionFilter::All
            } else {
                SessionFilter::only(args.inputs.iter().cloned())
            };
            Ok(Form::Rubrics {
                base: args.rubric[0].clone(),
                cand: args.rubric[1].clone(),
                source,
                filter,
            })
        }
        0 => {
            if args.inputs.len() != 2 || args.all || args.source.is_some() {
                return Err(usage(
                    "compare two rubrics (`--rubric BASE --rubric CAND --source FILE --all`), two files of recorded results (`BASE.jsonl CAND.jsonl`), or two arms (`--rubric R --arm A=SOURCE --arm B=SOURCE`)",
                ));
            }
            Ok(Form::Recorded {
                base: PathBuf::from(&args.inputs[0]),
                cand: PathBuf::from(&args.inputs[1]),
            })
        }
        1 => Err(usage(
            "one rubric compares two arms (`--arm NAME=SOURCE` twice); to compare rubric versions give `--rubric` twice",
        )),
        n => Err(usage(format!("give `--rubric` at most twice, not {n} times"))),
    }
}

fn fail_rules(args: &CompareArgs) -> Result<Vec<FailOn>, CliError> {
    args.fail_on
        .iter()
        .map(|rule| match rule.as_str() {
            "regression" => Ok(FailOn::Regression),
            "flips" => Ok(FailOn::Flips),
            other => match other.strip_prefix("drop=").map(str::parse::<f64>) {
                Some(Ok(x)) if x.is_finite() && x >= 0.0 => Ok(FailOn::Drop(x)),
                _ => Err(usage(format!(
                    "`--fail-on {other}`: expected `regression`, `flips` or `drop=X` with X a number of points ≥ 0"
                ))),
            },
        })
        .collect()
}

fn load(
    spec: &str,
    search_path: &[PathBuf],
    policy: PluginPolicy,
) -> Result<(CompiledPack, PackFiles), CliError> {
    let files = grade_engine::locate_pack(spec, search_path)?;
    let pack = grade_engine::pack::compile_pack_with(&files, policy)?;
    if pack.judge.is_some() {
        return Err(usage(format!(
            "rubric `{}` scores dimensions from a judgment; compare its recorded results instead (`grade compare BASE.jsonl CAND.jsonl`)",
            pack.id
        )));
    }
    Ok((pack, files))
}

fn diff_of(a: &(CompiledPack, PackFiles), b: &(CompiledPack, PackFiles)) -> compare::RubricDiff {
    compare::rubric_diff(
        PackSource {
            pack: &a.0,
            files: &a.1,
        },
        PackSource {
            pack: &b.0,
            files: &b.1,
        },
    )
}

/// Refuses an `--html` page that would be written over a file the comparison reads: the page
/// is written after the inputs are read, so the run would end by destroying its own input.
fn html_clear_of_inputs(form: &Form, html: Option<&Path>) -> Result<(), CliError> {
    let Some(html) = html else {
        return Ok(());
    };
    // `-` is standard input or output elsewhere; here it made a file of that name.
    if html.as_os_str() == "-" {
        return Err(usage(
            "`--html -` would write a file named `-`: give the page a file name (the report on standard output is `--format`'s)",
        ));
    }
    let inputs: Vec<&Path> = match form {
        Form::Rubrics { source, .. } => vec![&source.path],
        Form::Recorded { base, cand } => vec![base, cand],
        Form::Arms { arms, .. } => arms.iter().map(|(_, s)| s.path.as_path()).collect(),
    };
    match inputs
        .into_iter()
        .find(|input| crate::plan::same_file(input, html))
    {
        Some(input) => Err(usage(format!(
            "`--html {}` would be written over `{}`, which the comparison reads: choose another file",
            html.display(),
            input.display()
        ))),
        None => Ok(()),
    }
}

/// Compares as the flags ask, then says how many lines each source read lost, as grading
/// ends: after the report, whether the comparison passed, failed or found nothing to compare.
pub fn run(
    args: &CompareArgs,
    search_path: &[PathBuf],
    policy: PluginPolicy,
) -> Result<(), CliError> {
    let mut skipped = Vec::new();
    let outcome = run_comparison(args, search_path, policy, &mut skipped);
    for (lines, source) in &skipped {
        crate::report_skipped(*lines, source);
    }
    outcome
}

fn run_comparison(
    args: &CompareArgs,
    search_path: &[PathBuf],
    policy: PluginPolicy,
    skipped: &mut Vec<(u64, PathBuf)>,
) -> Result<(), CliError> {
    let form = plan(args)?;
    html_clear_of_inputs(&form, args.html.as_deref())?;
    let format = if args.source_format == crate::args::AUTO_FORMAT {
        None
    } else {
        match grade_engine::source::Registry::builtin().get(&args.source_format) {
            Some(f) => Some(f.clone()),
            None => {
                return Err(usage(format!(
                    "`--source-format {}`: compare reads the built-in formats only",
                    args.source_format
                )))
            }
        }
    };
    let rules = fail_rules(args)?;
    let references = crate::plan::read_references(args.reference.as_deref())?;
    let options = CompareOptions {
        pass_at: args.pass_at,
        seed: args.seed,
        resamples: compare::DEFAULT_RESAMPLES,
    };
    let mut failed = 0usize;
    let mut report = match form {
        Form::Rubrics {
            base,
            cand,
            source,
            filter,
        } => {
            // Both packs are loaded before either is refused, so that one run says what is
            // wrong with each.
            let (a, b) = match (
                load(&base, search_path, policy),
                load(&cand, search_path, policy),
            ) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(ea), Err(eb)) => {
                    eprintln!("error: {}", render::for_stderr(&ea.to_string()));
                    return Err(eb);
                }
                (Err(e), _) | (_, Err(e)) => return Err(e),
            };
            let (la, lb) = (Layout::of_pack(&a.0), Layout::of_pack(&b.0));
            let mut graded = warned(
                compare::grade_source(
                    &[(&a.0, &la), (&b.0, &lb)],
                    &source.path,
                    format.as_deref(),
                    &filter,
                    None,
                    args.skip_bad_lines,
                    references.clone(),
                )?,
                &source.path,
                skipped,
            );
            if let SessionFilter::Only(_) = &filter {
                // In the order named (the filter's set has none).
                let missing =
                    crate::sessions::missing(graded.iter().map(|g| g.id.as_str()), &args.inputs);
                if !missing.is_empty() {
                    return Err(usage(grade_engine::named::no_entries_for(
                        &missing,
                        &source.path,
                    )));
                }
            }
            let (sa, ea) = compare::sides_of(&label(&a.0, &base), &la, &mut graded, 0);
            let (sb, eb) = compare::sides_of(&label(&b.0, &cand), &lb, &mut graded, 1);
            for e in ea.iter().chain(&eb) {
                eprintln!(
                    "error: {}",
                    crate::render::for_stderr(&crate::error::grade_error_message(e))
                );
                failed += 1;
            }
            let report = compare::compare(
                &sa,
                &sb,
                &Pairing::BySessionId,
                Some(diff_of(&a, &b)),
                &options,
            );
            // Freed by the pool, idle now, while the report is written: two results a
            // session, 2% of the wall time of a million entries on the one thread left.
            rayon::spawn(move || drop((graded, sa, sb)));
            report
        }
        Form::Recorded { base, cand } => {
            let (mut ra, pa) = read_recorded(&base, search_path, policy)?;
            let (mut rb, pb) = read_recorded(&cand, search_path, policy)?;
            // Rules can be compared only where both sides traced them: otherwise one side's
            // rules would be set against the other's whole dimensions.
            let traced = |rs: &[GradeResult]| rs.iter().all(|r| r.explain.is_some());
            let untraced: Vec<String> = [(&base, &ra), (&cand, &rb)]
                .into_iter()
                .filter(|(_, rs)| !traced(rs))
                .map(|(path, _)| format!("`{}`", path.display()))
                .collect();
            // The same file as both sides is one file ("`a` and `a` hold" reads as two).
            let mut untraced = untraced;
            untraced.dedup();
            if !untraced.is_empty() {
                eprintln!(
                    "warning: {} {} results without rule traces: changes are put down to dimensions, not rules (a grades file never keeps traces; write results with `grade … --all --explain --format jsonl -o FILE`)",
                    untraced.join(" and "),
                    if untraced.len() == 1 { "holds" } else { "hold" }
                );
                for r in ra.iter_mut().chain(rb.iter_mut()) {
                    r.explain = None;
                }
            }
            let sa = recorded_side(&base, &ra, pa.as_ref().map(|p| &p.0))?;
            let sb = recorded_side(&cand, &rb, pb.as_ref().map(|p| &p.0))?;
            if options.pass_at.is_none() && sa.layout.bands.is_empty() {
                eprintln!(
                    "warning: the baseline's pack is not at hand, so its grade bands are unknown: a session passes at {}% (set it with `--pass-at`)",
                    compare::default_pass_at(&[])
                );
            }
            let diff = match (&pa, &pb) {
                (Some(a), Some(b)) => Some(diff_of(a, b)),
                _ => None,
            };
            compare::compare(&sa, &sb, &Pairing::BySessionId, diff, &options)
        }
        Form::Arms {
            rubric,
            arms,
            pair_by,
        } => {
            let p = load(&rubric, search_path, policy)?;
            let layout = Layout::of_pack(&p.0);
            let field = pair_by
                .as_deref()
                .map(Field::parse)
                .transpose()
                .map_err(|e| usage(format!("`--pair-by`: {e}")))?;
            let mut sides = Vec::new();
            for (name, source) in &arms {
                let mut graded = warned(
                    compare::grade_source(
                        &[(&p.0, &layout)],
                        &source.path,
                        format.as_deref(),
                        &SessionFilter::All,
                        field.as_ref(),
                        args.skip_bad_lines,
                        references.clone(),
                    )?,
                    &source.path,
                    skipped,
                );
                let (side, errors) = compare::sides_of(name, &layout, &mut graded, 0);
                for e in &errors {
                    eprintln!(
                        "error: arm `{name}`: {}",
                        crate::error::grade_error_message(e)
                    );
                    failed += 1;
                }
                if let Some(key) = &pair_by {
                    let unkeyed = side.keys.iter().filter(|k| k.is_none()).count();
                    if unkeyed > 0 {
                        eprintln!(
                            "warning: arm `{name}`: {unkeyed} session{} without `{key}` cannot be paired",
                            if unkeyed == 1 { "" } else { "s" }
                        );
                    }
                    if let Some(warning) = shared_keys_warning(name, key, &side.keys) {
                        eprintln!(
                            "warning: {}",
                            crate::render::for_stderr(&warning.to_string())
                        );
                    }
                }
                sides.push(side);
            }
            let pairing = match &pair_by {
                Some(k) => Pairing::ByKey(k.clone()),
                None => Pairing::Unpaired,
            };
            if pairing == Pairing::Unpaired && rules.contains(&FailOn::Flips) {
                return Err(usage(
                    "`--fail-on flips` needs paired sessions: pair the arms with `--pair-by FIELD`",
                ));
            }
            compare::compare(&sides[0], &sides[1], &pairing, None, &options)
        }
    };

    for (side, ids) in [
        ("only in the baseline", &report.unmatched.baseline),
        ("only in the candidate", &report.unmatched.candidate),
        (
            "with nothing to grade (no dimension applies)",
            &report.unmatched.nothing_to_grade,
        ),
    ] {
        if !ids.is_empty() {
            eprintln!(
                "warning: {} session{} {side} ({}): listed under `unmatched`, not compared",
                ids.len(),
                if ids.len() == 1 { "" } else { "s" },
                preview(ids)
            );
        }
    }

    // A comparison of nothing has no mean change: every gate would pass on it in silence.
    if let Some(why) = report.nothing_to_compare() {
        return Err(CliError::Usage(format!("nothing to compare: {why}")));
    }

    if let Some(path) = &args.html {
        let page = crate::compare_html::page(&report).map_err(CliError::Json)?;
        std::fs::write(path, page).map_err(|source| CliError::Output {
            path: path.clone(),
            source,
        })?;
    }
    match args.format {
        // Written as it is serialised: with every session listed (`--all` over a large log)
        // the report runs to megabytes, which a whole string would build, regrow and copy.
        crate::args::CompareFormat::Json => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let written = match compare::write_json(&mut out, &mut report) {
                Ok(()) => out.write_all(b"\n").and_then(|()| out.flush()),
                Err(e) if e.is_io() => Err(e.into()),
                Err(e) => return Err(CliError::Json(e)),
            };
            crate::stdout_written(written)?;
        }
        crate::args::CompareFormat::Human => {
            crate::write_stdout(human(&report, args.top, use_color(args.color)).as_bytes())?
        }
    }

    // One session (or one on a side) gives no interval: the gate has nothing to judge, and
    // passing it without a word would read as "no regression".
    if rules.contains(&FailOn::Regression) && report.summary.ci95.is_none() {
        let s = &report.summary;
        eprintln!(
            "warning: `--fail-on regression` is not judged: the mean change has no 95% interval with {}",
            if report.paired {
                format!("{} paired session{} (it needs 2 or more)", s.n, if s.n == 1 { "" } else { "s" })
            } else {
                format!(
                    "{} and {} sessions in the arms (it needs 2 or more in each)",
                    s.n_baseline, s.n_candidate
                )
            }
        );
    }
    let reasons: Vec<String> = rules.iter().filter_map(|r| report.fails(*r)).collect();
    if !reasons.is_empty() {
        return Err(CliError::CheckFailed(format!(
            "compare failed: {}",
            reasons.join("; ")
        )));
    }
    if failed > 0 {
        return Err(CliError::CheckFailed(format!(
            "{failed} grade{} could not be made",
            if failed == 1 { "" } else { "s" }
        )));
    }
    Ok(())
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

fn label(pack: &CompiledPack, spec: &str) -> String {
    if pack.id == spec {
        spec.to_owned()
    } else {
        format!("{} ({spec})", pack.id)
    }
}

fn preview(ids: &[String]) -> String {
    let shown: Vec<String> = ids
        .iter()
        .take(5)
        .map(|i| format!("`{}`", render::escape_controls(i)))
        .collect();
    if ids.len() > 5 {
        format!("{}, …", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The results of a file (the last of each session), and their pack when it is at hand with
/// the digest the results name (then its starts, clamps and rule changes are known).
#[allow(
    clippy::type_complexity,
    reason = "the results and, when at hand, the pack they name: an alias would hide the pairing"
)]
fn read_recorded(
    path: &Path,
    search_path: &[PathBuf],
    policy: PluginPolicy,
) -> Result<(Vec<GradeResult>, Option<(CompiledPack, PackFiles)>), CliError> {
    // Each line read into its result as it is parsed, on every core: a tree of every line
    // of a grades file first took 8 times its size (two files of 50,000 grades, 620 MiB).
    let lines = crate::grades::read_json_lines_as(path, |line, mut value| {
        let bare = complete_bare_result(&mut value, path);
        let read = match missing_fields(&value) {
            Some(missing) => Err(missing),
            None => serde_json::from_value::<GradeResult>(value).map_err(|e| e.to_string()),
        };
        (line, bare, read)
    })?
    .ok_or_else(|| usage(format!("results file `{}` does not exist", path.display())))?;
    let mut results: Vec<GradeResult> = Vec::with_capacity(lines.len());
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut repeats = 0usize;
    let mut bare = 0usize;
    for (line, bare_line, read) in lines {
        bare += usize::from(bare_line);
        let not_a_result = |message: String| CliError::GradesLine {
            path: path.to_owned(),
            line,
            message,
        };
        let r = read.map_err(not_a_result)?;
        // The figures compared are the scores; the pass and the letter are read from
        // `percent`. A line whose `percent` is not its scores' was edited or made by hand,
        // and would be compared as two different grades.
        let from_scores = grade_engine::result::percent_of(r.total_score.0, r.max_score.0);
        // `null` says there was nothing to grade, which only a `maxScore` of 0 says too.
        if r.percent.is_none() && r.max_score.0 != 0.0 {
            return Err(not_a_result(format!(
                "its `percent` is null (nothing to grade) but its `maxScore` is {}",
                pct(r.max_score.0)
            )));
        }
        let percent = r.percent.map_or(from_scores, |p| p.0);
        if (percent - from_scores).abs() > 0.01 + 1e-9 {
            return Err(not_a_result(format!(
                "its `percent` {} is not `totalScore` {} of `maxScore` {} ({})",
                pct(percent),
                pct(r.total_score.0),
                pct(r.max_score.0),
                pct(from_scores)
            )));
        }
        if let Some(first) = results.first() {
            if first.rubric.id != r.rubric.id {
                return Err(usage(format!(
                    "`{}` holds results of rubric `{}` and of `{}` (line {line}); compare the results of one rubric per file",
                    path.display(),
                    first.rubric.id,
                    r.rubric.id
                )));
            }
        }
        // A grades file keeps every grading of a session: the last one stands.
        match at.get(&r.session_id) {
            Some(&i) => {
                results[i] = r;
                repeats += 1;
            }
            None => {
                at.insert(r.session_id.clone(), results.len());
                results.push(r);
            }
        }
    }
    let Some(first) = results.first() else {
        return Err(usage(format!(
            "results file `{}` has no results",
            path.display()
        )));
    };
    if let Some(message) = mixed_versions(path, &results) {
        return Err(usage(message));
    }
    if bare > 0 {
        eprintln!(
            "warning: {bare} result{} in `{}` name no rubric (CLEO's own grader writes them so); {} labelled `{}` after the file",
            if bare == 1 { "" } else { "s" },
            path.display(),
            if bare == 1 { "it is" } else { "they are" },
            file_label(path)
        );
    }
    if repeats > 0 {
        eprintln!(
            "warning: `{}` grades {repeats} session{} more than once; the last grade of each is compared",
            path.display(),
            if repeats == 1 { "" } else { "s" }
        );
    }
    let pack = grade_engine::locate_pack(&first.rubric.id, search_path)
        .ok()
        .and_then(|files| {
            grade_engine::pack::compile_pack_with(&files, policy)
                .ok()
                .map(|pack| (pack, files))
        })
        .filter(|(pack, _)| results.iter().all(|r| r.rubric.digest == pack.digest));
    Ok((results, pack))
}

/// Why the letters of a file's results are not known, when some carry none and their pack
/// (whose bands would give them) is not at hand with their digest.
fn letters_why(results: &[GradeResult], pack_found: bool) -> Option<String> {
    let first = results.iter().find(|r| r.grade.is_none())?;
    if pack_found {
        return None;
    }
    Some(if first.rubric.digest.is_empty() {
        "the results carry no letter and name no pack whose bands would give one".to_owned()
    } else {
        let short: String = first.rubric.digest.chars().take(19).collect();
        format!(
            "the results carry no letter, and their pack `{}` is not found with their digest `{short}…`",
            first.rubric.id
        )
    })
}

/// Whether the standing results of a file were graded by more than one version of their pack
/// (a grades file that outlived a change of the pack): their rules and scales differ, so a mean
/// over them would compare nothing in particular. Says so, and how to take one version out.
fn mixed_versions(path: &Path, results: &[GradeResult]) -> Option<String> {
    let mut versions: Vec<(&str, &str, usize)> = Vec::new();
    for r in results {
        let (v, d) = (r.rubric.version.as_str(), r.rubric.digest.as_str());
        match versions.iter_mut().find(|(vv, dd, _)| *vv == v && *dd == d) {
            Some((_, _, n)) => *n += 1,
            None => versions.push((v, d, 1)),
        }
    }
    if versions.len() < 2 {
        return None;
    }
    let id = &results[0].rubric.id;
    let named: Vec<String> = versions
        .iter()
        .map(|(v, d, n)| {
            let short: String = d.chars().take(12).collect();
            format!(
                "{n} by `{id}@{v}`{}",
                if versions.iter().filter(|(vv, _, _)| vv == v).count() > 1 {
                    format!(" (digest `{short}`)")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    Some(format!(
        "the last grades of the sessions in `{}` were made by different versions of `{id}` ({}); compare the grades of one version: `grade --list --grades {} --rubric {id}@VERSION --format jsonl > FILE`",
        path.display(),
        named.join(", "),
        path.display()
    ))
}

/// The fields a result cannot be compared without that a line lacks, all of them at once
/// (serde names only the first).
pub(crate) fn missing_fields(value: &serde_json::Value) -> Option<String> {
    let obj = value.as_object()?;
    let missing: Vec<String> = ["sessionId", "totalScore", "maxScore", "dimensions", "flags"]
        .into_iter()
        .filter(|k| !obj.contains_key(*k))
        .map(|k| format!("`{k}`"))
        .collect();
    match missing.len() {
        0 => None,
        1 => Some(format!("missing field {}", missing[0])),
        _ => Some(format!("missing fields {}", missing.join(", "))),
    }
}

/// A result as CLEO's own grader writes it has no `rubric`, `evaluator`, `percent` and, in
/// some copies, no `timestamp`: none of them is needed to compare, so they are filled in (the
/// rubric named after the file, `percent` from the scores) rather than the file refused.
/// Says whether the result lacked its rubric.
pub(crate) fn complete_bare_result(value: &mut serde_json::Value, path: &Path) -> bool {
    let Some(obj) = value.as_object_mut() else {
        return false;
    };
    let bare = !obj.contains_key("rubric");
    if bare {
        obj.insert(
            "rubric".into(),
            serde_json::json!({"id": file_label(path), "version": "", "digest": ""}),
        );
    }
    obj.entry("timestamp").or_insert_with(|| "".into());
    obj.entry("evaluator").or_insert_with(|| "".into());
    obj.entry("entryCount").or_insert_with(|| 0.into());
    if !obj.contains_key("percent") {
        let num = |k: &str| obj.get(k).and_then(serde_json::Value::as_f64);
        if let (Some(total), Some(max)) = (num("totalScore"), num("maxScore")) {
            let percent = grade_engine::result::percent_of(total, max);
            obj.insert("percent".into(), percent.into());
        }
    }
    bare
}

/// A results file's name without its extensions (`cleo-v1.expected.jsonl` → `cleo-v1.expected`).
fn file_label(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    name.strip_suffix(".jsonl")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name)
        .to_owned()
}

fn recorded_side(
    path: &Path,
    results: &[GradeResult],
    pack: Option<&CompiledPack>,
) -> Result<Side, CliError> {
    let mut layout = match (pack, results.first()) {
        (Some(p), _) => Layout::of_pack(p),
        (None, Some(first)) => Layout::empty(first.rubric.clone()),
        (None, None) => {
            return Err(usage(format!(
                "results file `{}` has no results",
                path.display()
            )))
        }
    };
    for r in results {
        layout.learn(r);
    }
    let scored = results
        .iter()
        .map(|r| layout.score(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| usage(format!("`{}`: {e}", path.display())))?;
    let mut side = Side::new(path.display().to_string(), layout, scored);
    side.letters_why = letters_why(results, pack.is_some());
    Ok(side)
}

fn num(v: f64) -> String {
    format!("{v:.2}")
}

/// A percentage as given: `60`, `62.5`.
fn pct(v: f64) -> String {
    grade_engine::entry::js_number(v)
}

fn signed(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    if r > 0.0 {
        format!("+{r:.2}")
    } else if r == 0.0 {
        "0.00".to_owned()
    } else {
        format!("{r:.2}")
    }
}

fn pval(p: Option<f64>) -> String {
    match p {
        None => "-".to_owned(),
        Some(p) if p < 0.0001 => "<0.0001".to_owned(),
        Some(p) => format!("{p:.4}"),
    }
}

fn ci(c: Option<[f64; 2]>) -> String {
    match c {
        Some([lo, hi]) => format!("[{}, {}]", signed(lo), signed(hi)),
        None => "-".to_owned(),
    }
}

fn status_mark(s: Status) -> &'static str {
    match s {
        Status::Added => "added",
        Status::Removed => "removed",
        Status::Changed => "changed",
        Status::Same => "",
    }
}

/// The report a person reads: headline, dimensions, rules, the most changed sessions, and
/// what changed between the packs.
pub fn human(c: &Comparison, top: usize, color: bool) -> String {
    let p = Paint(color);
    let s = &c.summary;
    let mut out = String::new();
    // A side is its pack (`cleo-v2 2.0.0`), or an arm or a file graded by a pack
    // (`new (cleo-v1 1.0.0)`); results that name no pack have only their file.
    let side = |i: &compare::SideInfo| {
        let pack = format!("{} {}", i.rubric.id, i.rubric.version);
        let pack = pack.trim();
        if i.label == i.rubric.id {
            pack.to_owned()
        } else if i.rubric.version.is_empty() {
            i.label.clone()
        } else {
            format!("{} ({pack})", i.label)
        }
    };
    let _ = writeln!(
        out,
        "{} {} → {}",
        p.bold("grade compare:"),
        side(&c.baseline),
        side(&c.candidate)
    );
    let shade = |v: f64, text: String| {
        if v > 0.0 {
            p.green(&text)
        } else if v < 0.0 {
            p.red(&text)
        } else {
            text
        }
    };
    if c.paired {
        let _ = writeln!(
            out,
            "{} session{} paired by {} · pass at {}% · bootstrap {} resamples, seed {}",
            s.n,
            if s.n == 1 { "" } else { "s" },
            c.pair_by.as_deref().unwrap_or("sessionId"),
            pct(c.pass_at),
            c.resamples,
            c.seed
        );
    } else {
        let _ = writeln!(
            out,
            "unpaired arms: {} and {} sessions · pass at {}% · bootstrap {} resamples, seed {}",
            s.n_baseline,
            s.n_candidate,
            pct(c.pass_at),
            c.resamples,
            c.seed
        );
    }
    out.push('\n');
    let opt = |v: Option<f64>| v.map_or("-".to_owned(), num);
    let _ = writeln!(
        out,
        "  score (mean %)   {:>8}  →  {:>8}   change {}  95% CI {}",
        opt(s.mean_baseline),
        opt(s.mean_candidate),
        shade(s.mean_delta, signed(s.mean_delta)),
        ci(s.ci95)
    );
    if c.paired {
        let _ = writeln!(
            out,
            "  improved {} · regressed {} · unchanged {}   Wilcoxon p {} · sign test p {}",
            s.improved.unwrap_or(0),
            s.regressed.unwrap_or(0),
            s.unchanged.unwrap_or(0),
            pval(s.wilcoxon_p),
            pval(s.sign_test_p)
        );
        let f = s.flips.unwrap_or_default();
        let _ = writeln!(
            out,
            "  pass → fail {} · fail → pass {}   McNemar exact p {}   (passing {} → {})",
            if f.pass_to_fail > 0 {
                p.red(&f.pass_to_fail.to_string())
            } else {
                "0".to_owned()
            },
            f.fail_to_pass,
            pval(s.mcnemar_p),
            s.passed.baseline,
            s.passed.candidate
        );
        if let Some(grades) = &s.grades {
            let moved: Vec<String> = grades
                .iter()
                .filter(|(k, _)| {
                    let mut it = k.split("->");
                    it.next() != it.next()
                })
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            match &s.letters_unknown {
                // "none" said of results that carry no letter hid hundreds of changes.
                Some(why) => {
                    let _ = writeln!(out, "  letters: not known ({why})");
                }
                None => {
                    let _ = writeln!(
                        out,
                        "  letters changed: {}",
                        if moved.is_empty() {
                            "none".to_owned()
                        } else {
                            moved.join(", ")
                        }
                    );
                }
            }
        }
    } else {
        let _ = writeln!(
            out,
            "  Mann–Whitney p {} · Cliff's delta {} · passing {}/{} → {}/{}",
            pval(s.mann_whitney_p),
            s.cliffs_delta
                .map_or("-".to_owned(), |d| format!("{d:+.3}")),
            s.passed.baseline,
            s.n_baseline,
            s.passed.candidate,
            s.n_candidate
        );
    }

    out.push('\n');
    let _ = writeln!(out, "{}", p.bold("dimensions (% of each dimension's max)"));
    for d in &c.dimensions {
        let mark = status_mark(d.status);
        let _ = writeln!(
            out,
            "  {:<28} {:>7} → {:>7}  {:>7}  95% CI {:<18} p {}{}",
            d.dimension,
            opt(d.mean_baseline),
            opt(d.mean_candidate),
            d.mean_delta.map_or("-".to_owned(), |v| shade(v, signed(v))),
            ci(d.ci95),
            pval(d.p),
            if mark.is_empty() {
                String::new()
            } else {
                format!("  ({mark})")
            }
        );
    }

    out.push('\n');
    let _ = writeln!(
        out,
        "{}",
        p.bold(if c.paired {
            "rules by points moved (percentage points, summed over sessions)"
        } else {
            "rules by share of the change of the mean"
        })
    );
    if c.rules.is_empty() {
        let _ = writeln!(out, "  no rule changed any session's points");
    }
    for r in &c.rules {
        let name = format!("{}/{}", r.dimension, r.rule);
        let mark = status_mark(r.status);
        let line = match (r.sessions_changed, r.points_moved) {
            (Some(n), Some(moved)) => format!(
                "  {:<52} {:>5} session{}  {:>9}",
                name,
                n,
                if n == 1 { " " } else { "s" },
                shade(moved, signed(moved))
            ),
            _ => format!(
                "  {:<52} mean {:>8}",
                name,
                shade(r.mean_delta, signed(r.mean_delta))
            ),
        };
        let _ = writeln!(
            out,
            "{line}{}",
            if mark.is_empty() {
                String::new()
            } else {
                format!("  ({mark})")
            }
        );
    }

    let changed: Vec<_> = c.sessions.iter().filter(|s| s.delta != 0.0).collect();
    if c.paired && changed.is_empty() {
        // A heading with nothing under it reads as a list that failed to print.
        out.push('\n');
        let _ = writeln!(out, "{}", p.bold("no session changed"));
    } else if c.paired {
        out.push('\n');
        let _ = writeln!(
            out,
            "{}",
            p.bold(&format!(
                "most changed sessions ({} of {} changed)",
                changed.len().min(top),
                changed.len()
            ))
        );
        for sd in changed.iter().take(top) {
            let grade = |g: &Option<String>| g.clone().unwrap_or_else(|| "-".to_owned());
            let _ = writeln!(
                out,
                "  {:<28} {:>6} → {:>6}  {:>7}  {} → {}",
                // A session id is the source's text: escaped, as `grade` prints it.
                render::escape_controls(&sd.session_id),
                num(sd.baseline),
                num(sd.candidate),
                shade(sd.delta, signed(sd.delta)),
                grade(&sd.baseline_grade),
                grade(&sd.candidate_grade)
            );
            let mut rules = sd.rules.clone();
            rules.sort_by(|a, b| b.delta.abs().total_cmp(&a.delta.abs()));
            for r in rules {
                let _ = writeln!(
                    out,
                    "      {} {}/{}",
                    shade(r.delta, format!("{:>7}", signed(r.delta))),
                    r.dimension,
                    r.rule
                );
            }
        }
    }

    if let Some(diff) = &c.rubric_diff {
        out.push('\n');
        let _ = writeln!(out, "{}", p.bold("rubric changes"));
        if diff.is_empty() {
            let _ = writeln!(out, "  none: the packs grade alike");
        }
        for b in &diff.bands {
            let v = |x: Option<f64>| x.map_or("none".to_owned(), num);
            let _ = writeln!(
                out,
                "  ~ band {}: {} → {}",
                b.grade,
                v(b.baseline),
                v(b.candidate)
            );
        }
        for d in &diff.dimensions {
            let sign = match d.status {
                Status::Added => "+",
                Status::Removed => "-",
                _ => "~",
            };
            let _ = writeln!(
                out,
                "  {sign} dimension {}{}",
                d.dimension,
                if d.changes.is_empty() {
                    String::new()
                } else {
                    format!(": {}", d.changes.join(", "))
                }
            );
        }
        for r in &diff.rules {
            let sign = match r.status {
                Status::Added => p.green("+"),
                Status::Removed => p.red("-"),
                _ => p.yellow("~"),
            };
            let _ = writeln!(
                out,
                "  {sign} rule {}/{}{}",
                r.dimension,
                r.rule,
                if r.changes.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.changes.join(", "))
                }
            );
        }
    }
    let u = &c.unmatched;
    if !(u.baseline.is_empty()
        && u.candidate.is_empty()
        && u.unkeyed.is_empty()
        && u.nothing_to_grade.is_empty())
    {
        out.push('\n');
        let _ = writeln!(out, "{}", p.bold("not compared"));
        for (what, ids) in [
            ("only in the baseline", &u.baseline),
            ("only in the candidate", &u.candidate),
            ("without a pairing key, or sharing one", &u.unkeyed),
            ("with nothing to grade", &u.nothing_to_grade),
        ] {
            if !ids.is_empty() {
                let _ = writeln!(out, "  {} {what}: {}", ids.len(), preview(ids));
            }
        }
    }
    out
}
