//! Where audit entries come from: a CLEO audit log (JSONL) or `tasks.db`, a Claude Code
//! transcript or project folder, a Langfuse trace, or another coding agent's sessions
//! (Codex CLI, Gemini CLI, OpenHands, SWE-agent, inspect_ai, ATIF, OpenTelemetry traces),
//! whose tool calls share one entry model (`tool.rs`) and what their readers have in common
//! (`agent.rs`, `agent_run.rs`). `docs/sources.md` lists how each maps to entries.
//!
//! Each format is one file implementing [`SourceFormat`] and one line in the [`Registry`]
//! (`registry.rs`); detection, `--source-format` and the choice to stream come from there.
//! The modules depend on each other in one direction only:
//! `common` ← `stream` ← `format` ← each format ← `registry` ← this module's functions.

mod agent;
mod agent_run;
mod atif;
mod claude_code;
mod cleo_db;
mod cleo_jsonl;
mod codex;
mod common;
mod format;
mod gemini;
mod inspect_ai;
mod langfuse_trace;
mod lenient;
mod many;
mod openhands;
mod otel;
mod packed;
mod readonly_db;
mod registry;
mod stream;
mod swe_agent;
mod tool;

pub(crate) use lenient::{is_duration, DURATION_WANTED};

#[cfg(feature = "fuzzing")]
pub(crate) use cleo_jsonl::agrees_with_serde as cleo_line_agrees_with_serde;
#[cfg(feature = "fuzzing")]
pub(crate) use cleo_jsonl::params_agree_with_serde;
#[cfg(feature = "fuzzing")]
pub(crate) use cleo_jsonl::projection_agrees_with_serde as cleo_projection_agrees_with_serde;
#[cfg(feature = "fuzzing")]
pub(crate) use cleo_jsonl::skim_agrees_with_parse as cleo_skim_agrees_with_parse;

use std::path::Path;
use std::sync::Arc;

pub use atif::Atif;
pub use claude_code::ClaudeCode;
pub use cleo_db::CleoDb;
pub use cleo_jsonl::CleoJsonl;
pub use codex::Codex;
pub use common::{
    Input, NotGraded, Place, ReadOptions, SessionFilter, SourceError, SourceRead, SourceWarning,
};
pub use format::{Evidence, Sniff, SourceFormat};
pub use gemini::GeminiCli;
pub use inspect_ai::InspectAi;
pub use langfuse_trace::LangfuseTrace;
pub use many::{is_glob, SourcesRead};
pub use openhands::OpenHands;
pub use otel::Otel;
pub use registry::{DuplicateFormat, Registry};
pub use stream::{Delivered, Mapped, Progress, Stream, StreamError};
pub use swe_agent::SweAgent;
pub use tool::{ToolKind, KIND_KEY};

use crate::entry::Session;

/// Detects the format of a file among the built-in ones (see [`Registry::detect`]).
pub fn detect_format(path: &Path) -> Result<Arc<dyn SourceFormat>, SourceError> {
    Registry::builtin().detect(&Input::File(path))
}

/// Reads the sessions of a source, detecting its format; warnings are dropped
/// (use [`read_source`] to get them).
pub fn read_sessions(path: &Path, filter: &SessionFilter) -> Result<Vec<Session>, SourceError> {
    read_source(path, None, filter).map(|read| read.sessions)
}

/// Reads the sessions of a file or folder source, in `format` or the detected built-in one
/// (see [`Registry::read`]).
pub fn read_source(
    path: &Path,
    format: Option<&dyn SourceFormat>,
    filter: &SessionFilter,
) -> Result<SourceRead, SourceError> {
    read_source_with(path, format, filter, &ReadOptions::default())
}

/// [`read_source`] with [`ReadOptions`]: which fields to check, whether to skip bad lines.
pub fn read_source_with(
    path: &Path,
    format: Option<&dyn SourceFormat>,
    filter: &SessionFilter,
    options: &ReadOptions,
) -> Result<SourceRead, SourceError> {
    Registry::builtin().read(&Input::File(path), format, filter, options)
}

/// Calls `f` on every wanted session of a source as soon as it is read whole, streaming
/// when the detected built-in format streams (see [`Registry::map_sessions`]).
pub fn map_sessions<T, E, F>(
    path: &Path,
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
    Registry::builtin().map_sessions(path, None, filter, options, progress, f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn file_with(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn formats_are_told_apart_by_content() {
        let cases = [
            (
                r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"tasks","operation":"find","result":{"success":true}}"#,
                "cleo-jsonl",
            ),
            ("", "cleo-jsonl"),
            (
                r#"{"type":"summary","summary":"x","leafUuid":"u"}"#,
                "claude-code",
            ),
            (
                "\"junk\"\n{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{}}",
                "claude-code",
            ),
            ("{\n  \"loglines\": []\n}\n", "claude-code"),
            (
                "{\n  \"trace\": {\"id\": \"t\"},\n  \"observations\": []\n}",
                "langfuse",
            ),
            (
                r#"{"id":"t","timestamp":"2026-03-01T00:00:00Z","observations":[]}"#,
                "langfuse",
            ),
        ];
        for (text, want) in cases {
            let f = file_with(text);
            assert_eq!(detect_format(f.path()).unwrap().name(), want, "{text}");
        }
    }

    #[test]
    fn an_unknown_file_says_what_was_tried() {
        for text in [
            "hello\n",
            "{\"silly\": \"this\"}\n",
            "[1, 2]\n",
            "{\n \"a\": 1\n}\n",
        ] {
            let f = file_with(text);
            let err = detect_format(f.path()).unwrap_err().to_string();
            let tried = format!("tried {}", Registry::builtin().tried());
            assert!(err.contains(&tried), "{err}");
        }
    }

    #[test]
    fn a_folder_without_a_file_a_format_names_is_refused_saying_what_was_looked_for() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "hi").unwrap();
        let err = read_source(dir.path(), Some(&LangfuseTrace), &SessionFilter::All).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "`{}` holds no source file (looked for `*.json` or `*.jsonl`)",
                dir.path().display()
            )
        );
        let err = read_source(dir.path(), None, &SessionFilter::All).unwrap_err();
        assert!(matches!(err, SourceError::NoSourceFiles { .. }), "{err}");
    }

    /// Rotated CLEO logs in a folder were refused as a Claude Code project folder.
    #[test]
    fn a_folder_reads_each_file_in_the_format_its_content_shows() {
        let dir = tempfile::tempdir().unwrap();
        let line = |id: &str| {
            format!(
                r#"{{"timestamp":"2026-03-01T00:00:00Z","sessionId":"{id}","domain":"tasks","operation":"find","result":{{"success":true}}}}"#
            )
        };
        std::fs::write(dir.path().join("audit.jsonl"), line("a")).unwrap();
        std::fs::write(dir.path().join("audit.1.jsonl"), line("b")).unwrap();
        let read = read_source(dir.path(), None, &SessionFilter::All).unwrap();
        let ids: Vec<&str> = read.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["b", "a"], "in the order the files sort");
    }
}
