//! Several sources in one run: `--source` given more than once, a glob pattern, or a folder
//! whose files are of any format (rotated CLEO logs, a Codex sessions tree, a folder of
//! inspect_ai logs beside Claude Code transcripts).
//!
//! Each file is read in the format its content shows; the files of a format that gathers
//! sessions across files (Claude Code keeps a session's subagents in files of their own) are
//! read together, every other file on its own. Each session keeps the file it came from, and
//! one session id in two of the files read apart is an error naming both.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::common::{Input, Place, ReadOptions, SessionFilter, SourceError, SourceRead};
use super::format::SourceFormat;
use super::registry::{collect_files, file_patterns, Registry};
use super::SourceWarning;

/// How deep a folder source is searched for files (Claude Code keeps subagents in
/// `<session>/subagents/agent-*.jsonl`; Codex its rollouts in `YYYY/MM/DD/`).
const FOLDER_DEPTH: usize = 3;

/// The sessions of several sources, each with the file it came from.
#[derive(Debug, Default)]
pub struct SourcesRead {
    /// The sessions, warnings and skipped lines of every file, in the order the files sort.
    pub read: SourceRead,
    /// The file each session of [`read`](Self::read) came from, by index.
    pub files: Vec<PathBuf>,
    /// How many files were read.
    pub files_read: usize,
}

/// A file to read, and whether it was named on its own (not found in a folder or by a glob):
/// a file named on its own that no format reads is an error, one found is skipped with a
/// warning.
struct Found {
    path: PathBuf,
    named: bool,
}

/// Whether `text` asks for a glob match (a `*`, `?` or `[` in it).
pub fn is_glob(text: &Path) -> bool {
    text.to_string_lossy().contains(['*', '?', '['])
}

impl Registry {
    /// The endings of file names a folder or glob source reads: those of `asked`, or of every
    /// format of the registry, sorted and each once.
    fn extensions<'a>(&'a self, asked: Option<&'a dyn SourceFormat>) -> Vec<&'a str> {
        let mut all: Vec<&str> = match asked {
            Some(format) => format.file_extensions().to_vec(),
            None => self
                .formats()
                .flat_map(|f| f.file_extensions().iter().copied())
                .collect(),
        };
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The files `given` names: each file, the files of each folder (down to
    /// [`FOLDER_DEPTH`] levels) whose names end as a format's do, and each glob's matches.
    fn expand(
        &self,
        given: &[PathBuf],
        asked: Option<&dyn SourceFormat>,
        warnings: &mut Vec<SourceWarning>,
    ) -> Result<Vec<Found>, SourceError> {
        let extensions = self.extensions(asked);
        let mut found = Vec::new();
        for source in given {
            if source.is_dir() {
                found.extend(self.folder_files(source, &extensions, warnings)?);
            } else if !source.exists() && is_glob(source) {
                let matches = glob_files(source)?;
                let before = found.len();
                for path in matches {
                    if path.is_dir() {
                        found.extend(self.folder_files(&path, &extensions, warnings)?);
                    } else if path.is_file() {
                        found.push(Found { path, named: false });
                    }
                }
                if found.len() == before {
                    return Err(SourceError::NoSourceFiles {
                        path: source.clone(),
                        looked_for: "a file or folder the pattern matches".to_owned(),
                    });
                }
            } else {
                found.push(Found {
                    path: source.clone(),
                    named: true,
                });
            }
        }
        // A file named twice (on its own and in its folder, or by two globs) is read once.
        let mut seen = std::collections::HashSet::new();
        found.retain(|f| seen.insert(std::fs::canonicalize(&f.path).unwrap_or(f.path.clone())));
        Ok(found)
    }

    fn folder_files(
        &self,
        dir: &Path,
        extensions: &[&str],
        warnings: &mut Vec<SourceWarning>,
    ) -> Result<Vec<Found>, SourceError> {
        let mut files = Vec::new();
        let mut skipped = Vec::new();
        let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
        collect_files(
            &root,
            dir,
            extensions,
            FOLDER_DEPTH,
            &mut files,
            &mut skipped,
        )?;
        files.sort();
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        warnings.append(&mut skipped);
        if files.is_empty() {
            return Err(SourceError::NoSourceFiles {
                path: dir.to_owned(),
                looked_for: file_patterns(extensions),
            });
        }
        Ok(files
            .into_iter()
            .map(|path| Found { path, named: false })
            .collect())
    }

    /// Reads several sources as one run: files, folders of files of any format, glob
    /// patterns (`logs/*.jsonl`, `runs/**/*.eval`), each file in `asked` or in the format its
    /// content shows. A file found in a folder or by a glob that no format reads is skipped
    /// with a warning; one named on its own is an error, as a single source's is.
    pub fn read_sources(
        &self,
        given: &[PathBuf],
        asked: Option<&dyn SourceFormat>,
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourcesRead, SourceError> {
        let mut warnings = Vec::new();
        let found = self.expand(given, asked, &mut warnings)?;
        // Each file's format, found on every core (a folder of 10,000 rollouts is 10,000
        // detections); what comes of them is taken in the order found, as one by one.
        let detected: Vec<Result<Arc<dyn SourceFormat>, SourceError>> = found
            .par_iter()
            .map(|Found { path, .. }| match asked {
                Some(format) => {
                    self.get(format.name())
                        .cloned()
                        .ok_or_else(|| SourceError::Format {
                            path: path.clone(),
                            message: format!("format `{}` is not in this run", format.name()),
                        })
                }
                None => self.detect(&Input::File(path)),
            })
            .collect();
        // Each file with its format, in the order found; the files of a format that reads
        // several files as one source are gathered where its first file was.
        let mut units: Vec<(Arc<dyn SourceFormat>, Vec<PathBuf>)> = Vec::new();
        for (Found { path, named }, format) in found.into_iter().zip(detected) {
            let format = match format {
                Ok(format) => format,
                Err(SourceError::UnknownFormat { reason, .. }) if asked.is_none() && !named => {
                    warnings.push(SourceWarning {
                        path,
                        place: Place::File,
                        message: format!(
                            "skipped: not a source grade can read (tried {}): {reason}",
                            self.tried()
                        ),
                    });
                    continue;
                }
                Err(other) => return Err(other),
            };
            if let Some(refused) = self.refusal(format.as_ref(), &path) {
                return Err(refused);
            }
            let gathers = format.folder_extension().is_some();
            match units
                .iter_mut()
                .find(|(f, _)| gathers && f.name() == format.name())
            {
                Some((_, files)) => files.push(path),
                None => units.push((format, vec![path])),
            }
        }
        // Every unit read on every core; the reads are then taken in order, so that the first
        // error (or the first id in two files) is the one a read file by file would meet.
        let reads: Vec<Result<SourceRead, SourceError>> = units
            .par_iter()
            .map(|(format, files)| {
                if files.len() == 1 {
                    format.read(&Input::File(&files[0]), filter, options)
                } else {
                    format.read_files(files, filter, options)
                }
            })
            .collect();
        let mut out = SourcesRead::default();
        out.read.warnings = warnings;
        // Which file each session id was read from, to refuse one id in two files.
        let mut first_seen: HashMap<String, PathBuf> = HashMap::new();
        for ((_, files), read) in units.into_iter().zip(reads) {
            out.files_read += files.len();
            let mut read = read?;
            for session in &read.sessions {
                let file = session_file(session, &files);
                if let Some(first) = first_seen.get(&session.id) {
                    return Err(SourceError::DuplicateSession {
                        id: session.id.clone(),
                        first: first.clone(),
                        path: file,
                    });
                }
                first_seen.insert(session.id.clone(), file.clone());
                out.files.push(file);
            }
            out.read.sessions.append(&mut read.sessions);
            out.read.warnings.append(&mut read.warnings);
            out.read.skipped_lines += read.skipped_lines;
            out.read.skipped_unattributed += read.skipped_unattributed;
        }
        Ok(out)
    }
}

/// The file a session read from `files` came from: the one file, or (for a format that
/// gathers a session across files) the file its first entry names, else the first file.
fn session_file(session: &crate::entry::Session, files: &[PathBuf]) -> PathBuf {
    if files.len() > 1 {
        let named = session
            .entries
            .first()
            .and_then(|e| e.metadata.extra.get("file"))
            .and_then(|f| f.as_str());
        if let Some(file) = named.and_then(|n| files.iter().find(|f| f.as_os_str() == n)) {
            return file.clone();
        }
        if let Some(file) = files.iter().find(|f| {
            f.file_stem()
                .is_some_and(|stem| stem.to_string_lossy() == session.id)
        }) {
            return file.clone();
        }
    }
    files.first().cloned().unwrap_or_default()
}

/// The paths a glob pattern matches, sorted; a pattern that is not one is an error naming it.
fn glob_files(pattern: &Path) -> Result<Vec<PathBuf>, SourceError> {
    let text = pattern.to_string_lossy();
    let paths = glob::glob(&text).map_err(|e| SourceError::Format {
        path: pattern.to_owned(),
        message: format!("is not a glob pattern grade can read: {e}"),
    })?;
    let mut out = Vec::new();
    for path in paths {
        match path {
            Ok(path) => out.push(path),
            // A folder the pattern passes through that cannot be listed: said, not skipped
            // in silence.
            Err(e) => {
                let path = e.path().to_owned();
                return Err(SourceError::Io {
                    path,
                    source: e.into(),
                });
            }
        }
    }
    out.sort();
    Ok(out)
}
