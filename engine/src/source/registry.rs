//! The source formats the engine knows, in the order detection asks them, and what is
//! done with them: detection by content, reading a file, a folder or bytes, and choosing
//! to stream.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde_json::Value;

use super::atif::Atif;
use super::claude_code::ClaudeCode;
use super::cleo_db::CleoDb;
use super::cleo_jsonl::CleoJsonl;
use super::codex::Codex;
use super::common::{
    describe_json_error, json_kind, not_an_object, Input, NotGraded, Place, ReadOptions,
    SessionFilter, SourceError, SourceRead, SourceWarning,
};
use super::format::{Evidence, Sniff, SourceFormat};
use super::gemini::GeminiCli;
use super::inspect_ai::InspectAi;
use super::langfuse_trace::LangfuseTrace;
use super::openhands::OpenHands;
use super::otel::Otel;
use super::stream::{Delivered, Mapped, Progress, StreamError};
use super::swe_agent::SweAgent;
use crate::entry::Session;

/// How many non-blank lines detection looks at before giving up.
const DETECT_LINES: usize = 32;
/// How many bytes [`Evidence::Head`] shows.
const HEAD_BYTES: usize = 16;
/// The most detection reads of a line, or of a document read whole: as long as the longest
/// line a source reads. A 1.2 GB one-line file was read whole twice (2.4 GB) before the
/// reader's line cap refused it.
const DETECT_BYTES: u64 = 64 << 20;
/// How deep a folder source is searched for files (Claude Code keeps subagents in
/// `<session>/subagents/agent-*.jsonl`).
const FOLDER_DEPTH: usize = 3;

/// A second format under a name already taken.
#[derive(Debug, thiserror::Error)]
#[error("a source format named `{0}` is registered already")]
pub struct DuplicateFormat(pub String);

/// The source formats a run can read. [`Registry::builtin`] holds the engine's own; a
/// clone of it can take more at run time ([`Registry::register`]), such as a plugin's.
#[derive(Clone)]
pub struct Registry {
    formats: Vec<Arc<dyn SourceFormat>>,
    /// The packs the sources are read for that grade only some formats, each with the
    /// names of those formats (`sources` in its `rubric.yaml`).
    graders: Vec<(String, Vec<String>)>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            // Detection asks in this order; ties between equally sure formats go to the first.
            formats: vec![
                Arc::new(CleoDb),
                Arc::new(CleoJsonl),
                Arc::new(ClaudeCode),
                Arc::new(LangfuseTrace),
                Arc::new(InspectAi),
                Arc::new(Atif),
                Arc::new(Otel),
                Arc::new(Codex),
                Arc::new(GeminiCli),
                Arc::new(OpenHands),
                Arc::new(SweAgent),
            ],
            graders: Vec::new(),
        }
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// The formats built into the engine, shared.
    pub fn builtin() -> &'static Registry {
        static BUILTIN: OnceLock<Registry> = OnceLock::new();
        BUILTIN.get_or_init(Registry::default)
    }

    /// A registry with no formats at all.
    pub fn empty() -> Registry {
        Registry {
            formats: Vec::new(),
            graders: Vec::new(),
        }
    }

    /// This registry, reading for the pack `pack` too, which grades only the formats named
    /// `formats` (`sources` in its `rubric.yaml`): a source of another format is then refused
    /// when it is read, rather than graded by rules that look for entries it never has.
    /// [`CompiledPack::grading`](crate::CompiledPack::grading) calls it with a pack's own.
    pub fn graded_by(mut self, pack: &str, formats: &[String]) -> Registry {
        self.graders.push((pack.to_owned(), formats.to_vec()));
        self
    }

    /// Why the source at `path`, of `format`, cannot be read here: the first pack it is read
    /// for that does not grade the format. `None` when every pack grades it.
    pub fn refusal(&self, format: &dyn SourceFormat, path: &Path) -> Option<SourceError> {
        let (pack, formats) = self
            .graders
            .iter()
            .find(|(_, formats)| !formats.iter().any(|f| f == format.name()))?;
        let names: Vec<String> = formats.iter().map(|f| format!("`{f}`")).collect();
        let grades = match names.split_last() {
            Some((last, [])) => format!("{last} sources"),
            Some((last, rest)) => format!("{} and {last} sources", rest.join(", ")),
            None => "no source".to_owned(),
        };
        let noun = if format.noun().contains(&format!("`{}`", format.name())) {
            format.noun().to_owned()
        } else {
            format!("{} (`{}`)", format.noun(), format.name())
        };
        Some(SourceError::NotGraded(Box::new(NotGraded {
            path: path.to_owned(),
            noun,
            format: format.name().to_owned(),
            pack: pack.clone(),
            grades,
        })))
    }

    /// [`refusal`](Self::refusal) as a result, for a source about to be read. A source
    /// without content is let through: it has no format of its own (detection calls it an
    /// empty CLEO log), and every pack grades it as no session.
    fn check_graded(
        &self,
        format: &dyn SourceFormat,
        input: &Input<'_>,
    ) -> Result<(), SourceError> {
        let Some(refused) = self.refusal(format, input.name()) else {
            return Ok(());
        };
        if is_blank(input)? {
            return Ok(());
        }
        Err(refused)
    }

    /// Adds a format after those already known (so built-in formats win detection ties).
    pub fn register(&mut self, format: Arc<dyn SourceFormat>) -> Result<(), DuplicateFormat> {
        if self.get(format.name()).is_some() {
            return Err(DuplicateFormat(format.name().to_owned()));
        }
        self.formats.push(format);
        Ok(())
    }

    /// The format with this `--source-format` name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn SourceFormat>> {
        self.formats.iter().find(|f| f.name() == name)
    }

    /// The format with this name, or the message naming every known one (`auto`, detection,
    /// first; a plugin's format with its plugin).
    pub fn format_named(&self, name: &str) -> Result<Arc<dyn SourceFormat>, String> {
        if let Some(format) = self.get(name) {
            return Ok(format.clone());
        }
        let known: Vec<String> = std::iter::once("`auto`".to_owned())
            .chain(self.formats().map(|f| match f.plugin() {
                Some(plugin) => format!("`{}` (plugin `{plugin}`)", f.name()),
                None => format!("`{}`", f.name()),
            }))
            .collect();
        Err(format!(
            "unknown source format `{name}` (known: {})",
            known.join(", ")
        ))
    }

    /// Every format, in detection order.
    pub fn formats(&self) -> impl Iterator<Item = &Arc<dyn SourceFormat>> {
        self.formats.iter()
    }

    /// Every format's name, in detection order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.formats.iter().map(|f| f.name())
    }

    /// The formats detection tries, as a phrase: `a CLEO database, … and a Langfuse trace`.
    pub(super) fn tried(&self) -> String {
        let nouns: Vec<&str> = self.formats.iter().map(|f| f.noun()).collect();
        match nouns.split_last() {
            None => "no format at all".to_owned(),
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }

    /// The format surest of `evidence`: the first certain one, else the first likely one.
    fn pick(&self, evidence: &Evidence<'_>) -> Option<&Arc<dyn SourceFormat>> {
        let mut likely = None;
        for format in &self.formats {
            match format.sniff(evidence) {
                Sniff::Certain => return Some(format),
                Sniff::Likely => {
                    likely.get_or_insert(format);
                }
                Sniff::No => {}
            }
        }
        likely
    }

    fn unknown(&self, input: &Input<'_>, reason: String) -> SourceError {
        SourceError::UnknownFormat {
            path: input.name().to_owned(),
            tried: self.tried(),
            reason,
        }
    }

    /// Tells the formats apart by content: the first bytes (a SQLite header is a CLEO
    /// database); otherwise the first JSON lines (a Claude Code record, a CLEO audit entry,
    /// a `{loglines}` or Langfuse document on one line), and if the first line is not JSON
    /// on its own, the whole input as one JSON document (a pretty-printed `{loglines}`
    /// wrapper or Langfuse trace). An empty input is an (empty) CLEO audit log.
    pub fn detect(&self, input: &Input<'_>) -> Result<Arc<dyn SourceFormat>, SourceError> {
        if let Some(format) = self.claimed(input)? {
            return Ok(format);
        }
        let name = input.name();
        let io = |source| SourceError::Io {
            path: name.to_owned(),
            source,
        };
        let mut reader: Box<dyn BufRead + '_> = match input {
            Input::File(path) => {
                Box::new(BufReader::new(crate::file::open_regular(path).map_err(io)?))
            }
            Input::Bytes { bytes, .. } => Box::new(*bytes),
        };
        let mut head = [0u8; HEAD_BYTES];
        let mut filled = 0;
        while filled < head.len() {
            let n = reader.read(&mut head[filled..]).map_err(io)?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if let Some(format) = self.pick(&Evidence::Head(&head[..filled])) {
            return Ok(format.clone());
        }
        let mut reader = std::io::Cursor::new(&head[..filled]).chain(reader);
        let mut line = Vec::new();
        let mut seen = 0;
        let mut first_problem: Option<String> = None;
        let mut line_no = 0u64;
        while seen < DETECT_LINES {
            line.clear();
            let read = reader
                .by_ref()
                .take(DETECT_BYTES + 1)
                .read_until(b'\n', &mut line)
                .map_err(io)?;
            if read == 0 {
                break;
            }
            line_no += 1;
            if line.len() as u64 > DETECT_BYTES && line.last() != Some(&b'\n') {
                return Err(self.unknown(
                    input,
                    format!(
                        "line {line_no} is longer than {} MiB, more than format detection reads (name the format with `--source-format`)",
                        DETECT_BYTES >> 20
                    ),
                ));
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            seen += 1;
            // Read as the sources read a line, with U+FFFD for a lone surrogate.
            let parsed = crate::json::from_slice_lenient::<Value>(&line).map(|(value, _)| value);
            match parsed {
                Ok(Value::Object(map)) => {
                    if let Some(format) = self.pick(&Evidence::Object(&map)) {
                        return Ok(format.clone());
                    }
                    first_problem.get_or_insert_with(|| {
                        format!(
                            "line {line_no} is a JSON object with none of the keys of a known record"
                        )
                    });
                }
                Ok(other) => {
                    if let Value::Array(items) = &other {
                        if let Some(format) = self.pick(&Evidence::Array(items)) {
                            return Ok(format.clone());
                        }
                    }
                    first_problem.get_or_insert_with(|| {
                        format!("line {line_no} is {}", not_an_object(&other))
                    });
                }
                Err(err) => {
                    if seen == 1
                        && line
                            .iter()
                            .find(|b| !b.is_ascii_whitespace())
                            .is_some_and(|b| matches!(b, b'{' | b'['))
                    {
                        // Perhaps a pretty-printed document: read it whole.
                        let mut broken = None;
                        if let Some(found) = self.detect_document(input, &mut broken)? {
                            return found;
                        }
                        // Line 1 only opens a document: where the document breaks is what
                        // helps, not that its first line ends before its JSON does.
                        if let Some(problem) = broken.filter(|_| err.is_eof()) {
                            first_problem.get_or_insert(problem);
                        }
                    }
                    first_problem.get_or_insert_with(|| {
                        format!(
                            "line {line_no} is not valid JSON: {}",
                            describe_json_error(&err, &line)
                        )
                    });
                }
            }
        }
        let Some(reason) = first_problem else {
            return match self.pick(&Evidence::Empty) {
                Some(format) => Ok(format.clone()),
                None => Err(self.unknown(input, "it is empty".to_owned())),
            };
        };
        let signatures: Vec<&str> = self
            .formats
            .iter()
            .filter_map(|f| f.head_signature())
            .collect();
        let reason = if signatures.is_empty() {
            reason
        } else {
            format!("it has no {}, and {reason}", signatures.join(" or "))
        };
        Err(self.unknown(input, reason))
    }

    /// The first format that claims `input` by its first bytes, when any claims files so.
    fn claimed(&self, input: &Input<'_>) -> Result<Option<Arc<dyn SourceFormat>>, SourceError> {
        let wanted = self.formats.iter().map(|f| f.claim_bytes()).max();
        let Some(wanted) = wanted.filter(|&n| n > 0) else {
            return Ok(None);
        };
        let head = input.head(wanted)?;
        Ok(self
            .formats
            .iter()
            .find(|f| f.claim_bytes() > 0 && f.claims(&head[..head.len().min(f.claim_bytes())]))
            .cloned())
    }

    /// Detection by the whole input read as one JSON document; `None` when it is not JSON,
    /// with where it breaks in `broken` when that is past its first line.
    #[allow(
        clippy::type_complexity,
        reason = "three outcomes read best spelled out: not JSON, JSON of a format or of none, unreadable"
    )]
    fn detect_document(
        &self,
        input: &Input<'_>,
        broken: &mut Option<String>,
    ) -> Result<Option<Result<Arc<dyn SourceFormat>, SourceError>>, SourceError> {
        if let Input::File(path) = input {
            let len = std::fs::metadata(path)
                .map_err(|source| SourceError::Io {
                    path: path.to_path_buf(),
                    source,
                })?
                .len();
            if len > DETECT_BYTES {
                return Ok(Some(Err(self.unknown(
                    input,
                    format!(
                        "its first line opens a JSON document, and one larger than {} MiB is not read whole to tell its format (name the format with `--source-format`)",
                        DETECT_BYTES >> 20
                    ),
                ))));
            }
        }
        let text = input.bytes()?;
        let parsed = crate::json::from_slice_lenient::<Value>(&text).map(|(value, _)| value);
        Ok(match parsed {
            Ok(Value::Object(map)) => Some(match self.pick(&Evidence::Object(&map)) {
                Some(format) => Ok(format.clone()),
                None => {
                    let keys: Vec<&str> = self
                        .formats
                        .iter()
                        .filter_map(|f| f.document_keys())
                        .collect();
                    Err(self.unknown(
                        input,
                        format!("it is one JSON object, but without {}", keys.join(" or ")),
                    ))
                }
            }),
            Ok(Value::Array(items)) => Some(match self.pick(&Evidence::Array(&items)) {
                Some(format) => Ok(format.clone()),
                None => Err(self.unknown(input, "it is one JSON array, not an object".to_owned())),
            }),
            Ok(other) => Some(Err(self.unknown(
                input,
                format!("it is one JSON {}, not an object", json_kind(&other)),
            ))),
            Err(doc) => {
                *broken = document_break(&doc, &text);
                None
            }
        })
    }

    /// Reads the sessions of a source, in `format` or the detected one. A folder is read
    /// by the format that reads folders (Claude Code: every `*.jsonl` in it and its
    /// subfolders, where subagent transcripts are kept, sessions gathered by `sessionId`).
    pub fn read(
        &self,
        input: &Input<'_>,
        format: Option<&dyn SourceFormat>,
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        if let Input::File(path) = input {
            if path.is_dir() {
                return self.read_folder(path, format, filter, options);
            }
        }
        let mut detected = None;
        self.checked_format(input, format, &mut detected)?
            .read(input, filter, options)
    }

    /// The format to read a file in: `asked`, or the detected one (kept in `detected`),
    /// once every pack it is read for grades it.
    fn checked_format<'f>(
        &self,
        input: &Input<'_>,
        asked: Option<&'f dyn SourceFormat>,
        detected: &'f mut Option<Arc<dyn SourceFormat>>,
    ) -> Result<&'f dyn SourceFormat, SourceError> {
        let format = match asked {
            Some(format) => format,
            None => &**detected.insert(self.detect(input)?),
        };
        self.check_graded(format, input)?;
        Ok(format)
    }

    /// Reads every file of a folder source. Unless the format was asked for, a file that is
    /// not of the folder's format (by content) is skipped with a warning.
    fn read_folder(
        &self,
        dir: &Path,
        asked: Option<&dyn SourceFormat>,
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let folder_format = match asked {
            Some(format) if format.folder_extension().is_some() => format,
            Some(other) if other.file_extensions().is_empty() => {
                return Err(SourceError::FolderNotClaudeCode {
                    path: dir.to_owned(),
                    format: other.name().to_owned(),
                })
            }
            // Each file in the format its content shows (or the one asked for).
            _ => {
                let read = self.read_sources(&[dir.to_owned()], asked, filter, options)?;
                return Ok(read.read);
            }
        };
        self.check_graded(folder_format, &Input::File(dir))?;
        let extension = folder_format.folder_extension().unwrap_or_default();
        let mut files = Vec::new();
        let mut skipped = Vec::new();
        let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
        collect_files(
            &root,
            dir,
            &[extension],
            FOLDER_DEPTH,
            &mut files,
            &mut skipped,
        )?;
        files.sort();
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        if files.is_empty() {
            return Err(SourceError::EmptyFolder {
                path: dir.to_owned(),
            });
        }
        if asked.is_none() {
            let mut kept = Vec::with_capacity(files.len());
            for file in files {
                let noun = folder_format.noun();
                match self.detect(&Input::File(&file)) {
                    Ok(found) if found.name() == folder_format.name() => kept.push(file),
                    Ok(other) => skipped.push(SourceWarning {
                        path: file,
                        place: Place::File,
                        message: format!(
                            "skipped: it reads as a `{}` source, not {noun}",
                            other.name()
                        ),
                    }),
                    Err(SourceError::UnknownFormat { reason, .. }) => skipped.push(SourceWarning {
                        path: file,
                        place: Place::File,
                        message: format!("skipped: not {noun} ({reason})"),
                    }),
                    Err(other) => return Err(other),
                }
            }
            files = kept;
        }
        let mut read = folder_format.read_files(&files, filter, options)?;
        skipped.append(&mut read.warnings);
        read.warnings = skipped;
        Ok(read)
    }

    /// Reads every wanted session of a source and calls `f` on each, in parallel, as soon as
    /// it is complete (streaming when the format streams). Returns the results in the order
    /// of each session's first entry. A source error wins over an error of `f` (as if the
    /// source were read before grading). Warnings of a whole read are dropped here.
    pub fn map_sessions<T, E, F>(
        &self,
        path: &Path,
        format: Option<&dyn SourceFormat>,
        filter: &SessionFilter,
        options: &ReadOptions,
        progress: Option<Progress<'_>>,
        f: F,
    ) -> Result<Mapped<T>, StreamError<E>>
    where
        T: Send,
        E: Send,
        F: Fn(Session) -> Result<T, E> + Sync,
    {
        let mut results = Vec::new();
        let delivered =
            self.map_sessions_into(path, format, filter, options, progress, f, &mut |t| {
                results.push(t)
            })?;
        Ok(delivered.with_results(results))
    }

    /// [`map_sessions`](Self::map_sessions), handing each result to `sink` (on the calling
    /// thread) as soon as every session before it is done, rather than returning them all:
    /// a caller can write results out, or hold them where it likes, while the source is still
    /// being read. An error can end the read after `sink` was handed earlier results.
    #[allow(
        clippy::too_many_arguments,
        reason = "the streaming entry point: each argument is an independent choice of its caller"
    )]
    pub fn map_sessions_into<T, E, F>(
        &self,
        path: &Path,
        format: Option<&dyn SourceFormat>,
        filter: &SessionFilter,
        options: &ReadOptions,
        progress: Option<Progress<'_>>,
        f: F,
        sink: &mut dyn FnMut(T),
    ) -> Result<Delivered, StreamError<E>>
    where
        T: Send,
        E: Send,
        F: Fn(Session) -> Result<T, E> + Sync,
    {
        let input = Input::File(path);
        // A whole read's warnings are handed back as a stream's are: a caller that dropped
        // them would grade a source that lost records without a word.
        let read = if path.is_dir() {
            self.read(&input, format, filter, options)?
        } else {
            let mut detected = None;
            let format = self.checked_format(&input, format, &mut detected)?;
            if let Some(stream) = format.open_stream(path, filter, options, progress)? {
                return stream.map_into(&f, sink);
            }
            format.read(&input, filter, options)?
        };
        let results = read
            .sessions
            .into_par_iter()
            .map(&f)
            .collect::<Result<Vec<T>, E>>()
            .map_err(StreamError::Session)?;
        results.into_iter().for_each(sink);
        Ok(Delivered {
            warnings: read.warnings,
            skipped_lines: read.skipped_lines,
        })
    }
}

/// Whether `input` holds nothing but white space (a folder holds files: never blank).
fn is_blank(input: &Input<'_>) -> Result<bool, SourceError> {
    let name = input.name();
    match input {
        Input::Bytes { bytes, .. } => Ok(bytes.iter().all(u8::is_ascii_whitespace)),
        Input::File(path) if path.is_dir() => Ok(false),
        Input::File(path) => {
            let io = |source| SourceError::Io {
                path: name.to_owned(),
                source,
            };
            let mut file = crate::file::open_regular(path).map_err(io)?;
            let mut buffer = [0u8; 8192];
            loop {
                let n = match file.read(&mut buffer) {
                    Ok(0) => return Ok(true),
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(io(e)),
                };
                if !buffer[..n].iter().all(u8::is_ascii_whitespace) {
                    return Ok(false);
                }
            }
        }
    }
}

/// Every file with `extension` under `dir`, `depth` folders deep. An entry that is not a
/// regular file (a dangling link, a FIFO that would block, a device such as `/dev/zero`
/// that never ends) is skipped with a warning: one odd entry must not cost the whole folder
/// its grades. A link to a folder is not followed (it may lead out of the folder `root`, or
/// back up into it), and a folder deeper than `depth` is not read: each with a warning.
pub(super) fn collect_files(
    root: &Path,
    dir: &Path,
    extensions: &[&str],
    depth: usize,
    out: &mut Vec<PathBuf>,
    skipped: &mut Vec<SourceWarning>,
) -> Result<(), SourceError> {
    let io = |source| SourceError::Io {
        path: dir.to_owned(),
        source,
    };
    for item in std::fs::read_dir(dir).map_err(io)? {
        let item = item.map_err(io)?;
        let path = item.path();
        let is_link = item.file_type().map_err(io)?.is_symlink();
        if path.is_dir() {
            if is_link {
                let out_of = match std::fs::canonicalize(&path) {
                    Ok(target) if !target.starts_with(root) => {
                        format!(", `{}` out of the folder", target.display())
                    }
                    _ => String::new(),
                };
                skipped.push(SourceWarning {
                    path,
                    place: Place::File,
                    message: format!(
                        "skipped: a link to a folder{out_of} (links to folders are not followed)"
                    ),
                });
            } else if depth > 0 {
                collect_files(root, &path, extensions, depth - 1, out, skipped)?;
            } else {
                let deeper = count_files(&path, extensions, DEEPER_LEVELS);
                if deeper > 0 {
                    let noun = if deeper == 1 { "file" } else { "files" };
                    skipped.push(SourceWarning {
                        path,
                        place: Place::File,
                        message: format!(
                            "skipped: a folder deeper than {FOLDER_DEPTH} levels, with {deeper} {} {noun} in it (pass the folder itself as the source to read them)",
                            file_patterns(extensions)
                        ),
                    });
                }
            }
            continue;
        }
        if !has_extension(&path, extensions) {
            continue;
        }
        let why = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => {
                out.push(path);
                continue;
            }
            Ok(_) => {
                "skipped: not a regular file (a FIFO, socket or device is not read from a folder)"
                    .to_owned()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                "skipped: a link to a file that does not exist".to_owned()
            }
            Err(e) => format!("skipped: cannot read it ({e})"),
        };
        skipped.push(SourceWarning {
            path,
            place: Place::File,
            message: why,
        });
    }
    Ok(())
}

/// Whether the name of `path` ends in `.EXT` for one of `extensions` (`jsonl`, `jsonl.zst`).
fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else {
        return false;
    };
    extensions.iter().any(|ext| {
        name.len() > ext.len() + 1
            && name.ends_with(ext)
            && name.as_bytes()[name.len() - ext.len() - 1] == b'.'
    })
}

/// File name patterns as a phrase: `` `*.jsonl` ``, `` `*.db`, `*.json` or `*.jsonl` ``.
pub(super) fn file_patterns(extensions: &[&str]) -> String {
    let patterns: Vec<String> = extensions.iter().map(|e| format!("`*.{e}`")).collect();
    match patterns.split_last() {
        None => "no file".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// How many more levels [`count_files`] looks into below the deepest folder read.
const DEEPER_LEVELS: usize = 8;

/// How many files with `extension` are under `dir`, up to `depth` folders deep, links not
/// followed and unreadable folders counted as empty: what a folder source leaves unread.
fn count_files(dir: &Path, extensions: &[&str], depth: usize) -> usize {
    let Ok(items) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for item in items.flatten() {
        let Ok(kind) = item.file_type() else {
            continue;
        };
        let path = item.path();
        if kind.is_dir() {
            if depth > 0 {
                n += count_files(&path, extensions, depth - 1);
            }
        } else if has_extension(&path, extensions) {
            n += 1;
        }
    }
    n
}

/// Where a document whose first line opened it breaks, read whole; `None` when it breaks on
/// its first line (which that line's own error names).
fn document_break(doc: &serde_json::Error, text: &[u8]) -> Option<String> {
    if doc.line() <= 1 {
        return None;
    }
    Some(match (doc.column(), doc.is_eof()) {
        (0, true) => format!(
            "line 1 opens a JSON document that ends at line {} before its JSON does",
            doc.line() - 1
        ),
        // Its place is the end of the line before, which the description names.
        (0, false) => format!(
            "line 1 opens a JSON document that is not valid JSON: {}",
            describe_json_error(doc, text)
        ),
        _ => format!(
            "line 1 opens a JSON document that is not valid JSON at line {}: {}",
            doc.line(),
            describe_json_error(doc, text)
        ),
    })
}

#[cfg(test)]
mod tests;
