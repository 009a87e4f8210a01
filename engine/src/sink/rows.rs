//! Formats that write a row per result between a head and a tail: CSV, JUnit XML, a
//! Markdown table. A row is rendered from its result alone (so a run can render it on the
//! thread that graded the session); the head and the tail are written once every row is in,
//! from what the rows added up to (JUnit's head counts the failures). One trait, one sink:
//! a new row format is a file that implements [`RowFormat`].

use std::collections::BTreeMap;
use std::io::Write;

use super::{Sink, SinkError};
use crate::pack::CompiledPack;
use crate::GradeResult;

/// A format written a row per result. The head is written before the rows but made after
/// them, from their [`Tally`].
pub trait RowFormat: Send + Sync + std::fmt::Debug {
    /// The percent a session needs to pass.
    fn pass_at(&self) -> f64;
    /// Appends `result`'s row to `out`.
    fn row(&self, result: &GradeResult, out: &mut Vec<u8>);
    /// Appends what comes before the rows.
    fn head(&self, tally: &Tally, out: &mut Vec<u8>);
    /// Appends what comes after the rows.
    fn tail(&self, tally: &Tally, out: &mut Vec<u8>);
}

/// A row format as `grade --format` names it: its name, its help and how it is made, said
/// once beside the format itself. The formats there are: [`ROW_FORMATS`](super::ROW_FORMATS).
#[derive(Debug, Clone, Copy)]
pub struct RowFormatKind {
    /// Its name on the command line (`--format NAME`).
    pub name: &'static str,
    /// What it writes, in a phrase (the command line's help).
    pub help: &'static str,
    /// Makes it for `pack`'s results; a session passes at `pass_at` percent.
    pub make: fn(pack: &CompiledPack, pass_at: f64) -> Box<dyn RowFormat>,
}

/// A borrowed format is one: a run's `Box<dyn RowFormat>` lends itself to each [`Rows`].
impl<F: RowFormat + ?Sized> RowFormat for &F {
    fn pass_at(&self) -> f64 {
        (**self).pass_at()
    }
    fn row(&self, result: &GradeResult, out: &mut Vec<u8>) {
        (**self).row(result, out);
    }
    fn head(&self, tally: &Tally, out: &mut Vec<u8>) {
        (**self).head(tally, out);
    }
    fn tail(&self, tally: &Tally, out: &mut Vec<u8>) {
        (**self).tail(tally, out);
    }
}

/// What a row adds to a [`Tally`]: taken from a result by the thread that rendered its row,
/// so that the thread that takes rows in order only adds.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    /// The percentage of a result graded out of more than 0 points; `None` for one with
    /// nothing to grade (no dimension applied).
    percent: Option<f64>,
    grade: Option<Box<str>>,
}

impl Counted {
    /// What `result` adds to a tally.
    pub fn of(result: &GradeResult) -> Counted {
        Counted {
            percent: result.graded_percent(),
            grade: result.grade.as_deref().map(Box::from),
        }
    }
}

/// The rows of a run added up: how many, how many passed and failed, their mean, their
/// letters.
#[derive(Debug, Clone)]
pub struct Tally {
    pass_at: f64,
    /// Results counted.
    pub results: usize,
    /// Results with nothing to grade: neither passed nor failed.
    pub nothing_to_grade: usize,
    /// Graded results below the pass mark.
    pub failed: usize,
    /// The percentages of the graded results, summed in order (from `-0.0`, as `Sum`).
    percents: f64,
    letters: BTreeMap<String, usize>,
}

impl Tally {
    /// An empty tally; a graded result below `pass_at` percent fails.
    pub fn new(pass_at: f64) -> Tally {
        Tally {
            pass_at,
            results: 0,
            nothing_to_grade: 0,
            failed: 0,
            percents: -0.0,
            letters: BTreeMap::new(),
        }
    }

    /// Counts the next result.
    pub fn count(&mut self, counted: Counted) {
        self.results += 1;
        match counted.percent {
            None => self.nothing_to_grade += 1,
            Some(percent) => {
                self.percents += percent;
                if percent < self.pass_at {
                    self.failed += 1;
                }
            }
        }
        if let Some(grade) = counted.grade.filter(|_| counted.percent.is_some()) {
            *self.letters.entry(grade.into()).or_default() += 1;
        }
    }

    /// The percent a result needs to pass.
    pub fn pass_at(&self) -> f64 {
        self.pass_at
    }

    /// Results that were graded (had a dimension that applied).
    pub fn graded(&self) -> usize {
        self.results - self.nothing_to_grade
    }

    /// The mean percentage of the graded results, rounded to two decimals; `None` when
    /// none was graded.
    pub fn mean(&self) -> Option<f64> {
        let graded = self.graded();
        (graded > 0).then(|| crate::result::percent_of(self.percents / graded as f64, 100.0))
    }

    /// How many results got each letter, in the order of `bands` (best first), then the
    /// letters the bands do not name.
    pub fn letters<'a>(&'a self, bands: &'a [crate::pack::Band]) -> Vec<(&'a str, usize)> {
        let mut out: Vec<(&str, usize)> = bands
            .iter()
            .filter_map(|b| Some((b.grade.as_str(), *self.letters.get(&b.grade)?)))
            .collect();
        out.extend(
            self.letters
                .iter()
                .filter(|(g, _)| !bands.iter().any(|b| &b.grade == *g))
                .map(|(g, n)| (g.as_str(), *n)),
        );
        out
    }
}

/// Whether `result` passes at `pass_at` percent: `None` when it had nothing to grade.
pub fn passes(result: &GradeResult, pass_at: f64) -> Option<bool> {
    result.graded_percent().map(|p| p >= pass_at)
}

/// The columns of a pack's dimensions: their ids and names, in the pack's order.
#[derive(Debug, Clone)]
pub(crate) struct Columns {
    pub(crate) dimensions: Vec<(String, String)>,
    pub(crate) rubric: String,
    pub(crate) version: String,
    pub(crate) bands: Vec<crate::pack::Band>,
}

impl Columns {
    pub(crate) fn of(pack: &CompiledPack) -> Columns {
        Columns {
            dimensions: pack
                .dimensions
                .iter()
                .map(|d| (d.id.clone(), d.name.clone()))
                .collect(),
            rubric: pack.id.clone(),
            version: pack.version.clone(),
            bands: pack.bands.clone(),
        }
    }
}

/// A [`RowFormat`] as a [`Sink`]: rows are kept (as bytes) until the sink is finished,
/// because the head, written first, counts them.
#[derive(Debug)]
pub struct Rows<W: Write, F: RowFormat> {
    out: W,
    format: F,
    tally: Tally,
    body: Vec<u8>,
}

impl<W: Write, F: RowFormat> Rows<W, F> {
    /// Rows of `format`, written to `out` when the sink is finished.
    pub fn new(out: W, format: F) -> Self {
        Rows {
            out,
            tally: Tally::new(format.pass_at()),
            format,
            body: Vec::new(),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write, F: RowFormat> Sink for Rows<W, F> {
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError> {
        self.format.row(result, &mut self.body);
        self.tally.count(Counted::of(result));
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        let mut head = Vec::new();
        self.format.head(&self.tally, &mut head);
        let mut tail = Vec::new();
        self.format.tail(&self.tally, &mut tail);
        for part in [&head, &self.body, &tail] {
            self.out.write_all(part).map_err(SinkError::Write)?;
        }
        self.body.clear();
        self.tally = Tally::new(self.format.pass_at());
        self.out.flush().map_err(SinkError::Write)
    }
}

/// `c`, a control character (or one XML 1.0 cannot hold), as a visible escape (`\u{1b}`):
/// for formats read by people, whose viewers would act on it or refuse the file.
pub(crate) fn push_visible(out: &mut Vec<u8>, c: char) {
    out.extend_from_slice(c.escape_unicode().to_string().as_bytes());
}

/// Whether `c` is written as a visible escape by [`push_visible`] (line ends and tabs are
/// left to each format).
pub(crate) fn is_hidden(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || matches!(c, '\u{fffe}' | '\u{ffff}')
}
