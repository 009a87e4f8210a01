//! Results as JSON: one line each, or one document for the whole run.

use std::io::Write;

use super::{Sink, SinkError};
use crate::GradeResult;

/// One compact JSON line per result, written as it comes (`grade --format jsonl`).
#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: W,
    /// The line being written, kept between results.
    line: Vec<u8>,
}

impl<W: Write> JsonLines<W> {
    /// Lines written to `out`.
    pub fn new(out: W) -> Self {
        JsonLines {
            out,
            line: Vec::new(),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The writer, to take what was written so far (from a `Vec<u8>`, say).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

impl<W: Write> Sink for JsonLines<W> {
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError> {
        self.line.clear();
        result
            .write_json_line(&mut self.line)
            .map_err(SinkError::Json)?;
        self.out.write_all(&self.line).map_err(SinkError::Write)
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        self.out.flush().map_err(SinkError::Write)
    }
}

/// `result` as an element of the document's array: exactly the bytes pretty-printing the
/// whole array gives it (`[\n`, elements indented by two and separated by `,\n`, then
/// `\n]` at the end). [`JsonDocument`]'s [`Sink::accept`] is this and [`JsonDocument::accept_element`];
/// apart, elements can be rendered by the threads that grade, and only taken in order by
/// the one that writes.
pub fn document_element(result: &GradeResult) -> Result<Vec<u8>, SinkError> {
    let alone = serde_json::to_vec_pretty(result).map_err(SinkError::Json)?;
    let mut element = Vec::new();
    crate::json::push_indented(&mut element, &alone, b"  ");
    Ok(element)
}

/// The whole run as one pretty-printed JSON document (`grade --format json`): the result
/// itself when there is exactly one, else an array of them. Results are written as they come
/// (once a second one shows the document is an array), not kept: a run over many sessions
/// holds its document's bytes, not a copy of every result beside them.
#[derive(Debug)]
pub struct JsonDocument<W: Write> {
    out: W,
    /// The first result's element, until a second one (or the end) says how it is written.
    first: Option<Vec<u8>>,
    /// Elements of the array written so far.
    written: usize,
}

impl<W: Write> JsonDocument<W> {
    /// A document written to `out`.
    pub fn new(out: W) -> Self {
        JsonDocument {
            out,
            first: None,
            written: 0,
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The writer, to take what was written so far (from a `Vec<u8>`, say).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Takes the next result, with its element as [`document_element`] rendered it.
    pub fn accept_element(&mut self, element: Vec<u8>) -> Result<(), SinkError> {
        match self.first.take() {
            None if self.written == 0 => self.first = Some(element),
            // A second result: the document is an array, and the first opens it.
            Some(first) => {
                self.write_element(&first)?;
                self.write_element(&element)?;
            }
            None => self.write_element(&element)?,
        }
        Ok(())
    }

    fn write_element(&mut self, element: &[u8]) -> Result<(), SinkError> {
        let separator: &[u8] = if self.written == 0 { b"[\n" } else { b",\n" };
        self.out.write_all(separator).map_err(SinkError::Write)?;
        self.out.write_all(element).map_err(SinkError::Write)?;
        self.written += 1;
        Ok(())
    }
}

impl<W: Write> Sink for JsonDocument<W> {
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError> {
        self.accept_element(document_element(result)?)
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        if let Some(one) = self.first.take() {
            // Alone, the result is the document: its element one level of indentation
            // out, the two spaces `push_indented` put before each line taken off again.
            for line in one.split_inclusive(|&b| b == b'\n') {
                let line = line.strip_prefix(b"  ").unwrap_or(line);
                self.out.write_all(line).map_err(SinkError::Write)?;
            }
        } else if self.written == 0 {
            self.out.write_all(b"[]").map_err(SinkError::Write)?;
        } else {
            self.out.write_all(b"\n]").map_err(SinkError::Write)?;
        }
        self.written = 0;
        self.out.write_all(b"\n").map_err(SinkError::Write)?;
        self.out.flush().map_err(SinkError::Write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str) -> GradeResult {
        let pack = crate::load_pack("cleo-v1", &[]).unwrap();
        let session = crate::Session {
            id: id.to_owned(),
            entries: Vec::new(),
            skipped_lines: 0,
        };
        pack.grade_with(&session, None, &crate::GradeOptions::default())
            .unwrap()
    }

    /// Written as results come, the document is byte for byte what pretty-printing them all
    /// at the end gave: the one result alone, else the array.
    #[test]
    fn the_document_written_as_results_come_is_the_whole_pretty_printed_one() {
        let mut all: Vec<GradeResult> = (0..4).map(|i| result(&format!("s{i}"))).collect();
        // A line break and indentation inside a string stay as they are when a lone
        // result's element is taken one level out.
        all[0]
            .flags
            .push("first\n  second\r\n  {\"third\": [\n".to_owned());
        for n in 0..=all.len() {
            let mut sink = JsonDocument::new(Vec::new());
            for r in &all[..n] {
                sink.accept(r).unwrap();
            }
            sink.finish().unwrap();
            let mut expected = if n == 1 {
                serde_json::to_vec_pretty(&all[0]).unwrap()
            } else {
                serde_json::to_vec_pretty(&all[..n]).unwrap()
            };
            expected.push(b'\n');
            assert_eq!(
                String::from_utf8(sink.into_inner()).unwrap(),
                String::from_utf8(expected).unwrap(),
                "{n} results"
            );
        }
    }
}
