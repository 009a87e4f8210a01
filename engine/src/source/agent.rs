//! What the readers of other coding agents' sessions share (Codex CLI, Gemini CLI,
//! OpenHands, SWE-agent): building a message or tool-call entry in the one model of
//! [`super::tool`], JSON lines read leniently, and records of a type the reader does not
//! know skipped, counted in the session's `skippedLines` and named in one warning per type.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::common::{
    describe_json_error, Input, Place, ReadOptions, SessionFilter, SourceError, SourceRead,
    SourceWarning,
};
use super::format::{Evidence, Sniff, SourceFormat};
use super::tool::{KindTable, KIND_KEY};
use crate::entry::{Entry, Metadata, Origin, Outcome, Params, Session, SourceFile};
use crate::time::InstantMs;

/// How an agent's reader names and describes its format to the registry: the parts of
/// [`SourceFormat`] that are plain words, written once per reader.
pub struct Described {
    /// The format's name (`--source-format`, `metadata.source`).
    pub name: &'static str,
    /// What one of its files is, after "tried" in a message (`a Codex CLI rollout`).
    pub noun: &'static str,
    /// One line for `grade sources`.
    pub about: &'static str,
    /// The keys that make a JSON document one of its files, for the message that names none.
    pub document_keys: Option<&'static str>,
    /// The file endings it reads in a folder.
    pub extensions: &'static [&'static str],
}

/// A coding agent's reader: its description, how its content is recognized and how a whole
/// file is read. Every such reader is a [`SourceFormat`] through the one impl below, so the
/// registry sees them as it sees the others. (Public only inside this private module: the
/// facade exports the reader types, not this trait.)
pub trait AgentFormat: Send + Sync {
    /// Names and words.
    const DESCRIBED: Described;

    /// Whether the evidence (a first line, a document, the first bytes) is this format's.
    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff;

    /// The sessions in a whole file's bytes, named `path` in messages.
    fn read_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        filter: &SessionFilter,
    ) -> Result<SourceRead, SourceError>;
}

impl<T: AgentFormat> SourceFormat for T {
    fn name(&self) -> &str {
        T::DESCRIBED.name
    }

    fn noun(&self) -> &str {
        T::DESCRIBED.noun
    }

    fn about(&self) -> &str {
        T::DESCRIBED.about
    }

    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        AgentFormat::sniff(self, evidence)
    }

    fn document_keys(&self) -> Option<&str> {
        T::DESCRIBED.document_keys
    }

    fn file_extensions(&self) -> &[&str] {
        T::DESCRIBED.extensions
    }

    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        _: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let bytes = input.bytes()?;
        self.read_bytes(input.name(), &bytes, filter)
    }
}

/// When a record happened: its timestamp as written and the instant it denotes. A record
/// without one (SWE-agent writes none) takes the one before it, or none at all.
#[derive(Debug, Clone, Default)]
pub(crate) struct At {
    pub text: crate::entry::Text,
    pub instant: InstantMs,
}

impl At {
    /// `text` read as a timestamp; `None` when it is no readable one.
    pub fn parse(text: &str) -> Option<At> {
        crate::time::parse_timestamp(text).ok().map(|instant| At {
            text: text.into(),
            instant,
        })
    }
}

/// How a tool call ended, as its agent reported it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ended {
    /// The tool reported a failure (a non-zero exit code, an error status or observation).
    pub failed: bool,
    /// The exit code, when the tool reported one.
    pub exit_code: Option<i64>,
    /// How long it ran, in milliseconds, when known.
    pub duration: f64,
    /// The error text, for a failed call.
    pub error: Option<String>,
}

impl Ended {
    fn outcome(&self) -> Outcome {
        Outcome {
            success: !self.failed,
            exit_code: self.exit_code.unwrap_or(i64::from(self.failed)),
            duration: self.duration,
        }
    }
}

/// The entries of one file of an agent's sessions, with what was skipped in it.
pub(crate) struct FileRead {
    /// `metadata.source` of every entry (`codex`).
    source: &'static str,
    path: PathBuf,
    file: SourceFile,
    /// Whether the file has lines (JSONL): an entry's origin is then its line.
    lined: bool,
    pub warnings: Vec<SourceWarning>,
    /// Records of an unknown type, by type: the first place and how many.
    unknown: BTreeMap<String, (Place, u64)>,
    /// Records skipped (unknown types, broken lines), each lost to its session.
    pub skipped: u64,
}

impl FileRead {
    pub fn new(source: &'static str, path: &Path, lined: bool) -> FileRead {
        FileRead {
            source,
            path: path.to_owned(),
            file: SourceFile::named(path),
            lined,
            warnings: Vec::new(),
            unknown: BTreeMap::new(),
            skipped: 0,
        }
    }

    /// A warning at `place`; reading goes on.
    pub fn warn(&mut self, place: Place, message: String) {
        self.warnings.push(SourceWarning {
            path: self.path.clone(),
            place,
            message,
        });
    }

    /// A record of type `what` that this reader does not know: skipped and counted, and
    /// named once per type when the file is done.
    pub fn unknown(&mut self, place: Place, what: String) {
        self.skipped += 1;
        self.unknown.entry(what).or_insert((place, 0)).1 += 1;
    }

    /// A record that cannot be read at all: skipped and counted, with a warning saying why.
    pub fn broken(&mut self, place: Place, why: String) {
        self.skipped += 1;
        self.warn(place, format!("skipped: {why}"));
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the one entry builder every agent reader calls: each argument is one field of the entry"
    )]
    fn entry(
        &self,
        session: &str,
        at: &At,
        place: &Place,
        domain: &str,
        operation: &str,
        params: Map<String, Value>,
        ended: &Ended,
        mut extra: Map<String, Value>,
    ) -> Entry {
        let origin = match place {
            Place::Line(line) if self.lined => Origin::line(self.file, *line),
            Place::Item(item) => {
                extra.insert("item".into(), item.as_str().into());
                Origin::UNKNOWN
            }
            _ => Origin::UNKNOWN,
        };
        Entry {
            timestamp: at.text.clone(),
            instant: at.instant,
            session_id: session.into(),
            domain: domain.into(),
            operation: operation.into(),
            params: Params::from(params),
            result: ended.outcome(),
            metadata: Metadata::from_map(extra, self.source),
            error: ended.error.as_deref().map(Into::into),
            origin,
        }
    }

    /// A message entry: domain `message`, operation `role` (`user`, `assistant`),
    /// `params.text`.
    pub fn message(
        &self,
        session: &str,
        at: &At,
        place: &Place,
        role: &str,
        text: String,
        extra: Map<String, Value>,
    ) -> Entry {
        let mut params = Map::new();
        params.insert("text".into(), Value::String(text));
        self.entry(
            session,
            at,
            place,
            "message",
            role,
            params,
            &Ended::default(),
            extra,
        )
    }

    /// A tool call entry: domain `tool`, operation the agent's tool name, `params` its
    /// arguments, `metadata.kind` from the agent's table.
    #[allow(
        clippy::too_many_arguments,
        reason = "the one tool-call builder every agent reader calls: each argument is one field of the entry"
    )]
    pub fn tool(
        &self,
        kinds: &KindTable,
        session: &str,
        at: &At,
        place: &Place,
        name: &str,
        params: Map<String, Value>,
        ended: &Ended,
        mut extra: Map<String, Value>,
    ) -> Entry {
        extra.insert(
            KIND_KEY.into(),
            kinds.kind_of(name, &params).as_str().into(),
        );
        self.entry(session, at, place, "tool", name, params, ended, extra)
    }

    /// The warnings, with one per unknown record type at its first place.
    pub fn finish(mut self) -> Vec<SourceWarning> {
        for (what, (place, count)) in std::mem::take(&mut self.unknown) {
            let more = match count {
                1 => String::new(),
                n => format!(" ({n} records)"),
            };
            self.warn(
                place,
                format!("skipped: a record of a type this reader does not know, {what}{more}"),
            );
        }
        self.warnings
    }
}

/// The sessions of one file read, what it skipped counted for each (a file is one
/// session, or its sessions share what could not be told apart).
pub(crate) fn read_of(mut sessions: Vec<Session>, file: FileRead) -> SourceRead {
    let skipped = file.skipped;
    for session in &mut sessions {
        session.skipped_lines += skipped;
    }
    SourceRead {
        skipped_lines: skipped,
        sessions,
        warnings: file.finish(),
        ..SourceRead::default()
    }
}

/// The non-blank lines of a JSONL text, each parsed (U+FFFD for a lone surrogate), or why
/// it is not JSON: 1-based line numbers.
pub(crate) fn json_lines(text: &[u8]) -> impl Iterator<Item = (u64, Result<Value, String>)> + '_ {
    // The pieces `text.split(|b| *b == b'\n')` gives, found with memchr: the closure looked at
    // one byte at a time, 8% of the Codex reader's instructions (callgrind, 200 rollouts).
    let mut start = 0;
    memchr::memchr_iter(b'\n', text)
        .chain(std::iter::once(text.len()))
        .map(move |end| {
            let line = &text[start..end];
            start = end + 1;
            line
        })
        .enumerate()
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .map(|(i, line)| {
            let parsed = crate::json::from_slice_lenient::<Value>(line)
                .map(|(value, _)| value)
                .map_err(|err| format!("not valid JSON: {}", describe_json_error(&err, line)));
            (i as u64 + 1, parsed)
        })
}

/// The text of a message's content: a string, or the `text` of each part of a list
/// (`[{"type": "input_text", "text": …}]`, `[{"text": …}]`) joined by a blank line.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|part| match part {
                    Value::String(text) => Some(text.as_str()),
                    other => other.get("text").and_then(Value::as_str),
                })
                .filter(|text| !text.is_empty())
                .collect();
            texts.join("\n\n")
        }
        _ => String::new(),
    }
}

/// A session of `id` holding `entries`.
pub(crate) fn session(id: &str, entries: Vec<Entry>) -> Session {
    Session {
        id: id.to_owned(),
        entries,
        skipped_lines: 0,
    }
}

/// The file's name without its extensions (`rollout-…` of `rollout-….jsonl.zst`): the
/// session id of a file that names none.
pub(crate) fn file_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(|| "-".to_owned(), |n| n.to_string_lossy().into_owned());
    match name.split_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines found with memchr are the pieces of a split at `\n`, numbered alike: a blank
    /// line skipped, a last line with no newline read, `\r` left to the JSON reader.
    #[test]
    fn json_lines_numbers_the_lines_a_split_at_newlines_gives() {
        let text = b"\n{\"a\": 1}\n  \n[1]\r\n{\"b\": \"x\ny\"}\n{\"c\": 2}";
        let got: Vec<(u64, String)> = json_lines(text)
            .map(|(n, v)| (n, v.map_or_else(|e| e, |v| v.to_string())))
            .collect();
        let want: Vec<(u64, String)> = text
            .split(|b| *b == b'\n')
            .enumerate()
            .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
            .map(|(i, l)| {
                let v = serde_json::from_slice::<Value>(l);
                (
                    i as u64 + 1,
                    v.map_or_else(|_| "err".into(), |v| v.to_string()),
                )
            })
            .collect();
        assert_eq!(got.len(), want.len());
        for ((n, g), (m, w)) in got.iter().zip(&want) {
            assert_eq!(n, m);
            if w != "err" {
                assert_eq!(g, w);
            }
        }
        assert_eq!(got.last().map(|(n, _)| *n), Some(7));
        assert_eq!(json_lines(b"").count(), 0);
    }
}
