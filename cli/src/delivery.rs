//! Where a grading run's results go: one delivery for the whole read and the streamed one.
//! Each result is rendered, by the thread that graded it, for every place it goes
//! ([`Renders`]); the one thread taking results in the order of their sessions hands each
//! place its part ([`Delivery::take`]): the output in the form `--format` asks (a human
//! report, one JSON document, JSON lines, a row format of the engine's sinks, or the
//! Langfuse score bodies of `--emit`), the summary after a whole source, the `--fail-under`
//! gate, the grades file and the page of `--html`. A session that could not be graded is
//! taken too ([`Delivery::failed`]): its message goes where the output's form wants it.
//! [`Delivery::finish`] ends the output, writes it, then records what it wrote.

use grade_engine::sink::langfuse::ScoreBody;
use grade_engine::sink::{self, Counted, JsonDocument, RowFormat, Tally};
use grade_engine::{CompiledPack, EvalError, GradeResult};

use crate::args::GradeFormat;
use crate::error::CliError;
use crate::held::{HeldError, HeldOutput};
use crate::plan::GradePlan;
use crate::report::ReportBuilder;
use crate::{grades, render, summary};

/// The form of a run's output: the one place `--format` is told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A report per result, after a blank line but the first; a summary after `--all`.
    Human,
    /// One JSON document: an array of the results.
    Document,
    /// A JSON line per result.
    Lines,
    /// A row per result, with the row format's head and tail (CSV, JUnit, Markdown).
    Rows,
    /// `--emit langfuse`: the score bodies of the results, in place of the results.
    Scores,
}

impl Shape {
    fn of(plan: &GradePlan) -> Shape {
        if plan.output.emit {
            return Shape::Scores;
        }
        match plan.output.format {
            GradeFormat::Human => Shape::Human,
            GradeFormat::Json => Shape::Document,
            GradeFormat::Jsonl => Shape::Lines,
            GradeFormat::Rows(_) => Shape::Rows,
        }
    }
}

/// A result as a line of `--format jsonl`.
pub(crate) fn json_line(result: &GradeResult) -> Result<Box<[u8]>, CliError> {
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

/// A result rendered by the thread that graded it for every place it goes, so that the one
/// thread taking results in order only moves bytes and adds counts: rendering there (two
/// JSON lines a result when a run records, a summary's flag shapes) held up the pipeline,
/// and the default run (`--all`, recorded, human) took 1.86× the time of `--format jsonl
/// --no-record`.
pub(crate) struct Rendered {
    /// Its JSON line, its human report after a blank line, its element of a JSON
    /// document's array, or its row (nothing for `--emit`).
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
pub(crate) struct Renders<'a> {
    shape: Shape,
    /// The row format of `--format`, when it is one.
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
    pub(crate) fn render(&self, mut result: GradeResult) -> Result<Rendered, CliError> {
        // `--html` keeps each rule's trace for the page; the output has it only with `--explain`.
        let trace = if self.explain {
            None
        } else {
            result.explain.take()
        };
        let output = match (self.rows, self.shape) {
            (_, Shape::Scores) => Box::default(),
            (Some(rows), _) => {
                let mut row = Vec::new();
                rows.row(&result, &mut row);
                row.into_boxed_slice()
            }
            (None, Shape::Human) => {
                let report = render::report(&result, self.pack, self.color);
                let mut bytes = Vec::with_capacity(report.len() + 1);
                bytes.push(b'\n');
                bytes.extend_from_slice(report.as_bytes());
                bytes.into_boxed_slice()
            }
            (None, Shape::Document) => sink::document_element(&result)?.into_boxed_slice(),
            (None, Shape::Lines | Shape::Rows) => json_line(&result)?,
        };
        let record = match self.record {
            false => None,
            true if self.shape == Shape::Lines && result.explain.is_none() => {
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

/// When the message of a session that could not be graded is said on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureNotes {
    /// As it is taken: the whole read says them before any output is rendered.
    AtOnce,
    /// All of them, once the source has read cleanly, before the output goes out.
    BeforeOutput,
    /// Each between the printed lines around it (a streamed run that only prints lines).
    BetweenLines,
}

/// Where a run's results go, taken one at a time in the order of their sessions: the
/// output (held until the source has read cleanly: in memory to a budget, past it in a
/// temporary file), the grades file (held likewise, opened only once the output can go
/// out), the summary and the `--fail-under` gate (counts, not results). So a run over
/// millions of sessions holds none of their results.
pub(crate) struct Delivery<'p> {
    plan: &'p GradePlan,
    held: HeldOutput,
    shape: Shape,
    /// A row format's tally of the rows taken, for its head and tail.
    tally: Option<Tally>,
    /// A JSON document's sink, writing into a buffer emptied into `held` after each result.
    document: JsonDocument<Vec<u8>>,
    /// Results taken so far (every human report but the first follows a blank line).
    taken: usize,
    record: Option<grades::Recorder>,
    summary: Option<summary::Summary>,
    floor: Option<summary::Floor>,
    page: Option<ReportBuilder>,
    notes: FailureNotes,
    /// The sessions that could not be graded, each with where the output was then.
    failures: Vec<(u64, Box<EvalError>)>,
    failed: usize,
    /// The first result that could not be written or recorded.
    error: Option<CliError>,
}

/// What a delivered run leaves to say once its output is out (and recorded).
pub(crate) struct Delivered {
    /// Sessions that could not be graded, of `total`.
    pub failed: usize,
    pub total: usize,
    /// The `--fail-under` gate, with every result counted.
    pub floor: Option<summary::Floor>,
    /// The page of `--html`, with every result added.
    pub page: Option<ReportBuilder>,
}

impl<'p> Delivery<'p> {
    pub(crate) fn new(plan: &'p GradePlan, notes: FailureNotes) -> Self {
        let shape = Shape::of(plan);
        Delivery {
            plan,
            held: HeldOutput::new(plan.held_budget),
            shape,
            tally: (plan.rows.as_ref())
                .filter(|_| shape == Shape::Rows)
                .map(|rows| Tally::new(rows.pass_at())),
            document: JsonDocument::new(Vec::new()),
            taken: 0,
            record: (plan.record_to.as_deref())
                .map(|path| grades::Recorder::deferred(path, plan.default_grades)),
            summary: (shape == Shape::Human).then(summary::Summary::default),
            floor: plan.output.fail_under.map(summary::Floor::new),
            page: plan
                .output
                .html
                .as_ref()
                .map(|_| crate::report::for_run(plan)),
            notes,
            failures: Vec::new(),
            failed: 0,
            error: None,
        }
    }

    /// What each result is rendered for, by the thread that grades it.
    pub(crate) fn renders(&self) -> Renders<'p> {
        Renders {
            shape: self.shape,
            rows: self
                .plan
                .rows
                .as_deref()
                .filter(|_| self.shape == Shape::Rows),
            color: self.plan.output.color,
            pack: &self.plan.pack,
            record: self.record.is_some(),
            summary: self.summary.is_some(),
            floor: self.floor.as_ref().map(summary::Floor::threshold),
            page: self.page.is_some(),
            explain: self.plan.output.explain,
        }
    }

    /// Takes a result's JSON line, when lines are all the run prints.
    pub(crate) fn take_line(&mut self, line: Box<[u8]>) {
        self.taken += 1;
        self.held.write(line);
    }

    /// Takes a session that could not be graded: its message is said when
    /// [`FailureNotes`] says, and the run fails once its output is out.
    pub(crate) fn failed(&mut self, err: Box<EvalError>) {
        self.failed += 1;
        match self.notes {
            FailureNotes::AtOnce => say_failure(&err),
            FailureNotes::BeforeOutput | FailureNotes::BetweenLines => {
                self.failures.push((self.held.len(), err));
            }
        }
    }

    /// Takes the next result as rendered for this run.
    pub(crate) fn take(&mut self, rendered: Rendered) {
        let output = rendered.output;
        if let (Some(builder), Some(result)) = (&mut self.page, rendered.page) {
            builder.add(&result);
        }
        if let (Some(summary), Some(tally)) = (&mut self.summary, rendered.summary) {
            summary.count(tally);
        }
        if let (Some(tally), Some(counted)) = (&mut self.tally, rendered.counted) {
            tally.count(counted);
        }
        if let Some(floor) = &mut self.floor {
            floor.count(rendered.below);
        }
        if let Some(recorder) = &mut self.record {
            match &rendered.record {
                Some(RecordLine::Output) => recorder.accept_line(&output),
                Some(RecordLine::Own(line)) => recorder.accept_line(line),
                None => {}
            }
        }
        match self.shape {
            Shape::Document => {
                if self.error.is_none() {
                    if let Err(err) = self.document.accept_element(output.into_vec()) {
                        self.error = Some(err.into());
                    }
                }
                self.hold_document();
            }
            // Reports are rendered after a blank line, which the first goes without.
            Shape::Human if self.taken == 0 => {
                self.held
                    .write(Box::from(output.get(1..).unwrap_or_default()));
            }
            Shape::Scores => {}
            Shape::Human | Shape::Lines | Shape::Rows => self.held.write(output),
        }
        self.taken += 1;
    }

    /// Takes the score bodies `--emit langfuse` prints, a JSON line each.
    pub(crate) fn take_scores(&mut self, scores: &[ScoreBody]) -> Result<(), CliError> {
        for body in scores {
            let mut line = serde_json::to_vec(body).map_err(CliError::Json)?;
            line.push(b'\n');
            self.held.write(line.into_boxed_slice());
        }
        Ok(())
    }

    fn hold_document(&mut self) {
        let written = std::mem::take(self.document.get_mut());
        if !written.is_empty() {
            self.held.write(written.into_boxed_slice());
        }
    }

    /// Ends the output (the JSON document's close, a row format's head and tail, the
    /// summary after a whole source) and opens the grades file, once every result is in and
    /// the source read cleanly.
    fn close(&mut self) -> Result<(), CliError> {
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        if let (Some(rows), Some(tally)) = (&self.plan.rows, &self.tally) {
            let mut tail = Vec::new();
            rows.tail(tally, &mut tail);
            self.held.write(tail.into_boxed_slice());
            let mut head = Vec::new();
            rows.head(tally, &mut head);
            self.held.put_first(head.into_boxed_slice());
        }
        if self.shape == Shape::Document {
            sink::Sink::finish(&mut self.document)?;
            self.hold_document();
        }
        let all = self.plan.selection.all;
        if let Some(summary) = self.summary.take().filter(|s| all && !s.is_empty()) {
            let bands: Vec<String> = self
                .plan
                .pack
                .bands
                .iter()
                .map(|b| b.grade.clone())
                .collect();
            let text = format!("\n{}", summary.render(&bands));
            self.held.write(text.into_bytes().into_boxed_slice());
        }
        if let Some(record) = &mut self.record {
            record.open_now()?;
        }
        Ok(())
    }

    /// Ends the output, writes it where `--output` says (or to standard output), then
    /// records the results: a run whose output was lost (a full disk, a closed pipe) leaves
    /// no grade behind that nobody saw. The grades file is opened first, so one that cannot
    /// be written fails the run before anything is printed.
    pub(crate) fn finish(mut self) -> Result<Delivered, CliError> {
        if self.notes == FailureNotes::BeforeOutput {
            self.failures.iter().for_each(|(_, err)| say_failure(err));
        }
        self.close()?;
        let marks: Vec<u64> = match self.notes {
            FailureNotes::BetweenLines => self.failures.iter().map(|(at, _)| *at).collect(),
            FailureNotes::AtOnce | FailureNotes::BeforeOutput => Vec::new(),
        };
        let failures = &self.failures;
        write_held(
            self.plan.output.to.as_deref(),
            self.held,
            &marks,
            &mut |i| {
                say_failure(&failures[i].1);
            },
        )?;
        // A run whose output its reader closed records no grade that nobody saw.
        let record = self.record.filter(|_| !crate::output_closed());
        if let (Some(record), Some(path)) = (record, &self.plan.record_to) {
            let recorded = record.finish()?;
            if recorded > 0 {
                let plural = if recorded == 1 { "" } else { "s" };
                crate::note(&format!(
                    "recorded {recorded} grade{plural} to {}",
                    path.display()
                ));
            }
        }
        Ok(Delivered {
            failed: self.failed,
            total: self.taken + self.failed,
            floor: self.floor,
            page: self.page,
        })
    }
}

/// The message of a session that could not be graded (a runaway script), on stderr.
fn say_failure(err: &EvalError) {
    eprintln!("{}", crate::error::eval_line(err));
}

/// Copies held output to the file `to` names, or to standard output; at each of `marks` (a
/// position in the output) `at_mark` says what belongs there on stderr.
fn write_held(
    to: Option<&std::path::Path>,
    held: HeldOutput,
    marks: &[u64],
    at_mark: &mut dyn FnMut(usize),
) -> Result<(), CliError> {
    let spill = |source| CliError::Held {
        dir: std::env::temp_dir(),
        source,
    };
    match to {
        Some(path) => {
            let fail = |source| CliError::Output {
                path: path.to_owned(),
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

#[cfg(test)]
mod tests;
