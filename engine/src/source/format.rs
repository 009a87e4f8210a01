//! The contract of a session source format: its name, how its content is recognised, and
//! how it is read — whole, or (for large logs) streamed in batches.
//!
//! A format is one type implementing [`SourceFormat`], registered in a
//! [`Registry`](super::Registry). Detection, `--source-format`, its help text and the
//! choice to stream all come from the registry, so a new format is one file and one line.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::common::{Input, ReadOptions, SessionFilter, SourceError, SourceRead};
use super::stream::{Progress, Stream};

/// What detection shows a format, in this order: the first bytes, then each of the first
/// non-blank lines that is a JSON object (or array), then (when the first line is not JSON
/// on its own) the whole file as one JSON document.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Evidence<'a> {
    /// The first bytes of the input (16, or fewer when it is shorter).
    Head(&'a [u8]),
    /// A top-level JSON object: one line, or the whole input read as one document.
    Object(&'a Map<String, Value>),
    /// A top-level JSON array: one line, or the whole input read as one document (a JSON
    /// array of Langfuse traces).
    Array(&'a [Value]),
    /// The input has no non-blank line at all.
    Empty,
}

/// How sure a format is that evidence is its own. Detection takes the first format (in
/// registry order) that says [`Sniff::Certain`], else the first that says [`Sniff::Likely`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sniff {
    /// Not this format, as far as this evidence shows.
    No,
    /// Keys a record of this format has, which another format's record might share.
    Likely,
    /// A signature no other format has (a file header, a document's top-level shape).
    Certain,
}

/// A format of session source: a CLEO audit log, a Claude Code transcript, a plugin's log.
///
/// Only [`name`](SourceFormat::name), [`noun`](SourceFormat::noun),
/// [`about`](SourceFormat::about) and [`read`](SourceFormat::read) are required; a format
/// that cannot be recognised by content is still readable when asked for by name.
pub trait SourceFormat: Send + Sync {
    /// The name `--source-format` takes, such as `cleo-jsonl`.
    fn name(&self) -> &str;

    /// The format as a noun phrase with its article, for messages: `a CLEO audit log`.
    fn noun(&self) -> &str;

    /// One line of help for `--source-format`.
    fn about(&self) -> &str;

    /// Whether `evidence` looks like this format.
    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        let _ = evidence;
        Sniff::No
    }

    /// A file signature this format checks in [`Evidence::Head`], named for messages
    /// (`SQLite header`), if it has one.
    fn head_signature(&self) -> Option<&str> {
        None
    }

    /// The top-level keys that make a JSON document this format, named for messages
    /// (`` `loglines` (Claude Code) ``), if it is read as one document.
    fn document_keys(&self) -> Option<&str> {
        None
    }

    /// The plugin that provides this format, for messages; `None` for the engine's own.
    fn plugin(&self) -> Option<&str> {
        None
    }

    /// How many first bytes of a file [`claims`](SourceFormat::claims) looks at; 0 (the
    /// default) when the format does not claim files by their first bytes.
    fn claim_bytes(&self) -> usize {
        0
    }

    /// Whether the first bytes of a file are this format's beyond doubt. Formats that claim
    /// files (a plugin's) are asked, in registry order, before detection looks at content.
    fn claims(&self, head: &[u8]) -> bool {
        let _ = head;
        false
    }

    /// Reads the sessions of `input` that `filter` wants, in order of first appearance.
    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError>;

    /// The extension of this format's files in a folder source (`jsonl`), if the format
    /// reads folders: every such file of the folder (and of its subfolders) is read as one
    /// source by [`read_files`](SourceFormat::read_files).
    fn folder_extension(&self) -> Option<&str> {
        None
    }

    /// How this format's file names end, without the dot (`jsonl`, `jsonl.zst`): a folder
    /// or glob of several sources reads the files so named, each in the format its content
    /// shows. Empty (the default) when a folder never holds files of this format.
    fn file_extensions(&self) -> &[&str] {
        &[]
    }

    /// Reads several files of this format as one source (a folder's files, sorted).
    fn read_files(
        &self,
        files: &[PathBuf],
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let mut all = SourceRead::default();
        for file in files {
            let mut read = self.read(&Input::File(file), filter, options)?;
            all.sessions.append(&mut read.sessions);
            all.warnings.append(&mut read.warnings);
            all.skipped_lines += read.skipped_lines;
            all.skipped_unattributed += read.skipped_unattributed;
        }
        Ok(all)
    }

    /// Whether a whole source of this format is worth streaming (grading sessions as they
    /// complete, in bounded memory) rather than reading whole.
    fn streams(&self) -> bool {
        false
    }

    /// Opens a streamed read of a file (the first pass is done by the time this returns), or
    /// `None` when this read is better done whole. Only formats built into the engine stream.
    fn open_stream<'p>(
        &self,
        path: &Path,
        filter: &SessionFilter,
        options: &ReadOptions,
        progress: Option<Progress<'p>>,
    ) -> Result<Option<Stream<'p>>, SourceError> {
        let _ = (path, filter, options, progress);
        Ok(None)
    }
}

impl std::fmt::Debug for dyn SourceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SourceFormat({})", self.name())
    }
}
