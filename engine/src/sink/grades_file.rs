//! CLEO's grades file (`.cleo/metrics/GRADES.jsonl`): one grade per line, appended,
//! never half-written.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Sink, SinkError};
use crate::GradeResult;

/// A grades file opened for appending. Open it before the results are printed, so a path
/// that cannot be written fails the run before any output; its lines are appended in one
/// write when the sink is finished, after the output went out, so no grade is recorded that
/// nobody saw. Results are recorded without their `explain` traces.
#[derive(Debug)]
pub struct GradesFile {
    path: PathBuf,
    file: Option<std::fs::File>,
    lines: Vec<u8>,
    recorded: usize,
    warnings: Vec<String>,
}

impl GradesFile {
    /// Opens (and creates, with its folder) the grades file at `path` for appending.
    pub fn open(path: &Path) -> Result<GradesFile, SinkError> {
        let fail = |source| SinkError::Grades {
            path: path.to_owned(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(fail)?;
        Ok(GradesFile {
            path: path.to_owned(),
            file: Some(file),
            lines: Vec::new(),
            recorded: 0,
            warnings: Vec::new(),
        })
    }

    /// The grades file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many grades the finished sink recorded.
    pub fn recorded(&self) -> usize {
        self.recorded
    }

    /// What appending found and mended (a torn last line cut off), to tell the user.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

impl Sink for GradesFile {
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError> {
        let mut record = result.clone();
        record.explain = None;
        serde_json::to_writer(&mut self.lines, &record).map_err(SinkError::Json)?;
        self.lines.push(b'\n');
        self.recorded += 1;
        Ok(())
    }

    /// Appends the lines of every result taken; see [`append`]. A second call writes nothing.
    fn finish(&mut self) -> Result<(), SinkError> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let lines = std::mem::take(&mut self.lines);
        append(&self.path, file, &lines, &mut self.warnings)
    }
}

/// Appends one line per result in a single write, so a reader never sees a partial line
/// from this run. A write that fails part-way (a full disk) is cut back off, leaving the
/// file exactly as it was; a torn last line left by an earlier crash is not glued onto.
fn append(
    path: &Path,
    mut file: std::fs::File,
    lines: &[u8],
    warnings: &mut Vec<String>,
) -> Result<(), SinkError> {
    let fail = |source| SinkError::Grades {
        path: path.to_owned(),
        source,
    };
    // `/dev/null`, a pipe or a terminal is written to as it is: it has no end to cut back
    // to, no last line to mend, and nothing to sync (fdatasync fails on them with EINVAL).
    if !file.metadata().map_err(fail)?.is_file() {
        return Write::write_all(&mut file, lines).map_err(fail);
    }
    let _lock = file.try_clone().ok().and_then(Lock::exclusive);
    let start = file.metadata().map_err(fail)?.len();
    let mut write = Vec::with_capacity(lines.len() + 1);
    match torn_tail(&mut file, start).map_err(fail)? {
        Tail::Whole => {}
        Tail::NoLineEnd => write.push(b'\n'),
        Tail::Torn(bytes) => {
            file.set_len(start - bytes).map_err(fail)?;
            warnings.push(format!(
                "`{}` ended in a torn line ({bytes} bytes of a write that never finished); it was cut off before appending",
                path.display()
            ));
        }
    }
    write.extend_from_slice(lines);
    append_or_restore(&mut file, &write).map_err(|e| match e {
        Restore::Restored(source) => SinkError::Grades {
            path: path.to_owned(),
            source: std::io::Error::new(
                source.kind(),
                format!("{source}; the file was left as it was"),
            ),
        },
        Restore::Torn(source, cut) => SinkError::Grades {
            path: path.to_owned(),
            source: std::io::Error::new(
                source.kind(),
                format!("{source}, and cutting the partial line back off failed too ({cut})"),
            ),
        },
    })
}

/// How a file that is about to be appended to ends.
#[derive(Debug, PartialEq)]
enum Tail {
    /// Empty, or ending in a line end.
    Whole,
    /// A last line that is JSON but lacks its line end (an editor dropped it).
    NoLineEnd,
    /// This many bytes of a line that is not JSON and never got its line end.
    Torn(u64),
}

/// Reads the last line of a file of `len` bytes, when it has no line end.
fn torn_tail(file: &mut std::fs::File, len: u64) -> std::io::Result<Tail> {
    use std::io::{Read, Seek, SeekFrom};
    if len == 0 {
        return Ok(Tail::Whole);
    }
    // A grade line is a few kilobytes; a tail longer than this is read in steps back.
    let mut tail = Vec::new();
    let mut from = len;
    loop {
        let step = from.min(64 * 1024);
        from -= step;
        let mut chunk = vec![0; step as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&tail);
        tail = chunk;
        if tail.last() == Some(&b'\n') {
            return Ok(Tail::Whole);
        }
        if let Some(at) = memchr_last(&tail) {
            tail.drain(..=at);
            break;
        }
        if from == 0 {
            break;
        }
    }
    if serde_json::from_slice::<Value>(&tail).is_ok() {
        Ok(Tail::NoLineEnd)
    } else {
        Ok(Tail::Torn(tail.len() as u64))
    }
}

fn memchr_last(bytes: &[u8]) -> Option<usize> {
    bytes.iter().rposition(|&b| b == b'\n')
}

/// Why an append failed: with the file restored, or with the restore failing as well.
enum Restore {
    Restored(std::io::Error),
    Torn(std::io::Error, std::io::Error),
}

/// Appends `bytes` to a regular file and syncs it; on failure, cuts the file back to the
/// length it had, so a full disk never leaves half a line.
fn append_or_restore<F: Appendable>(file: &mut F, bytes: &[u8]) -> Result<(), Restore> {
    let start = file.len().map_err(Restore::Restored)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_data());
    match written {
        Ok(()) => Ok(()),
        Err(e) => match file.set_len(start).and_then(|()| file.sync_data()) {
            Ok(()) => Err(Restore::Restored(e)),
            Err(cut) => Err(Restore::Torn(e, cut)),
        },
    }
}

/// What [`append_or_restore`] needs of a file (a trait so a test can fail a write half-way).
trait Appendable {
    fn len(&self) -> std::io::Result<u64>;
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    fn sync_data(&self) -> std::io::Result<()>;
    fn set_len(&self, len: u64) -> std::io::Result<()>;
}

impl Appendable for std::fs::File {
    fn len(&self) -> std::io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        Write::write_all(self, bytes)
    }
    fn sync_data(&self) -> std::io::Result<()> {
        std::fs::File::sync_data(self)
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        std::fs::File::set_len(self, len)
    }
}

/// An advisory lock held while appending, so two `grade` runs never cut or mend each
/// other's lines. Where locking is not supported the append goes ahead unlocked.
/// (It holds a duplicate of the file's handle: the lock belongs to the open file they share.)
struct Lock(std::fs::File);

impl Lock {
    fn exclusive(file: std::fs::File) -> Option<Lock> {
        #[cfg(unix)]
        {
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).ok()?;
        }
        Some(Lock(file))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            let _ = rustix::fs::flock(&self.0, rustix::fs::FlockOperation::Unlock);
        }
    }
}
