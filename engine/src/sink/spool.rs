//! Bytes written in order and read back once: in memory up to a budget, past it in an
//! unnamed temporary file (removed by the system when the process ends, however it ends).
//! What a sink that must hold its output until the end (the grades file, appended only
//! after the results went out) holds, so that a run over millions of sessions holds them on
//! disk rather than in memory.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};

/// Bytes a spool keeps in memory before the rest goes to a temporary file: the grades-file
/// lines of about 77,000 cleo-v1 results.
pub(crate) const MEMORY: usize = 64 << 20;

/// The blocks memory is held in. One buffer grown by doubling moved everything held at
/// each doubling, on the thread that takes results in order (the grades lines of a million
/// entries were 46 MB: 5% of the run's wall time in `memmove`, and each copy's pages faulted
/// in anew); blocks are filled and never moved.
const BLOCK: usize = 1 << 20;

#[derive(Debug)]
pub(crate) struct Spool {
    /// Full blocks, then the one being filled.
    memory: Vec<Vec<u8>>,
    /// Bytes held in `memory`.
    in_memory: usize,
    budget: usize,
    file: Option<BufWriter<File>>,
    len: u64,
}

impl Spool {
    pub(crate) fn new(budget: usize) -> Self {
        Spool {
            memory: Vec::new(),
            in_memory: 0,
            budget,
            file: None,
            len: 0,
        }
    }

    /// Adds `bytes` after those written before.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.file.is_none() && self.in_memory + bytes.len() <= self.budget {
            let mut rest = bytes;
            while !rest.is_empty() {
                match self.memory.last_mut() {
                    Some(block) if block.len() < block.capacity() => {
                        let n = rest.len().min(block.capacity() - block.len());
                        block.extend_from_slice(&rest[..n]);
                        rest = &rest[n..];
                    }
                    // Never more than the budget: a small one is not rounded up to a block.
                    _ => self
                        .memory
                        .push(Vec::with_capacity(BLOCK.min(self.budget - self.in_memory))),
                }
            }
            self.in_memory += bytes.len();
        } else {
            let file = match &mut self.file {
                Some(file) => file,
                None => self
                    .file
                    .insert(BufWriter::with_capacity(1 << 16, tempfile::tempfile()?)),
            };
            file.write_all(bytes)?;
        }
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Everything written, in one buffer after `prefix`, when it is all in memory (so that it
    /// can be written in one write); the spool itself when part of it is on disk.
    pub(crate) fn joined(self, prefix: &[u8]) -> Result<Vec<u8>, Spool> {
        if self.file.is_some() {
            return Err(self);
        }
        let mut all = Vec::with_capacity(prefix.len() + self.in_memory);
        all.extend_from_slice(prefix);
        for block in &self.memory {
            all.extend_from_slice(block);
        }
        Ok(all)
    }

    /// Hands everything written, in order and in pieces, to `out`. A failure to read the
    /// spilled part back is `Err(Err(_))`; `out`'s own failure is `Err(Ok(_))`.
    pub(crate) fn drain(
        self,
        out: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<(), Result<io::Error, io::Error>> {
        for block in &self.memory {
            out(block).map_err(Ok)?;
        }
        let Some(file) = self.file else {
            return Ok(());
        };
        let mut file = file.into_inner().map_err(|e| Err(e.into_error()))?;
        file.rewind().map_err(Err)?;
        let mut left = self.len - self.in_memory as u64;
        let mut buffer = vec![0u8; 1 << 16];
        while left > 0 {
            let n = file.read(&mut buffer).map_err(Err)?;
            if n == 0 {
                return Err(Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the temporary file is shorter than what was written to it",
                )));
            }
            let n = n.min(usize::try_from(left).unwrap_or(usize::MAX));
            out(&buffer[..n]).map_err(Ok)?;
            left -= n as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a spool of `budget` bytes in memory gives back of `parts`, and the bytes it held
    /// in memory.
    fn round_trip<P: AsRef<[u8]>>(budget: usize, parts: &[P]) -> (Vec<u8>, usize) {
        let mut spool = Spool::new(budget);
        for part in parts {
            spool.write(part.as_ref()).unwrap();
        }
        let in_memory = spool.in_memory;
        let mut out = Vec::new();
        spool
            .drain(&mut |bytes| {
                out.extend_from_slice(bytes);
                Ok(())
            })
            .unwrap();
        (out, in_memory)
    }

    #[test]
    fn what_is_spooled_comes_back_in_order_whether_it_stayed_in_memory_or_not() {
        let parts: [&[u8]; 5] = [b"first line\n", b"second\n", b"", b"third line\n", b"4\n"];
        for budget in [0, 1, 11, 18, 1 << 20] {
            assert_eq!(
                round_trip(budget, &parts).0,
                parts.concat(),
                "budget {budget}"
            );
        }
    }

    #[test]
    fn writes_across_blocks_come_back_whole_and_in_order() {
        let parts: Vec<Vec<u8>> = (0..7u8)
            .map(|i| vec![b'a' + i; BLOCK / 3 + usize::from(i) * 1000])
            .chain([vec![b'z'; 2 * BLOCK + 5]])
            .collect();
        let total: usize = parts.iter().map(Vec::len).sum();
        for budget in [total, total - 1, BLOCK + 1] {
            let (out, in_memory) = round_trip(budget, &parts);
            assert!(in_memory <= budget);
            assert_eq!(out, parts.concat(), "budget {budget}");
        }
    }

    #[test]
    fn a_failure_of_the_destination_is_told_from_one_of_the_spool() {
        for budget in [0, 1 << 20] {
            let mut spool = Spool::new(budget);
            spool.write(b"line\n").unwrap();
            let err = spool
                .drain(&mut |_| Err(io::Error::new(io::ErrorKind::StorageFull, "no room")))
                .unwrap_err();
            assert!(
                matches!(err, Ok(ref e) if e.kind() == io::ErrorKind::StorageFull),
                "budget {budget}: {err:?}"
            );
        }
    }
}
