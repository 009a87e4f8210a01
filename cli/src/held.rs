//! Output held until the source has read cleanly, so that a bad line found late prints
//! nothing: in memory up to a budget, past it in an unnamed temporary file (removed by the
//! system when the run ends, however it ends). A run over millions of sessions then holds
//! its results on disk, not in memory: 5M result lines of cleo-v1 are 4.3 GB.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};

/// Bytes held in memory before the rest goes to a temporary file: the lines of about 77,000
/// cleo-v1 results, far more than the bench's 50,000 sessions, so that only runs over
/// hundreds of thousands of sessions touch the disk. `GRADE_HELD_OUTPUT_BUDGET` (bytes)
/// sets it for a machine with little memory or room on disk.
pub(crate) const BUDGET: usize = 64 << 20;

/// The budget for this run: [`BUDGET`], or `GRADE_HELD_OUTPUT_BUDGET` when it is set. A value
/// that is no number of bytes is refused: ignored, it would leave a user who set it to keep
/// memory low with the default in silence.
pub(crate) fn budget() -> Result<usize, crate::error::CliError> {
    crate::input::cap_from_env("GRADE_HELD_OUTPUT_BUDGET", BUDGET, "bytes")
}

/// Lines written in order and copied out once, at the end.
pub(crate) struct HeldOutput {
    /// The lines held in memory, as they were handed over (no copy, no growing buffer).
    lines: Vec<Box<[u8]>>,
    /// Their bytes.
    in_memory: usize,
    budget: usize,
    /// The lines past `lines`, once they are over the budget.
    spill: Option<BufWriter<File>>,
    /// Everything written so far, in memory and spilled.
    len: u64,
    /// The first write that failed: later writes are dropped, and [`finish`](Self::finish)
    /// reports it.
    error: Option<io::Error>,
}

/// Why held output could not be kept or given back.
#[derive(Debug)]
pub(crate) enum HeldError {
    /// The temporary file could not be created, written or read back.
    Spill(io::Error),
    /// The output the held bytes were copied to refused them.
    Write(io::Error),
}

impl HeldOutput {
    pub(crate) fn new(budget: usize) -> Self {
        HeldOutput {
            lines: Vec::new(),
            in_memory: 0,
            budget,
            spill: None,
            len: 0,
            error: None,
        }
    }

    /// How many bytes were written: the position the next write starts at.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Holds `head` before everything written so far: a format's head made from the rows
    /// under it (JUnit's counts). Positions ([`len`](Self::len)) taken before move by its
    /// length, so a run that marks places in its output puts nothing first.
    pub(crate) fn put_first(&mut self, head: Box<[u8]>) {
        if self.error.is_some() || head.is_empty() {
            return;
        }
        self.len += head.len() as u64;
        self.in_memory += head.len();
        self.lines.insert(0, head);
    }

    /// Holds `line` after those written before.
    pub(crate) fn write(&mut self, line: Box<[u8]>) {
        if self.error.is_some() {
            return;
        }
        self.len += line.len() as u64;
        if self.spill.is_none() && self.in_memory + line.len() <= self.budget {
            self.in_memory += line.len();
            self.lines.push(line);
            return;
        }
        let written = match &mut self.spill {
            Some(file) => file.write_all(&line),
            None => tempfile::tempfile().and_then(|file| {
                let mut file = BufWriter::with_capacity(1 << 16, file);
                file.write_all(&line)?;
                self.spill = Some(file);
                Ok(())
            }),
        };
        if let Err(err) = written {
            self.error = Some(err);
        }
    }

    /// Copies everything held to `out`, in the order written. At each position of `marks`
    /// (ascending, each where a line ends) it flushes `out` and calls `at_mark` with the
    /// mark's index, so that what belongs between two held lines (a message on stderr) comes
    /// out between them.
    pub(crate) fn finish(
        self,
        out: &mut dyn Write,
        marks: &[u64],
        at_mark: &mut dyn FnMut(usize),
    ) -> Result<(), HeldError> {
        if let Some(err) = self.error {
            return Err(HeldError::Spill(err));
        }
        let mut spilled: Option<File> = match self.spill {
            Some(file) => {
                let mut file = file
                    .into_inner()
                    .map_err(|e| HeldError::Spill(e.into_error()))?;
                file.rewind().map_err(HeldError::Spill)?;
                Some(file)
            }
            None => None,
        };
        let mut lines = self.lines.into_iter().peekable();
        let mut at = 0u64;
        let in_memory = self.in_memory as u64;
        // Writes out the held lines that end at or before `to`.
        let mut copy_to = |to: u64, out: &mut dyn Write| -> Result<(), HeldError> {
            while let Some(line) = lines.next_if(|l| at + l.len() as u64 <= to) {
                out.write_all(&line).map_err(HeldError::Write)?;
                at += line.len() as u64;
            }
            if at < to && at >= in_memory {
                if let Some(file) = &mut spilled {
                    copy_exact(&mut file.take(to - at), out)?;
                }
                at = to;
            }
            Ok(())
        };
        for (i, &mark) in marks.iter().enumerate() {
            copy_to(mark.min(self.len), out)?;
            out.flush().map_err(HeldError::Write)?;
            at_mark(i);
        }
        copy_to(self.len, out)?;
        out.flush().map_err(HeldError::Write)
    }
}

/// Copies all of `from` (a part of the spill file) to `out`, telling a failed read of the
/// file from a failed write of the output, and a file shorter than what was written to it
/// from a complete one.
fn copy_exact(from: &mut io::Take<&mut File>, out: &mut dyn Write) -> Result<(), HeldError> {
    let mut buffer = vec![0u8; 1 << 16];
    while from.limit() > 0 {
        let n = from.read(&mut buffer).map_err(HeldError::Spill)?;
        if n == 0 {
            return Err(HeldError::Spill(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the temporary file is shorter than what was written to it",
            )));
        }
        out.write_all(&buffer[..n]).map_err(HeldError::Write)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(budget: usize, parts: &[&str]) -> HeldOutput {
        let mut held = HeldOutput::new(budget);
        for part in parts {
            held.write(part.as_bytes().into());
        }
        held
    }

    #[test]
    fn what_is_held_comes_back_in_order_whether_it_stayed_in_memory_or_not() {
        let parts = [
            "first line\n",
            "second\n",
            "",
            "third, longer line\n",
            "4\n",
        ];
        for budget in [0, 1, 11, 18, 1 << 20] {
            let held = held(budget, &parts);
            assert_eq!(held.len(), parts.concat().len() as u64);
            let mut out = Vec::new();
            held.finish(&mut out, &[], &mut |_| {}).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                parts.concat(),
                "budget {budget}"
            );
        }
    }

    #[test]
    fn marks_come_between_the_bytes_written_before_and_after_them() {
        for budget in [0, 5, 1 << 20] {
            let mut held = HeldOutput::new(budget);
            let mut marks = Vec::new();
            for (i, part) in ["a\n", "bb\n", "ccc\n"].iter().enumerate() {
                held.write(part.as_bytes().into());
                if i != 1 {
                    marks.push(held.len());
                }
            }
            // Where each mark's callback ran: the output's length at the time.
            let out = std::cell::RefCell::new(Vec::new());
            let mut seen = Vec::new();
            let mut sink = Recorder(&out);
            held.finish(&mut sink, &marks, &mut |i| {
                seen.push((i, out.borrow().len()))
            })
            .unwrap();
            assert_eq!(seen, [(0, 2), (1, 9)], "budget {budget}");
            assert_eq!(*out.borrow(), b"a\nbb\nccc\n");
        }
    }

    struct Recorder<'a>(&'a std::cell::RefCell<Vec<u8>>);
    impl Write for Recorder<'_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_of_the_output_is_reported_not_swallowed() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::StorageFull, "no room"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        for budget in [0, 1 << 20] {
            let held = held(budget, &["line\n"]);
            let err = held.finish(&mut Full, &[], &mut |_| {}).unwrap_err();
            assert!(
                matches!(err, HeldError::Write(_)),
                "budget {budget}: {err:?}"
            );
        }
    }
}
