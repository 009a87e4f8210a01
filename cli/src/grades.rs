//! GRADES.jsonl: one grade per line, appended, never half-written.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use grade_engine::source::SourceFormat;
use grade_engine::GradeResult;
use serde_json::Value;

use crate::args::Cli;
use crate::error::CliError;

/// Where a grading run records its results: `--grades FILE` when given; CLEO's history file
/// (`.cleo/metrics/GRADES.jsonl`) for a CLEO source, as CLEO's grader does; nowhere for
/// other sources (a Claude Code transcript's grades do not belong in CLEO's history) or
/// with `--no-record`.
pub fn destination(cli: &Cli, cleo_source: bool) -> Option<PathBuf> {
    if cli.no_record {
        return None;
    }
    match &cli.grades {
        Some(path) => Some(path.clone()),
        None if cleo_source => Some(PathBuf::from(crate::DEFAULT_GRADES)),
        None => None,
    }
}

/// Whether a source format is CLEO's (its `tasks.db` or audit log), whose grades belong in
/// CLEO's history file.
pub fn is_cleo(format: &dyn SourceFormat) -> bool {
    format.name().starts_with("cleo-")
}

/// A grades file opened for appending. It is opened before the results are printed, so a
/// path that cannot be written fails the run before any output, and written only after
/// the output went out, so no grade is recorded that nobody saw.
pub struct Recorder {
    path: std::path::PathBuf,
    file: std::fs::File,
}

impl Recorder {
    pub fn open(path: &Path) -> Result<Recorder, CliError> {
        let fail = |source| CliError::GradesWrite {
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
        Ok(Recorder {
            path: path.to_owned(),
            file,
        })
    }

    /// Appends one line per result; see [`append`].
    pub fn append(self, results: &[GradeResult]) -> Result<(), CliError> {
        append(&self.path, self.file, results)
    }
}

/// Appends one line per result in a single write, so a reader never sees a partial line
/// from this run. A write that fails part-way (a full disk) is cut back off, leaving the
/// file exactly as it was; a torn last line left by an earlier crash is not glued onto.
fn append(path: &Path, mut file: std::fs::File, results: &[GradeResult]) -> Result<(), CliError> {
    let fail = |source| CliError::GradesWrite {
        path: path.to_owned(),
        source,
    };
    let mut lines = Vec::new();
    for r in results {
        let mut record = r.clone();
        record.explain = None;
        serde_json::to_writer(&mut lines, &record).map_err(CliError::Json)?;
        lines.push(b'\n');
    }
    // `/dev/null`, a pipe or a terminal is written to as it is: it has no end to cut back
    // to, no last line to mend, and nothing to sync (fdatasync fails on them with EINVAL).
    if !file.metadata().map_err(fail)?.is_file() {
        return Write::write_all(&mut file, &lines).map_err(fail);
    }
    let _lock = file.try_clone().ok().and_then(Lock::exclusive);
    let start = file.metadata().map_err(fail)?.len();
    let mut write = Vec::with_capacity(lines.len() + 1);
    match torn_tail(&mut file, start).map_err(fail)? {
        Tail::Whole => {}
        Tail::NoLineEnd => write.push(b'\n'),
        Tail::Torn(bytes) => {
            file.set_len(start - bytes).map_err(fail)?;
            eprintln!(
                "warning: `{}` ended in a torn line ({bytes} bytes of a write that never finished); it was cut off before appending",
                path.display()
            );
        }
    }
    write.extend_from_slice(&lines);
    append_or_restore(&mut file, &write).map_err(|e| match e {
        Restore::Restored(source) => CliError::GradesWrite {
            path: path.to_owned(),
            source: std::io::Error::new(
                source.kind(),
                format!("{source}; the file was left as it was"),
            ),
        },
        Restore::Torn(source, cut) => CliError::GradesWrite {
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

/// The JSON values of a JSON-lines file with their line numbers, or `None` when the file
/// does not exist; blank lines are skipped, and a line that is not JSON is an error naming it.
pub fn read_json_lines(path: &Path) -> Result<Option<Vec<(usize, Value)>>, CliError> {
    match read_text(path)? {
        Some(text) => parse_json_lines(path, &text).map(Some),
        None => Ok(None),
    }
}

/// A JSON-lines file's text, or `None` when it does not exist.
fn read_text(path: &Path) -> Result<Option<String>, CliError> {
    crate::input::read_text(path, crate::input::MAX_DOCUMENT, "grades file").map_err(|source| {
        CliError::GradesRead {
            path: path.to_owned(),
            source,
        }
    })
}

fn parse_json_lines(path: &Path, text: &str) -> Result<Vec<(usize, Value)>, CliError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| CliError::GradesLine {
            path: path.to_owned(),
            line: n + 1,
            message: e.to_string(),
        })?;
        out.push((n + 1, value));
    }
    Ok(out)
}

/// Reads recorded grades; a missing file has none. A last line without a line end that is
/// not JSON is a write that never finished: it is skipped with a warning, and the whole
/// lines before it are listed.
pub fn read(path: &Path) -> Result<Vec<Value>, CliError> {
    let lines = match read_text(path)? {
        None => Vec::new(),
        Some(mut text) => {
            if !text.is_empty() && !text.ends_with('\n') {
                let start = text.rfind('\n').map_or(0, |at| at + 1);
                let last = &text[start..];
                if !last.trim().is_empty() && serde_json::from_str::<Value>(last).is_err() {
                    eprintln!(
                        "warning: {}:{}: the last line is torn ({} bytes without a line end, a write that never finished); it is skipped",
                        path.display(),
                        text.lines().count(),
                        last.len()
                    );
                    text.truncate(start);
                }
            }
            parse_json_lines(path, &text)?
        }
    };
    let mut out = Vec::with_capacity(lines.len());
    for (line, value) in lines {
        if !value.is_object() || value.get("sessionId").is_none() {
            return Err(CliError::GradesLine {
                path: path.to_owned(),
                line,
                message: "an object with a `sessionId` was expected".to_owned(),
            });
        }
        out.push(value);
    }
    Ok(out)
}
