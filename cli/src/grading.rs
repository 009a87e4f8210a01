//! `grade --rubric …`: the grading command, staged as the engine's pipeline is. The
//! command line becomes a checked [`GradePlan`] (pack, source, streaming choice, where
//! results go); the engine grades (`grade_engine::run`); this module renders the outcomes,
//! records them through the engine's sinks and turns failures into the binary's errors.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use grade_engine::run::{Outcome, SourceRun};
use grade_engine::sink::langfuse::{LangfuseScores, ScoreBody};
use grade_engine::sink::{self, Counted, JsonDocument, JsonLines, RowFormat, Rows, Tally};
use grade_engine::{CompiledPack, EvalError, GradeResult, Session, SessionFilter, SourceFormat};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::{Format, GradeFormat};
use crate::error::CliError;
use crate::held::{HeldError, HeldOutput};
use crate::plan::GradePlan;
use crate::{grades, http, judge, langfuse, render, summary, write_stdout};

/// Grades as planned, then renders, records and reports.
pub fn run(plan: &GradePlan) -> Result<(), CliError> {
    let (outcomes, sessions, skipped) = match &plan.stream_as {
        Some(format) => {
            let done = stream(plan, format.as_ref())?;
            report_skipped(done.skipped, &plan.source.path);
            report_nothing_graded(plan, done.total)?;
            write_page(plan, done.page)?;
            finish(done.failed, done.total)?;
            return done.floor.map_or(Ok(()), summary::Floor::check);
        }
        None => {
            let mut warn = |warning: String| crate::warn(&warning);
            if let Some(format) = plan.output.print_prompt {
                let (sessions, _) =
                    crate::sessions::named_sessions(&plan.selection, &plan.source, &mut warn)?;
                return print_prompts(&plan.pack, &sessions, format);
            }
            let streamed = match &plan.stream_named {
                Some(format) => stream_named(plan, format.as_ref(), &mut warn)?,
                None => None,
            };
            match streamed {
                // Only `--emit` and `--push` read the sessions again, and they are not streamed.
                Some((outcomes, skipped)) => (outcomes, Vec::new(), skipped),
                None => {
                    let graded = grade_named(plan, &mut warn)?;
                    (graded.outcomes, graded.sessions, graded.skipped)
                }
            }
        }
    };
    let (mut results, failed) = report_failures(outcomes);
    let total = results.len() + failed;
    let page = plan.output.html.as_ref().map(|_| {
        let mut page = crate::report::for_run(plan);
        results.iter().for_each(|r| page.add(r));
        page
    });
    // `--html` keeps each rule's trace for the page; the output has it only with `--explain`.
    if !plan.output.explain {
        results.iter_mut().for_each(|r| r.explain = None);
    }
    deliver(plan, &results, &sessions)?;
    report_skipped(skipped, &plan.source.path);
    report_nothing_graded(plan, total)?;
    write_page(plan, page)?;
    finish(failed, total)?;
    match plan.output.fail_under {
        Some(threshold) => summary::check_floor(&results, threshold),
        None => Ok(()),
    }
}

/// `--all` over a source without sessions (an empty log, the wrong file) prints no result:
/// said on stderr, so that nobody takes the silence for a clean run, and a `--fail-under`
/// gate that checked nothing fails (a CI job pointed at the wrong file must not pass).
fn report_nothing_graded(plan: &GradePlan, total: usize) -> Result<(), CliError> {
    if !(plan.selection.all && total == 0) {
        return Ok(());
    }
    let nothing = grade_engine::run::no_sessions(plan.source_path());
    if plan.output.fail_under.is_some() {
        return Err(CliError::CheckFailed(format!(
            "`--fail-under` checked no session: {nothing}"
        )));
    }
    crate::warn(&format!("{nothing}: nothing was graded"));
    Ok(())
}

/// The sessions a run names (or all of them), graded.
pub struct GradedSessions {
    /// The sessions, in the order asked.
    pub sessions: Vec<Session>,
    /// Their outcomes, in the same order.
    pub outcomes: Vec<Outcome>,
    /// Malformed lines of the source that were skipped.
    pub skipped: u64,
}

/// Reads the sessions the command line names from the planned source and grades them
/// (with their judgments): what `grade` and `grade mcp`'s `grade` tool both do.
pub fn grade_named(
    plan: &GradePlan,
    warn: &mut dyn FnMut(String),
) -> Result<GradedSessions, CliError> {
    let (sessions, skipped, files) =
        crate::sessions::named_sessions_files(&plan.selection, &plan.source, warn)?;
    let mut outcomes = grade_sessions(plan, &sessions, warn)?;
    // A run of several files names each result's.
    if !files.is_empty() {
        for result in outcomes.iter_mut().flatten() {
            result.source = files
                .get(&result.session_id)
                .map(|f| f.display().to_string());
        }
    }
    Ok(GradedSessions {
        sessions,
        outcomes,
        skipped,
    })
}

/// What a session read by [`stream_named`] left: its outcome (taken by its first mention),
/// the session again when it is named more than once (each mention is graded, as the whole
/// read grades each), and whether it has entries.
struct NamedGraded {
    outcome: Option<Outcome>,
    again: Option<Session>,
    empty: bool,
    held: bool,
}

/// The sessions the command line names, read as `--all` reads a source (streamed, the
/// first pass finding which lines are theirs, graded in parallel the moment each is read
/// whole) and put in the order asked: the outcomes [`grade_named`] gives, without reading
/// the whole source into memory first. `None` when lines were skipped: which sessions they
/// were may be unknown, and only the whole read counts those (it is then done instead).
fn stream_named(
    plan: &GradePlan,
    format: &dyn SourceFormat,
    warn: &mut dyn FnMut(String),
) -> Result<Option<(Vec<Outcome>, u64)>, CliError> {
    let mut mentions: HashMap<&str, usize> = HashMap::new();
    for id in &plan.selection.named {
        *mentions.entry(id).or_default() += 1;
    }
    let (pack, options) = (&plan.pack, &plan.options);
    let mapped = grade_engine::run::map_source(
        &plan.source.registry,
        &plan.source.path,
        Some(format),
        &SessionFilter::only(plan.selection.named.iter().cloned()),
        &plan.source.read,
        None,
        |session| {
            let again = (mentions.get(session.id.as_str()) > Some(&1)).then(|| session.clone());
            let graded = NamedGraded {
                empty: session.entries.is_empty(),
                held: !session.entries.is_empty() || session.skipped_lines > 0,
                again,
                outcome: None,
            };
            let id = session.id.clone();
            let outcome = pack.grade_owned(session, None, options);
            (
                id,
                NamedGraded {
                    outcome: Some(outcome),
                    ..graded
                },
            )
        },
    )?;
    if mapped.skipped_lines > 0 {
        return Ok(None);
    }
    for warning in &mapped.warnings {
        warn(warning.to_string());
    }
    let mut graded: HashMap<String, NamedGraded> = mapped.results.into_iter().collect();
    crate::sessions::refuse_missing(
        &plan.selection,
        &plan.source,
        graded
            .iter()
            .filter(|(_, g)| g.held)
            .map(|(id, _)| id.as_str()),
        0,
    )?;
    let mut warned = HashSet::new();
    let mut outcomes = Vec::with_capacity(plan.selection.named.len());
    for id in &plan.selection.named {
        let slot = graded.get_mut(id);
        if slot.as_ref().is_none_or(|g| g.empty) && warned.insert(id) {
            warn(grade_engine::named::empty_session_warning(
                &render::escape_controls(id),
                &plan.source.path,
            ));
        }
        let outcome = match slot {
            Some(g) => match (g.outcome.take(), &g.again) {
                (Some(outcome), _) => outcome,
                (None, again) => {
                    let session = again
                        .as_ref()
                        .map_or_else(|| empty_session(id), Clone::clone);
                    pack.grade_owned(session, None, options)
                }
            },
            None => pack.grade_owned(empty_session(id), None, options),
        };
        outcomes.push(outcome);
    }
    Ok(Some((outcomes, 0)))
}

/// A named session the source has no entries for: CLEO's empty-session grade.
fn empty_session(id: &str) -> Session {
    Session {
        id: id.to_owned(),
        entries: Vec::new(),
        skipped_lines: 0,
    }
}

/// The results of the sessions that were graded; a rule that failed on one session (a
/// runaway script) is reported, and the others keep their grade.
fn report_failures(outcomes: Vec<Outcome>) -> (Vec<GradeResult>, usize) {
    let mut results = Vec::with_capacity(outcomes.len());
    let mut failed = 0;
    for outcome in outcomes {
        match outcome {
            Ok(r) => results.push(r),
            Err(err) => {
                failed += 1;
                eprintln!(
                    "error: {}",
                    render::for_stderr(&crate::error::eval_message(&err))
                );
            }
        }
    }
    (results, failed)
}

/// Renders the results, records them and sends their scores where the command line says.
/// Recorded only once the results are out: a run whose output was lost (a full disk, a
/// closed pipe) leaves no grade behind that nobody saw. The grades file is opened first, so
/// one that cannot be written fails the run before anything is printed.
fn deliver(
    plan: &GradePlan,
    results: &[GradeResult],
    sessions: &[Session],
) -> Result<(), CliError> {
    let scores = if plan.output.emit || plan.output.push {
        score_bodies(plan, results, sessions)?
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    if plan.output.emit {
        for body in &scores {
            serde_json::to_writer(&mut out, body).map_err(CliError::Json)?;
            out.push(b'\n');
        }
    } else {
        render_results(&mut out, results, plan)?;
    }
    let recorder = match &plan.record_to {
        Some(path) => Some(grades::Recorder::open(path, plan.default_grades)?),
        None => None,
    };
    write_output(plan, out)?;
    // A run whose output its reader closed records no grade that nobody saw.
    let recorder = recorder.filter(|_| !crate::output_closed());
    if let (Some(recorder), Some(path)) = (recorder, &plan.record_to) {
        recorder.append(results)?;
        if !results.is_empty() {
            let plural = if results.len() == 1 { "" } else { "s" };
            crate::note(&format!(
                "recorded {} grade{plural} to {}",
                results.len(),
                path.display()
            ));
        }
    }
    if plan.output.push {
        push_scores(&scores)?;
    }
    Ok(())
}

/// Sends score bodies to the Langfuse server of the environment.
fn push_scores(scores: &[ScoreBody]) -> Result<(), CliError> {
    let server = langfuse::server::Server::from_env(
        "`--push langfuse`",
        std::time::Duration::from_secs(30),
        http::Retry {
            attempts: 4,
            backoff: std::time::Duration::from_millis(500),
            max_wait: std::time::Duration::from_secs(60),
        },
    )?;
    let values: Vec<serde_json::Value> = scores
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(CliError::Json)?;
    eprint!("{}", langfuse::send(&server, &values)?);
    Ok(())
}

/// The Langfuse score bodies of graded sessions, in order (the engine's sink).
fn score_bodies(
    plan: &GradePlan,
    results: &[GradeResult],
    sessions: &[Session],
) -> Result<Vec<ScoreBody>, CliError> {
    let pack = &plan.pack;
    let config_ids = match &plan.output.config_ids {
        Some(path) => langfuse::read_config_ids(path)?,
        None => Default::default(),
    };
    let environment = std::env::var("LANGFUSE_TRACING_ENVIRONMENT")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let mut scores = LangfuseScores::new(pack, sessions, environment.as_deref(), &config_ids);
    sink::write_all(&mut scores, results)?;
    Ok(scores.into_bodies())
}

/// The results as `--format` asks: JSON and the row formats (CSV, JUnit, Markdown) through
/// the engine's sinks, or the human report (with a summary after a whole source).
fn render_results(
    out: &mut Vec<u8>,
    results: &[GradeResult],
    plan: &GradePlan,
) -> Result<(), CliError> {
    let pack = &plan.pack;
    if let Some(rows) = &plan.rows {
        sink::write_all(&mut Rows::new(&mut *out, rows.as_ref()), results)?;
        return Ok(());
    }
    match plan.output.format {
        GradeFormat::Jsonl => sink::write_all(&mut JsonLines::new(&mut *out), results)?,
        GradeFormat::Json => sink::write_all(&mut JsonDocument::new(&mut *out), results)?,
        // Written by the row sink above.
        GradeFormat::Csv | GradeFormat::Junit | GradeFormat::Markdown => {}
        GradeFormat::Human => {
            let color = plan.output.color;
            for (i, r) in results.iter().enumerate() {
                if i > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(render::report(r, pack, color).as_bytes());
            }
            if plan.selection.all && !results.is_empty() {
                let bands: Vec<String> = pack.bands.iter().map(|b| b.grade.clone()).collect();
                out.push(b'\n');
                out.extend_from_slice(summary::summary(results, &bands).as_bytes());
            }
        }
    }
    Ok(())
}

/// Writes results where `--output` says, or to standard output.
fn write_output(plan: &GradePlan, bytes: Vec<u8>) -> Result<(), CliError> {
    let mut held = HeldOutput::new(usize::MAX);
    held.write(bytes.into_boxed_slice());
    write_held(plan, held, &[], &mut |_| {})
}

/// A result as a line of `--format jsonl`.
fn json_line(result: &GradeResult) -> Result<Box<[u8]>, CliError> {
    // Written into a buffer each grading thread keeps, then copied out once at its length:
    // a fresh `Vec` grew three times on the way to a cleo-v1 line (866 bytes) and was
    // reallocated again to its length (jemalloc's `realloc` was 3% of a bench run).
    thread_local! {
        static LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    LINE.with_borrow_mut(|line| {
        line.clear();
        result.write_json_line(line).map_err(CliError::Json)?;
        let out = Box::from(line.as_slice());
        // A very long session's line is not kept for the rest of the run.
        if line.capacity() > 1 << 20 {
            *line = Vec::new();
        }
        Ok(out)
    })
}

/// Writes the page of `--html`, once the results are out (a failed gate still gets its page).
fn write_page(
    plan: &GradePlan,
    page: Option<crate::report::ReportBuilder>,
) -> Result<(), CliError> {
    match (page, &plan.output.html) {
        (Some(page), Some(path)) => crate::report::write_page(page, path),
        _ => Ok(()),
    }
}

/// The end of a grading run: it fails when a session could not be graded.
fn finish(failed: usize, total: usize) -> Result<(), CliError> {
    if failed == 0 {
        return Ok(());
    }
    Err(CliError::CheckFailed(grade_engine::run::could_not_grade(
        failed, total,
    )))
}

/// The run's last word on skipped lines: how many, so a long run's warnings are not lost.
/// `grade compare` ends with it too, once per source it read.
pub fn report_skipped(skipped: u64, source: &Path) {
    if let Some(warning) = skipped_warning(skipped, source) {
        crate::warn(&warning);
    }
}

/// How many malformed lines of `source` were skipped, when any were.
pub fn skipped_warning(skipped: u64, source: &Path) -> Option<String> {
    grade_engine::run::skipped_warning(skipped, source)
}

/// What a streamed run leaves to say once its output is out (and recorded).
struct Streamed {
    /// Sessions that could not be graded, of `total`.
    failed: usize,
    total: usize,
    /// Malformed lines skipped.
    skipped: u64,
    /// The `--fail-under` gate, with every result counted.
    floor: Option<summary::Floor>,
    /// The page of `--html`, with every result added.
    page: Option<crate::report::ReportBuilder>,
}

/// A session graded by a streamed run, as the thread that graded it left it: its JSON line
/// (when lines are all the run prints), the result rendered for every place it goes, or why
/// it failed. Boxed, so that the results waiting for an earlier session
/// cost little beside them, and a line its length (not serde_json's doubled buffer).
enum Graded {
    Line(Box<[u8]>),
    Rendered(Box<Rendered>),
    Failed(Box<grade_engine::EvalError>),
}

/// A result rendered by the thread that graded it for every place it goes, so that the one
/// thread taking results in order only moves bytes and adds counts: rendering there (two
/// JSON lines a result when a run records, a summary's flag shapes) held up the pipeline,
/// and the default run (`--all`, recorded, human) took 1.86× the time of `--format jsonl
/// --no-record`.
struct Rendered {
    /// Its JSON line, its human report after a blank line, or its element of a JSON
    /// document's array.
    output: Box<[u8]>,
    /// The grades file's line, when the run records.
    record: Option<RecordLine>,
    summary: Option<summary::Tally>,
    /// What it adds to a row format's head and tail.
    counted: Option<Counted>,
    /// How the `--fail-under` gate names it, when it is below.
    below: Option<Box<str>>,
    /// The result itself, with its trace, for the page of `--html`.
    page: Option<Box<GradeResult>>,
}

/// The line a result is recorded as.
enum RecordLine {
    /// The output line itself (a JSON line without `explain`).
    Output,
    Own(Box<[u8]>),
}

/// What each result is rendered for.
#[derive(Clone, Copy)]
struct Renders<'a> {
    format: GradeFormat,
    /// The row format of `format`, when it is one.
    rows: Option<&'a dyn RowFormat>,
    color: bool,
    pack: &'a CompiledPack,
    record: bool,
    summary: bool,
    floor: Option<f64>,
    /// Whether the result goes to a page too, and whether the output keeps its trace.
    page: bool,
    explain: bool,
}

impl Renders<'_> {
    fn render(&self, mut result: GradeResult) -> Result<Rendered, CliError> {
        // `--html` keeps each rule's trace for the page; the output has it only with `--explain`.
        let trace = if self.explain {
            None
        } else {
            result.explain.take()
        };
        let output = match (self.rows, self.format) {
            (Some(rows), _) => {
                let mut row = Vec::new();
                rows.row(&result, &mut row);
                row.into_boxed_slice()
            }
            (None, GradeFormat::Human) => {
                let report = render::report(&result, self.pack, self.color);
                let mut bytes = Vec::with_capacity(report.len() + 1);
                bytes.push(b'\n');
                bytes.extend_from_slice(report.as_bytes());
                bytes.into_boxed_slice()
            }
            (None, GradeFormat::Json) => sink::document_element(&result)?.into_boxed_slice(),
            (None, _) => json_line(&result)?,
        };
        let record = match self.record {
            false => None,
            true if self.format == GradeFormat::Jsonl && result.explain.is_none() => {
                Some(RecordLine::Output)
            }
            true => {
                let mut line = Vec::new();
                sink::GradesFile::line(&result, &mut line)?;
                Some(RecordLine::Own(line.into_boxed_slice()))
            }
        };
        let summary = self.summary.then(|| summary::Tally::of(&result));
        let counted = self.rows.map(|_| Counted::of(&result));
        let below = self
            .floor
            .and_then(|threshold| summary::Floor::below(threshold, &result));
        let page = self.page.then(|| {
            if trace.is_some() {
                result.explain = trace;
            }
            Box::new(result)
        });
        Ok(Rendered {
            output,
            record,
            summary,
            counted,
            below,
            page,
        })
    }
}

/// Where a streamed run's results go, taken one at a time in the order of their sessions:
/// the output (held until the source has read cleanly: in memory to a budget, past it in a
/// temporary file), the grades file (held likewise, opened only once the output can go
/// out), the summary and the `--fail-under` gate (counts, not results). So a run over
/// millions of sessions holds none of their results.
struct Delivery {
    held: HeldOutput,
    format: GradeFormat,
    /// A row format's tally of the rows taken, for its head and tail.
    tally: Option<Tally>,
    /// A JSON document's sink, writing into a buffer emptied into `held` after each result.
    document: JsonDocument<Vec<u8>>,
    /// Results taken so far (every human report but the first follows a blank line).
    taken: usize,
    record: Option<grades::Recorder>,
    summary: Option<summary::Summary>,
    floor: Option<summary::Floor>,
    page: Option<crate::report::ReportBuilder>,
    /// The first result that could not be written or recorded.
    error: Option<CliError>,
}

impl Delivery {
    fn new(plan: &GradePlan) -> Self {
        Delivery {
            held: HeldOutput::new(plan.held_budget),
            format: plan.output.format,
            tally: plan.rows.as_ref().map(|rows| Tally::new(rows.pass_at())),
            document: JsonDocument::new(Vec::new()),
            taken: 0,
            record: (plan.record_to.as_deref())
                .map(|path| grades::Recorder::deferred(path, plan.default_grades)),
            summary: (plan.output.format == GradeFormat::Human).then(summary::Summary::default),
            floor: plan.output.fail_under.map(summary::Floor::new),
            page: plan
                .output
                .html
                .as_ref()
                .map(|_| crate::report::for_run(plan)),
            error: None,
        }
    }

    /// What each result is rendered for, by the thread that grades it.
    fn renders<'a>(&self, plan: &'a GradePlan) -> Renders<'a> {
        Renders {
            format: self.format,
            rows: plan.rows.as_deref(),
            color: plan.output.color,
            pack: &plan.pack,
            record: self.record.is_some(),
            summary: self.summary.is_some(),
            floor: self.floor.as_ref().map(summary::Floor::threshold),
            page: self.page.is_some(),
            explain: plan.output.explain,
        }
    }

    /// Takes the next result as rendered for this run.
    fn take(&mut self, rendered: Rendered) {
        let Rendered {
            output,
            record,
            summary,
            counted,
            below,
            page,
        } = rendered;
        if let (Some(builder), Some(result)) = (&mut self.page, page) {
            builder.add(&result);
        }
        if let (Some(summary), Some(tally)) = (&mut self.summary, summary) {
            summary.count(tally);
        }
        if let (Some(tally), Some(counted)) = (&mut self.tally, counted) {
            tally.count(counted);
        }
        if let Some(floor) = &mut self.floor {
            floor.count(below);
        }
        if let Some(recorder) = &mut self.record {
            match &record {
                Some(RecordLine::Output) => recorder.accept_line(&output),
                Some(RecordLine::Own(line)) => recorder.accept_line(line),
                None => {}
            }
        }
        match self.format {
            GradeFormat::Json => {
                if self.error.is_none() {
                    if let Err(err) = self.document.accept_element(output.into_vec()) {
                        self.error = Some(err.into());
                    }
                }
                self.hold_document();
            }
            // Reports are rendered after a blank line, which the first goes without.
            GradeFormat::Human if self.taken == 0 => {
                self.held
                    .write(Box::from(output.get(1..).unwrap_or_default()));
            }
            _ => self.held.write(output),
        }
        self.taken += 1;
    }

    fn hold_document(&mut self) {
        let written = std::mem::take(self.document.get_mut());
        if !written.is_empty() {
            self.held.write(written.into_boxed_slice());
        }
    }

    /// Ends the output (the JSON document's close, the summary after a whole source) and
    /// opens the grades file, once every result is in and the source read cleanly.
    fn close(&mut self, plan: &GradePlan) -> Result<(), CliError> {
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        let pack = &plan.pack;
        if let (Some(rows), Some(tally)) = (&plan.rows, &self.tally) {
            let mut tail = Vec::new();
            rows.tail(tally, &mut tail);
            self.held.write(tail.into_boxed_slice());
            let mut head = Vec::new();
            rows.head(tally, &mut head);
            self.held.put_first(head.into_boxed_slice());
        }
        match self.format {
            GradeFormat::Jsonl | GradeFormat::Csv | GradeFormat::Junit | GradeFormat::Markdown => {}
            GradeFormat::Json => {
                sink::Sink::finish(&mut self.document)?;
                self.hold_document();
            }
            GradeFormat::Human => {
                if let Some(summary) = self
                    .summary
                    .take()
                    .filter(|s| plan.selection.all && !s.is_empty())
                {
                    let bands: Vec<String> = pack.bands.iter().map(|b| b.grade.clone()).collect();
                    let text = format!("\n{}", summary.render(&bands));
                    self.held.write(text.into_bytes().into_boxed_slice());
                }
            }
        }
        if let Some(record) = &mut self.record {
            record.open_now()?;
        }
        Ok(())
    }
}

/// Copies held output where `--output` says, or to standard output; at each of `marks` (a
/// position in the output) `at_mark` says what belongs there on stderr.
fn write_held(
    plan: &GradePlan,
    held: HeldOutput,
    marks: &[u64],
    at_mark: &mut dyn FnMut(usize),
) -> Result<(), CliError> {
    let spill = |source| CliError::Held {
        dir: std::env::temp_dir(),
        source,
    };
    match &plan.output.to {
        Some(path) => {
            let fail = |source| CliError::Output {
                path: path.clone(),
                source,
            };
            let file = std::fs::File::create(path).map_err(fail)?;
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            // `finish` flushes what it wrote, and says so when that fails.
            held.finish(&mut out, marks, at_mark)
                .map_err(|err| match err {
                    HeldError::Write(err) => fail(err),
                    HeldError::Spill(source) => spill(source),
                })
        }
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            match held.finish(&mut out, marks, at_mark) {
                Err(HeldError::Write(err)) => crate::stdout_written(Err(err)),
                Err(HeldError::Spill(source)) => Err(spill(source)),
                Ok(()) => Ok(()),
            }
        }
    }
}

/// Grades the whole source streamed (the engine's [`grade_engine::run::grade_source_into`]),
/// delivering each result as soon as the sessions before it are graded; the output goes
/// out, and is recorded, only once the source has read cleanly (a late bad line prints
/// nothing).
fn stream(plan: &GradePlan, format: &dyn SourceFormat) -> Result<Streamed, CliError> {
    let bar = progress_bar();
    let report = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    // The format asked for (or detected once) is the one read: `--source-format` is not
    // second-guessed by detecting again.
    let run = SourceRun {
        format: Some(format),
        filter: Some(SessionFilter::All),
        read: plan.source.read.clone(),
        grade: plan.options.clone(),
    };
    let progress = bar
        .is_some()
        .then_some(&report as grade_engine::source::Progress<'_>);
    let lines_only = plan.lines_only;
    let pack = &plan.pack;
    let source = &plan.source;
    let mut delivery = Delivery::new(plan);
    let renders = delivery.renders(plan);
    // Each result is rendered by the thread that graded it for every place it goes.
    let then = |outcome: Outcome| -> Result<Graded, Box<CliError>> {
        Ok(match outcome {
            Ok(result) if lines_only => Graded::Line(json_line(&result)?),
            Ok(result) => Graded::Rendered(Box::new(renders.render(result)?)),
            Err(err) => Graded::Failed(Box::new(err)),
        })
    };
    // Failed sessions: where their message goes between the lines, and the message.
    let mut failures: Vec<(u64, Box<grade_engine::EvalError>)> = Vec::new();
    let mut total = 0usize;
    let mut first_error: Option<Box<CliError>> = None;
    let delivered = grade_engine::run::grade_source_into(
        pack,
        &source.registry,
        &source.path,
        &run,
        progress,
        then,
        &mut |graded| {
            total += 1;
            match graded {
                Ok(Graded::Line(line)) => delivery.held.write(line),
                Ok(Graded::Rendered(rendered)) => delivery.take(*rendered),
                Ok(Graded::Failed(err)) => failures.push((delivery.held.len(), err)),
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        },
    );
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let delivered = delivered?;
    if let Some(err) = first_error {
        return Err(*err);
    }
    for warning in &delivered.warnings {
        crate::warn(&warning.to_string());
    }
    let failure = |err: &grade_engine::EvalError| {
        eprintln!(
            "error: {}",
            render::for_stderr(&crate::error::eval_message(err))
        );
    };
    // Printed lines carry each failure's message between the lines around it; a report or
    // a document is preceded by all of them.
    let marks: Vec<u64> = if lines_only {
        failures.iter().map(|(at, _)| *at).collect()
    } else {
        failures.iter().for_each(|(_, err)| failure(err));
        Vec::new()
    };
    delivery.close(plan)?;
    let Delivery {
        held,
        record,
        floor,
        page,
        ..
    } = delivery;
    write_held(plan, held, &marks, &mut |i| failure(&failures[i].1))?;
    // A run whose output its reader closed records no grade that nobody saw.
    let record = record.filter(|_| !crate::output_closed());
    if let (Some(record), Some(path)) = (record, &plan.record_to) {
        let recorded = record.finish()?;
        if recorded > 0 {
            let plural = if recorded == 1 { "" } else { "s" };
            crate::note(&format!(
                "recorded {recorded} grade{plural} to {}",
                path.display()
            ));
        }
    }
    Ok(Streamed {
        failed: failures.len(),
        total,
        skipped: delivered.skipped_lines,
        floor,
        page,
    })
}

/// A progress bar on stderr, only when stderr is a terminal (silent when piped or logged).
fn progress_bar() -> Option<ProgressBar> {
    use std::io::IsTerminal;
    if crate::quiet() || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr_with_hz(10));
    bar.set_style(
        ProgressStyle::with_template("grading {wide_bar} {percent:>3}% {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// Grades `sessions` in parallel, each with its judgment when the command line asks for
/// one; a session graded without entries or judgment is worth a warning (once).
pub(crate) fn grade_sessions(
    plan: &GradePlan,
    sessions: &[Session],
    warn: &mut dyn FnMut(String),
) -> Result<Vec<Result<GradeResult, EvalError>>, CliError> {
    let judgments = judge::judgments(&plan.judging, &plan.pack, sessions)?;
    if judgments.iter().all(Option::is_none) {
        let mut warned = HashSet::new();
        for s in sessions
            .iter()
            .filter(|s| s.entries.is_empty() && warned.insert(&s.id))
        {
            warn(grade_engine::named::empty_session_warning(
                &render::escape_controls(&s.id),
                plan.source_path(),
            ));
        }
    }
    Ok(grade_engine::run::grade_sessions(
        &plan.pack,
        sessions,
        &judgments,
        &plan.options,
    ))
}

/// The judge prompts of the sessions, as `--print-prompt` shows them.
pub(crate) fn print_prompts(
    pack: &CompiledPack,
    sessions: &[Session],
    format: Format,
) -> Result<(), CliError> {
    let judge = pack.judge.as_ref().ok_or_else(|| {
        CliError::Usage(format!("rubric `{}` has no judge prompt (only packs with judged dimensions, like `langfuse-v1`, do)", pack.id))
    })?;
    let mut out = String::new();
    let mut all = Vec::new();
    for s in sessions {
        let prompts = grade_engine::prompt::render_prompts(pack, judge, s);
        let n = prompts.len();
        for (i, p) in prompts.into_iter().enumerate() {
            if format == Format::Human {
                out.push_str(&format!(
                    "===== session `{}`, prompt {} of {n} =====\n",
                    s.id,
                    i + 1
                ));
                out.push_str(&p);
                if !p.ends_with('\n') {
                    out.push('\n');
                }
            } else {
                all.push(serde_json::json!({"sessionId": s.id, "chunk": i + 1, "chunks": n, "prompt": p}));
            }
        }
    }
    match format {
        Format::Human => {}
        Format::Json => {
            out = format!(
                "{}\n",
                serde_json::to_string_pretty(&all).map_err(CliError::Json)?
            )
        }
        Format::Jsonl => {
            for p in &all {
                out.push_str(&serde_json::to_string(p).map_err(CliError::Json)?);
                out.push('\n');
            }
        }
    }
    write_stdout(out.as_bytes())
}
