//! CLEO's grades file (`.cleo/metrics/GRADES.jsonl`): one grade per line, appended,
//! never half-written.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::mend::{self, Checked, Tail};
use super::signals;
use super::spool::{Spool, MEMORY};
use super::{Sink, SinkError};
use crate::GradeResult;

/// A grades file opened for appending. Open it before the results are printed, so a path
/// that cannot be written fails the run before any output; its lines are appended in one
/// go when the sink is finished, after the output went out, so no grade is recorded that
/// nobody saw. Until then they are held in memory, and past 64 MiB (the lines of about
/// 77,000 cleo-v1 results) in a temporary file. Results are recorded without their
/// `explain` traces.
#[derive(Debug)]
pub struct GradesFile {
    path: PathBuf,
    file: File,
    lines: Spool,
    /// The first line that could not be held; reported when the sink is finished.
    held: Result<(), std::io::Error>,
    recorded: usize,
    warnings: Vec<String>,
    /// Refuse symbolic links on the way to the file (see [`GradesFile::without_links`]).
    without_links: bool,
    /// How far the file was found to hold only grades when it was opened: the append checks
    /// only what came after.
    checked: Checked,
}

/// The file of a [`GradesFile`]: not opened yet, open, or appended to.
#[derive(Debug)]
enum File {
    Deferred,
    Open(std::fs::File),
    Done,
}

impl GradesFile {
    /// Opens (and creates, with its folder) the grades file at `path` for appending.
    pub fn open(path: &Path) -> Result<GradesFile, SinkError> {
        let mut grades = GradesFile::deferred(path);
        grades.open_now()?;
        Ok(grades)
    }

    /// A grades file at `path` that is not opened (or created) until [`open_now`]
    /// (or finishing the sink) opens it: for a run that takes its results before it knows
    /// they will be printed, and must leave no file behind when they are not.
    ///
    /// [`open_now`]: GradesFile::open_now
    pub fn deferred(path: &Path) -> GradesFile {
        GradesFile::deferred_with_memory(path, MEMORY)
    }

    /// [`GradesFile::deferred`], holding at most `memory` bytes of lines in memory.
    pub fn deferred_with_memory(path: &Path, memory: usize) -> GradesFile {
        GradesFile {
            path: path.to_owned(),
            file: File::Deferred,
            lines: Spool::new(memory),
            held: Ok(()),
            recorded: 0,
            warnings: Vec::new(),
            without_links: false,
            checked: Checked::default(),
        }
    }

    /// The default history file (CLEO's `.cleo/metrics/GRADES.jsonl`, recorded to without
    /// being asked): refused when it or a folder on its way is a symbolic link, so that a
    /// link planted in a project never sends grades (and the session ids in them) into a
    /// file elsewhere, a shell's rc file say. A grades file the user named is followed
    /// through links, as they asked.
    pub fn without_links(mut self) -> GradesFile {
        self.without_links = true;
        self
    }

    /// Opens (and creates, with its folder) the file of a deferred grades file; nothing for
    /// one already open. Only a regular file that holds nothing but grades (or `/dev/null`)
    /// is taken: a FIFO or a device, or a file of anything else, is refused untouched.
    pub fn open_now(&mut self) -> Result<(), SinkError> {
        if !matches!(self.file, File::Deferred) {
            return Ok(());
        }
        let path = &self.path;
        let fail = |source| SinkError::Grades {
            path: path.to_owned(),
            source,
        };
        let mut file = if self.without_links {
            open_without_links(path).map_err(fail)?
        } else {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(fail)?;
            }
            let mut options = OpenOptions::new();
            options.create(true).read(true).append(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
            }
            options.open(path).map_err(fail)?
        };
        let meta = file.metadata().map_err(fail)?;
        if !meta.is_file() {
            // `/dev/null` takes grades and keeps none, as asked; a FIFO took a few and lost
            // them (or hung), and a device is no place for a history.
            if path != Path::new("/dev/null") {
                let kind = crate::file::not_regular(&meta).unwrap_or("not a regular file");
                return Err(fail(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "it is {kind}, not a regular file; grades are appended to a regular file"
                    ),
                )));
            }
        } else {
            self.checked = checked_grades(&mut file, Checked::default())
                .map_err(fail)?
                .1;
        }
        self.file = File::Open(file);
        Ok(())
    }

    /// The grades file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many grades the finished sink recorded.
    pub fn recorded(&self) -> usize {
        self.recorded
    }

    /// Appends to `out` the line `result` is recorded as: its JSON line without `explain`.
    /// [`Sink::accept`] is this and [`GradesFile::accept_line`]; apart, the lines can be
    /// rendered by the threads that grade, and only taken in order by the one that records.
    pub fn line(result: &GradeResult, out: &mut Vec<u8>) -> Result<(), SinkError> {
        result
            .write_json_line_unexplained(out)
            .map_err(SinkError::Json)
    }

    /// Takes the next result as [`GradesFile::line`] rendered it.
    pub fn accept_line(&mut self, line: &[u8]) {
        if self.held.is_ok() {
            self.held = self.lines.write(line);
        }
        self.recorded += 1;
    }

    /// What appending found and mended (a torn last line cut off), to tell the user.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

impl Sink for GradesFile {
    fn accept(&mut self, result: &GradeResult) -> Result<(), SinkError> {
        let mut line = Vec::new();
        GradesFile::line(result, &mut line)?;
        self.accept_line(&line);
        Ok(())
    }

    /// Appends the lines of every result taken, in one write under an exclusive lock (a
    /// failed write is cut back off, leaving the file as it was). A second call writes
    /// nothing.
    fn finish(&mut self) -> Result<(), SinkError> {
        self.open_now()?;
        let File::Open(file) = std::mem::replace(&mut self.file, File::Done) else {
            return Ok(());
        };
        let lines = std::mem::replace(&mut self.lines, Spool::new(0));
        let held = std::mem::replace(&mut self.held, Ok(()));
        let fail = |source: std::io::Error| SinkError::Grades {
            path: self.path.clone(),
            source: std::io::Error::new(
                source.kind(),
                format!("cannot hold the lines to record: {source}; nothing was recorded"),
            ),
        };
        held.map_err(fail)?;
        append(&self.path, file, lines, self.checked, &mut self.warnings)
    }
}

/// Appends one line per result in one go under an exclusive lock, so another `grade` run
/// never sees or mends a partial line of this one, with the signals that end a process held
/// back until it is done. A write that fails part-way (a full disk) is cut back off, leaving
/// the file exactly as it was; a torn last line left by an earlier crash is cut off, not glued
/// onto, and only when every line before it is a grade.
fn append(
    path: &Path,
    mut file: std::fs::File,
    lines: Spool,
    checked: Checked,
    warnings: &mut Vec<String>,
) -> Result<(), SinkError> {
    let fail = |source| SinkError::Grades {
        path: path.to_owned(),
        source,
    };
    // `/dev/null` (the one file that is not regular and is taken) is written to as it is: it
    // has no end to cut back to, no last line to mend, and nothing to sync (fdatasync fails on
    // it with EINVAL).
    if !file.metadata().map_err(fail)?.is_file() {
        return lines
            .drain(&mut |bytes| Write::write_all(&mut file, bytes))
            .map_err(|e| fail(e.unwrap_or_else(|e| e)));
    }
    let _lock = file.try_clone().ok().and_then(Lock::exclusive);
    let _held = signals::hold();
    let start = file.metadata().map_err(fail)?.len();
    // What was appended since the file was opened (by another run) is checked as well.
    let (tail, _) = checked_grades(&mut file, checked).map_err(fail)?;
    let mut prefix: &[u8] = b"";
    match tail {
        Tail::Whole => {}
        Tail::NoLineEnd => prefix = b"\n",
        Tail::Torn(bytes) => {
            file.set_len(start - bytes).map_err(fail)?;
            warnings.push(format!(
                "`{}` ended in a torn line ({bytes} bytes of a write that never finished); it was cut off before appending",
                path.display()
            ));
        }
    }
    append_or_restore(&mut file, prefix, lines).map_err(|e| match e {
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

/// Checks that `file` holds only grades, from where an earlier check ended (`at`) when the
/// file still has a line end there, else from its start; says how it ends. A file of
/// anything else is refused, and left as it was.
fn checked_grades(file: &mut std::fs::File, at: Checked) -> std::io::Result<(Tail, Checked)> {
    use std::io::{Read, Seek, SeekFrom};
    // A database named as the grades file (`--grades .cleo/tasks.db`) is said to be one.
    if is_sqlite(file)? {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "it is an SQLite database, not a grades file; it was left as it was",
        ));
    }
    let len = file.metadata()?.len();
    let still_there = at.offset == 0 || {
        let mut end = [0u8];
        at.offset <= len
            && file.seek(SeekFrom::Start(at.offset - 1)).is_ok()
            && file.read_exact(&mut end).is_ok()
            && end == *b"\n"
    };
    let at = if still_there { at } else { Checked::default() };
    file.seek(SeekFrom::Start(at.offset))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, &*file);
    mend::check(&mut reader, at).map_err(|not| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it is not a grades file: line {} is no grade ({}); it was left as it was",
                not.line, not.why
            ),
        )
    })
}

/// Whether a file starts with SQLite's header.
fn is_sqlite(file: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    const HEADER: &[u8; 16] = b"SQLite format 3\0";
    let mut start = [0u8; 16];
    file.seek(SeekFrom::Start(0))?;
    let mut read = 0;
    while read < start.len() {
        match file.read(&mut start[read..])? {
            0 => return Ok(false),
            n => read += n,
        }
    }
    Ok(&start == HEADER)
}

/// Opens the file at `path` (relative to the working folder, or absolute) for appending,
/// creating it and its folders, when neither it nor any folder on the way is a symbolic link:
/// each folder is opened from the one before without following links, so a link swapped in
/// while this runs is refused too.
#[cfg(unix)]
fn open_without_links(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{mkdirat, openat, Mode, OFlags, CWD};
    use std::path::Component;
    let link = |at: &Path| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "`{}` is a symbolic link; the default grades file is not followed out of its folder (give `--grades FILE` to record elsewhere)",
                at.display()
            ),
        )
    };
    let errno = |e: rustix::io::Errno, at: &Path| {
        if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR {
            link(at)
        } else {
            std::io::Error::from(e)
        }
    };
    let dir_flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC;
    let start = if path.is_absolute() { "/" } else { "." };
    let mut dir = openat(CWD, start, dir_flags, Mode::empty())?;
    let mut so_far = PathBuf::new();
    let mut parts = path.components().peekable();
    while let Some(part) = parts.next() {
        so_far.push(part);
        let name = match part {
            Component::Normal(name) => name,
            Component::ParentDir => std::ffi::OsStr::new(".."),
            _ => continue,
        };
        if parts.peek().is_none() {
            let flags = OFlags::RDWR
                | OFlags::APPEND
                | OFlags::CREATE
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::CLOEXEC;
            let file = openat(&dir, name, flags, Mode::from_raw_mode(0o666))
                .map_err(|e| errno(e, &so_far))?;
            return Ok(std::fs::File::from(file));
        }
        match mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        dir = openat(&dir, name, dir_flags, Mode::empty()).map_err(|e| errno(e, &so_far))?;
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "it names no file",
    ))
}

/// Where links cannot be refused as the path is walked, each part is looked at first.
#[cfg(not(unix))]
fn open_without_links(path: &Path) -> std::io::Result<std::fs::File> {
    let mut so_far = PathBuf::new();
    for part in path.components() {
        so_far.push(part);
        if std::fs::symlink_metadata(&so_far).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("`{}` is a symbolic link; the default grades file is not followed out of its folder (give `--grades FILE` to record elsewhere)", so_far.display()),
            ));
        }
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
}

/// Why an append failed: with the file restored, or with the restore failing as well.
enum Restore {
    Restored(std::io::Error),
    Torn(std::io::Error, std::io::Error),
}

/// Appends `prefix` and the held lines to a regular file and syncs it; on failure, cuts the
/// file back to the length it had, so a full disk never leaves half a line.
fn append_or_restore<F: Appendable>(
    file: &mut F,
    prefix: &[u8],
    lines: Spool,
) -> Result<(), Restore> {
    let start = file.len().map_err(Restore::Restored)?;
    let written = match lines.joined(prefix) {
        // Held in memory: written in one write, which a reader sees whole or not at all.
        Ok(all) => file.write_all(&all),
        Err(lines) => file.write_all(prefix).and_then(|()| {
            // A failure to read the held lines back fails the append as a write would.
            lines
                .drain(&mut |bytes| file.write_all(bytes))
                .map_err(|e| e.unwrap_or_else(|e| e))
        }),
    }
    .and_then(|()| file.sync_data());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn results() -> Vec<GradeResult> {
        let pack = crate::load_pack("cleo-v1", &[]).unwrap();
        (0..5)
            .map(|i| {
                let session = crate::Session {
                    id: format!("s{i}"),
                    entries: Vec::new(),
                    skipped_lines: 0,
                };
                pack.grade_with(&session, None, &crate::GradeOptions::default())
                    .unwrap()
            })
            .collect()
    }

    /// A run that takes its results before it knows they will be printed leaves no file
    /// behind until it opens it.
    #[test]
    fn a_deferred_grades_file_is_not_created_until_it_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics/GRADES.jsonl");
        let mut grades = GradesFile::deferred(&path);
        for r in results() {
            grades.accept(&r).unwrap();
        }
        assert!(!path.exists());
        assert!(!path.parent().unwrap().exists());
        grades.open_now().unwrap();
        assert!(path.exists());
        grades.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 5);
    }

    /// A last line without its line end that is a whole grade, lone surrogate and all, gets
    /// its line end; it was taken for a torn write and cut off, losing the grade.
    #[test]
    fn a_whole_last_line_with_a_lone_surrogate_is_kept_not_cut_as_torn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("GRADES.jsonl");
        let last = r#"{"sessionId":"s","totalScore":1,"maxScore":2,"flags":["T\ud83d"]}"#;
        std::fs::write(&path, last).unwrap();
        let mut grades = GradesFile::deferred_with_memory(&path, MEMORY);
        for r in &results() {
            grades.accept(r).unwrap();
        }
        grades.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().next(), Some(last), "{text}");
        assert_eq!(text.lines().count(), 6);
        assert!(grades.warnings().is_empty(), "{:?}", grades.warnings());
    }

    /// Lines held past the memory budget (in a temporary file) are appended exactly as those
    /// held in memory, after a mended tail.
    #[test]
    fn lines_held_on_disk_are_appended_as_lines_held_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut appended = Vec::new();
        let results = results();
        for memory in [0, 700, MEMORY] {
            let path = dir.path().join(format!("g{memory}.jsonl"));
            std::fs::write(&path, "{\"torn").unwrap();
            let mut grades = GradesFile::deferred_with_memory(&path, memory);
            for r in &results {
                grades.accept(r).unwrap();
            }
            grades.finish().unwrap();
            assert_eq!(grades.recorded(), 5);
            assert_eq!(grades.warnings().len(), 1, "the torn tail was cut");
            appended.push(std::fs::read_to_string(&path).unwrap());
        }
        assert_eq!(appended[0].lines().count(), 5);
        assert!(appended.iter().all(|a| *a == appended[0]), "{appended:#?}");
    }
}
