//! Results as JSON: one line each, or one document for the whole run.

use std::io::Write;

use super::{Sink, SinkError};
use crate::GradeResult;

/// One compact JSON line per result, written as it comes (`grade --format jsonl`).
#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: W,
}

impl<W: Write> JsonLines<W> {
    /// Lines written to `out`.
    pub fn new(out: W) -> Self {
        JsonLines { out }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Sink for JsonLines<W> {
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError> {
        serde_json::to_writer(&mut self.out, result).map_err(SinkError::Json)?;
        self.out.write_all(b"\n").map_err(SinkError::Write)
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        self.out.flush().map_err(SinkError::Write)
    }
}

/// The whole run as one pretty-printed JSON document (`grade --format json`): the result
/// itself when there is exactly one, else an array of them.
#[derive(Debug)]
pub struct JsonDocument<W: Write> {
    out: W,
    results: Vec<GradeResult>,
}

impl<W: Write> JsonDocument<W> {
    /// A document written to `out` when the sink is finished.
    pub fn new(out: W) -> Self {
        JsonDocument {
            out,
            results: Vec::new(),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Sink for JsonDocument<W> {
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError> {
        self.results.push(result.clone());
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        let written = if let [one] = self.results.as_slice() {
            serde_json::to_writer_pretty(&mut self.out, one)
        } else {
            serde_json::to_writer_pretty(&mut self.out, &self.results)
        };
        written.map_err(SinkError::Json)?;
        self.results.clear();
        self.out.write_all(b"\n").map_err(SinkError::Write)?;
        self.out.flush().map_err(SinkError::Write)
    }
}
