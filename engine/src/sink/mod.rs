//! Where a run's results go. Every destination is a [`Sink`]: it takes the results one at
//! a time, in order, and is finished once they are all in. The engine's own: JSON lines
//! ([`JsonLines`]), one JSON document ([`JsonDocument`]), CLEO's grades file
//! ([`GradesFile`], read back with [`grades_read`]), Langfuse score bodies ([`langfuse::LangfuseScores`]), and the formats
//! written a row per result ([`RowFormat`], as the sink [`Rows`]): [`Csv`], [`JUnit`] XML
//! and a [`Markdown`] summary. An embedder adds its own by implementing the trait (the
//! `grade` binary's human report is rendered from the results themselves).

mod csv;
mod grades_file;
pub mod grades_read;
mod json;
mod junit;
pub mod langfuse;
mod markdown;
pub(crate) mod mend;
mod rows;
mod signals;
mod spool;

use std::path::PathBuf;

pub use csv::Csv;
pub use grades_file::GradesFile;
pub use grades_read::GradesLineError;
pub use json::{document_element, JsonDocument, JsonLines};
pub use junit::JUnit;
pub use markdown::Markdown;
pub use mend::not_a_grade;
pub use rows::{passes, Counted, RowFormat, RowFormatKind, Rows, Tally};

/// The row formats, in the order `grade --format` lists them. A new one is its file in this
/// folder and its line here: the command line takes its name and help from this list.
pub const ROW_FORMATS: &[RowFormatKind] = &[csv::FORMAT, junit::FORMAT, markdown::FORMAT];

/// What appending to a grades file holding `bytes` does before it appends: `Ok(n)` cuts the
/// last `n` bytes (a torn grade line; 0 for none), `Err(line)` refuses the file, whose line
/// `line` is not a grade. For the fuzz targets (`fuzz/`), not part of the API: it lives here
/// rather than in the crate root's `fuzzing` module so that the root imports nothing of the
/// layer it sits on (`engine/tests/module_layers.rs`).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub fn grades_file_mend(bytes: &[u8]) -> Result<u64, u64> {
    match mend::check_bytes(bytes) {
        Ok(mend::Tail::Torn(n)) => Ok(n),
        Ok(mend::Tail::Whole | mend::Tail::NoLineEnd) => Ok(0),
        Err(not) => Err(not.line),
    }
}

use crate::GradeResult;

/// Why a sink could not take or write results.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SinkError {
    /// The grades file could not be opened or appended to; it is left as it was when it can be.
    #[error("cannot write grades file `{}`: {source}", path.display())]
    Grades {
        /// The grades file.
        path: PathBuf,
        /// Why it could not be written.
        #[source]
        source: std::io::Error,
    },
    /// A result could not be serialised.
    #[error("cannot serialise a result: {0}")]
    Json(#[source] serde_json::Error),
    /// The sink's writer failed.
    #[error("cannot write results: {0}")]
    Write(#[source] std::io::Error),
}

impl SinkError {
    /// The error's diagnostic code, as `error[CODE]: …` shows it.
    pub fn code(&self) -> crate::pack::codes::Code {
        use crate::pack::codes::Code;
        match self {
            SinkError::Grades { .. } => Code::GradesWrite,
            SinkError::Json(_) => Code::Serialise,
            SinkError::Write(_) => Code::OutputWrite,
        }
    }
}

/// A destination of results.
pub trait Sink {
    /// Takes the next result of the run.
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError>;

    /// Ends the run: what the sink held back until every result was in is written now.
    fn finish(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
}

/// Hands every result to `sink`, in order, and finishes it.
pub fn write_all(sink: &mut dyn Sink, results: &[GradeResult]) -> Result<(), SinkError> {
    for result in results {
        sink.accept(result)?;
    }
    sink.finish()
}
