//! GRADES.jsonl: one grade per line, appended, never half-written.

use std::path::{Path, PathBuf};

use grade_engine::sink::{self, grades_read, GradesFile, Sink as _};
use grade_engine::source::SourceFormat;
use grade_engine::GradeResult;
use serde_json::Value;

use crate::error::CliError;

/// Where a grading run records its results: `--grades FILE` when given; CLEO's history file
/// (`.cleo/metrics/GRADES.jsonl`) for a CLEO source, as CLEO's grader does; nowhere for
/// other sources (a Claude Code transcript's grades do not belong in CLEO's history) or
/// with `--no-record`.
pub fn destination(grades: Option<&Path>, no_record: bool, cleo_source: bool) -> Option<PathBuf> {
    if no_record {
        return None;
    }
    match grades {
        Some(path) => Some(path.to_owned()),
        None if cleo_source => Some(PathBuf::from(crate::DEFAULT_GRADES)),
        None => None,
    }
}

/// Whether a source format is CLEO's (its `tasks.db` or audit log), whose grades belong in
/// CLEO's history file.
pub fn is_cleo(format: &dyn SourceFormat) -> bool {
    format.name().starts_with("cleo-")
}

/// The grades file of a run, recorded as the engine's [`GradesFile`] sink records; what
/// appending mended is told on stderr.
pub struct Recorder(GradesFile);

impl Recorder {
    /// Opens the grades file before anything is printed (see [`GradesFile::open`]). The
    /// `default` history (no `--grades` given) is not followed through symbolic links.
    pub fn open(path: &Path, default: bool) -> Result<Recorder, CliError> {
        let mut recorder = Recorder::deferred(path, default);
        recorder.open_now()?;
        Ok(recorder)
    }

    /// A grades file taking results before it is opened (see [`GradesFile::deferred`]): a
    /// streamed run takes each result as it is graded, and opens the file only once the
    /// source has read cleanly, before anything is printed.
    pub fn deferred(path: &Path, default: bool) -> Recorder {
        let file = GradesFile::deferred(path);
        Recorder(if default { file.without_links() } else { file })
    }

    /// Takes the next result to record.
    pub fn accept(&mut self, result: &GradeResult) -> Result<(), CliError> {
        Ok(self.0.accept(result)?)
    }

    /// Takes the next result as [`GradesFile::line`] rendered it.
    pub fn accept_line(&mut self, line: &[u8]) {
        self.0.accept_line(line);
    }

    /// Opens a deferred grades file, so that one that cannot be written fails the run
    /// before anything is printed.
    pub fn open_now(&mut self) -> Result<(), CliError> {
        Ok(self.0.open_now()?)
    }

    /// Appends one line per result, in one write.
    pub fn append(mut self, results: &[GradeResult]) -> Result<(), CliError> {
        for r in results {
            self.accept(r)?;
        }
        self.finish().map(|_| ())
    }

    /// Appends the lines of the results taken, and says how many it recorded.
    pub fn finish(mut self) -> Result<usize, CliError> {
        let written = sink::Sink::finish(&mut self.0);
        for warning in self.0.warnings() {
            crate::warn(&warning.to_string());
        }
        written?;
        Ok(self.0.recorded())
    }
}

/// What `read` makes of each JSON value of a JSON-lines file, given its line number, or
/// `None` when the file does not exist (see [`grades_read::read_json_lines_as`]).
pub fn read_json_lines_as<T: Send>(
    path: &Path,
    read: impl Fn(usize, Value) -> T + Sync,
) -> Result<Option<Vec<T>>, CliError> {
    let Some(text) = read_text(path)? else {
        return Ok(None);
    };
    grades_read::read_json_lines_as(path, &text, read, &mut warn)
        .map(Some)
        .map_err(line_error)
}

fn warn(warning: String) {
    eprintln!("warning: {warning}");
}

fn line_error(e: grades_read::GradesLineError) -> CliError {
    CliError::GradesLine {
        path: e.path,
        line: e.line,
        message: e.message,
    }
}

/// A JSON-lines file's text, or `None` when it does not exist.
pub(crate) fn read_text(path: &Path) -> Result<Option<String>, CliError> {
    crate::input::read_text(path, crate::input::MAX_DOCUMENT, "grades file").map_err(|source| {
        CliError::GradesRead {
            path: path.to_owned(),
            source,
        }
    })
}

/// What `keep` makes of each recorded grade, for those it keeps, in the file's order; a
/// missing file has none. A last line without a line end that is not JSON is a write that
/// never finished: it is skipped with a warning, and the whole lines before it are read. Only
/// what is kept is held: a grades file grows by a line per session graded, and a JSON tree
/// of every line took 8 times the file's size.
pub fn read_kept<T: Send>(
    path: &Path,
    keep: impl Fn(Value) -> Option<T> + Sync,
) -> Result<Vec<T>, CliError> {
    read_kept_at(path, |_, grade| keep(grade))
}

/// [`read_kept`], with each grade's line number (from 1) given to `keep` (see
/// [`grades_read::read_kept_at`]): a caller that pages through the file picks grades by line
/// in a second reading without holding the first reading's grades.
pub fn read_kept_at<T: Send>(
    path: &Path,
    keep: impl Fn(usize, Value) -> Option<T> + Sync,
) -> Result<Vec<T>, CliError> {
    let Some(text) = read_text(path)? else {
        return Ok(Vec::new());
    };
    grades_read::read_kept_at(path, text, keep, &mut warn).map_err(line_error)
}
