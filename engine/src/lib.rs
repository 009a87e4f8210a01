//! `grade-engine`: grades AI coding-agent sessions against rubric packs.
//!
//! A pack is data — `rubric.yaml` plus optional Rhai scripts — and goes through three
//! stages inside the engine: the YAML as written (unknown keys refused), a compiled pack
//! (references resolved, every problem collected, scripts compiled once) and evaluation
//! (one session at a time; sessions are independent). Sessions come from a source (a CLEO
//! audit log or `tasks.db`, a Claude Code transcript, a Langfuse trace, a Codex CLI,
//! Gemini CLI, OpenHands or SWE-agent session) read through the [`source::Registry`]; every
//! agent's tool calls carry a normalized kind ([`source::ToolKind`]).
//!
//! What an embedder needs is here at the root:
//!
//! - packs: [`load_pack`] / [`load_pack_with`] (find and compile), [`locate_pack`],
//!   [`compile_pack`], [`validate_pack`] (every problem, for authoring tools), [`CompiledPack`];
//! - sources: [`read_source`], [`read_source_with`], [`Registry`] (add a format with
//!   [`Registry::register`]), [`SourceFormat`], [`Session`] and [`Entry`];
//! - grading: [`CompiledPack::grade`] and [`CompiledPack::grade_with`] (a judged pack takes a
//!   [`judgment::Judgment`]), [`GradeOptions`], [`GradeResult`];
//! - errors: [`PackError`], [`SourceError`], [`EvalError`], each with a lowercase message
//!   that names the file, line or session at fault;
//! - named sessions: [`named`] (the ones a source lacks, said with the closest it holds, and
//!   the rest in the order named), as the binary and the Python module refuse a typo;
//! - the modules [`compare`] (two packs or two arms over the same sessions, or two sets of
//!   recorded results: [`compare::recorded`]), [`judgment`]
//!   and [`prompt`] (judged dimensions), [`plugin`] (native code a pack loads) and
//!   [`result`] (the parts of a result);
//! - the modules the `grade` binary and the Python module build on: [`source`] (every
//!   format), [`pack`] (with [`pack::codes`], the diagnostic codes), [`entry`], [`run`]
//!   (a source graded in parallel), [`sink`] (outputs), [`pack_test`], [`calibrate`] and
//!   [`agreement`], [`reference`](mod@reference), [`time`] and [`file`](mod@file).
//!
//! # Embedding
//!
//! Grade every session of a CLEO audit log with a shipped pack:
//!
//! ```
//! use grade_engine::{load_pack, read_source, GradeOptions, SessionFilter};
//!
//! let pack = load_pack("cleo-v1", &[])?;
//! let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cleo-audit.jsonl");
//! let read = read_source(&log, None, &SessionFilter::All)?;
//! for session in &read.sessions {
//!     let result = pack.grade(session, &GradeOptions::default())?;
//!     assert_eq!(result.rubric.id, "cleo-v1");
//!     println!("{}: {}% {}", result.session_id, result.percent.unwrap_or_default().0, result.grade.unwrap_or_default());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The public API is the facade below: the root's items and re-exports, and the `pub mod`s
// the docs above list; within those, what only the engine uses is `pub(crate)`, as is every
// other module. `engine/tests/public-api.txt` lists it, so a change to it shows in review.
#![warn(missing_docs)]

pub mod agreement;
mod alloc;
pub mod calibrate;
pub mod compare;
pub mod entry;
pub(crate) mod eval;
pub(crate) mod field;
pub mod file;
pub(crate) mod json;
pub mod judgment;
pub mod named;
pub(crate) mod native;
pub mod pack;
pub mod pack_test;
pub mod plugin;
pub mod prompt;
pub mod reference;
pub mod result;
pub mod run;
pub(crate) mod script;
pub mod sink;
pub mod source;
mod text;
pub mod time;
pub(crate) mod validate;

use std::path::{Path, PathBuf};

pub use alloc::CountingAllocator;

/// The stack to give threads that grade with scripted packs (for example with
/// `rayon::ThreadPoolBuilder::stack_size`): a script run needs 256 MiB of stack in reserve
/// for the deepest values it may build, and runs on the thread's own stack when it has that
/// much left. On a thread with less, each run maps a stack of its own, which costs several
/// times the run of a small script. The reserve is address space: pages are used only as
/// deep as a run goes.
pub const SCRIPT_THREAD_STACK: usize = script::RUN_STACK + (16 << 20);
pub use entry::{Entry, Session};
pub use eval::{EvalError, GradeOptions};
pub use pack::{
    compile_pack, validate_pack, CompiledPack, FieldsRead, PackError, PackFiles, PackOrigin,
    Projection, Validation,
};
pub use result::GradeResult;
pub use source::{
    read_sessions, read_source, read_source_with, Mapped, ReadOptions, Registry, SessionFilter,
    SourceError, SourceFormat, SourceRead, SourceWarning,
};

/// The engine's own tests count allocations, as the `grade` binary does, so scripts run under
/// the bounds they have there.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: CountingAllocator<std::alloc::System> =
    CountingAllocator(std::alloc::System);

/// What the fuzz targets (`fuzz/`) reach beyond the facade: not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::pack::template::{Template, TemplateScope, TemplateValues};

    /// Whether the fast reader of CLEO audit lines took `line` (`Ok(false)`: it left it to
    /// serde), and read it as serde does (`Err` says how they differ).
    pub fn cleo_line_agrees_with_serde(line: &str) -> Result<bool, String> {
        crate::source::cleo_line_agrees_with_serde(line)
    }

    /// Whether the fast reader of a `details_json` params document took `text` (`Ok(false)`:
    /// it left it to serde), and read it as serde does (`Err` says how they differ).
    pub fn params_agree_with_serde(text: &str) -> Result<bool, String> {
        crate::source::params_agree_with_serde(text)
    }

    /// Whether the full parse of a CLEO audit line took `line` (`Ok(false)`: it refused
    /// it), and the first pass's skim found the session its entry lands in (`Err` says how
    /// they differ).
    pub fn cleo_skim_agrees_with_parse(line: &str) -> Result<bool, String> {
        crate::source::cleo_skim_agrees_with_parse(line)
    }

    /// Whether the skimming reader of CLEO audit lines took `line`, read for a pack that
    /// keeps what the bytes `a` and `b` choose (`Ok(false)`: it left it to serde), and that
    /// it and serde take and refuse the same lines and agree on every field kept (`Err`
    /// says how they differ).
    pub fn cleo_projection_agrees_with_serde(line: &str, a: u8, b: u8) -> Result<bool, String> {
        crate::source::cleo_projection_agrees_with_serde(line, a, b)
    }
}

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_packs.rs"));
}

/// The ids of the packs built into the library.
pub fn builtin_pack_ids() -> Vec<&'static str> {
    builtin::BUILTIN_PACKS.iter().map(|(id, _)| *id).collect()
}

/// The files of a built-in pack (its `tests/` fixtures are in [`builtin_pack_tests`]).
pub fn builtin_pack(id: &str) -> Option<PackFiles> {
    builtin::BUILTIN_PACKS
        .iter()
        .find(|(pack, _)| *pack == id)
        .map(|(pack, files)| PackFiles {
            origin: PackOrigin::Builtin((*pack).to_owned()),
            files: files
                .iter()
                .filter(|(name, _)| !name.starts_with("tests/"))
                .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
                .collect(),
        })
}

/// The test fixtures shipped with a built-in pack: path under `tests/` → content.
pub fn builtin_pack_tests(id: &str) -> Vec<(&'static str, &'static str)> {
    builtin::BUILTIN_PACKS
        .iter()
        .find(|(pack, _)| *pack == id)
        .map(|(_, files)| {
            files
                .iter()
                .filter_map(|(name, text)| name.strip_prefix("tests/").map(|n| (n, *text)))
                .collect()
        })
        .unwrap_or_default()
}

/// Finds a pack by id or path: a folder path (anything with a `/`, or an existing folder)
/// is read from disk; otherwise the id is looked up in `search_path` folders, then among
/// the built-in packs.
pub fn locate_pack(spec: &str, search_path: &[PathBuf]) -> Result<PackFiles, PackError> {
    let as_path = Path::new(spec);
    if spec.contains('/') || spec.contains(std::path::MAIN_SEPARATOR) || spec.starts_with('.') {
        return PackFiles::read_folder(as_path);
    }
    for dir in search_path {
        let candidate = dir.join(spec);
        if candidate.join("rubric.yaml").is_file() {
            return PackFiles::read_folder(&candidate);
        }
        // `grade rubric list` shows a pack by the id its `rubric.yaml` declares, which need
        // not be its folder's name: that id finds it too.
        if let Some(folder) = folder_declaring(dir, spec) {
            return PackFiles::read_folder(&folder);
        }
    }
    if let Some(files) = builtin_pack(spec) {
        return Ok(files);
    }
    // A folder of that name that is no pack says so, rather than "unknown rubric" of a
    // folder the user can see.
    if as_path.is_dir() {
        return PackFiles::read_folder(as_path);
    }
    Err(PackError::Unknown {
        spec: spec.to_owned(),
        shipped: builtin_pack_ids()
            .iter()
            .map(|id| format!("`{id}`"))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// The pack folder in `dir` whose `rubric.yaml` declares `id`, the first by name; `None`
/// when none does, or `dir` cannot be read (a folder lookup reports that).
fn folder_declaring(dir: &Path, id: &str) -> Option<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("rubric.yaml").is_file())
        .collect();
    folders.sort();
    folders.into_iter().find(|folder| {
        std::fs::read_to_string(folder.join("rubric.yaml"))
            .ok()
            .and_then(|text| {
                serde_yaml::from_str::<serde_yaml::Value>(text.trim_start_matches('\u{feff}')).ok()
            })
            .is_some_and(|manifest| {
                manifest.get("id").and_then(serde_yaml::Value::as_str) == Some(id)
            })
    })
}

/// Locates and compiles a pack (a pack with plugins is refused: see [`load_pack_with`]).
pub fn load_pack(spec: &str, search_path: &[PathBuf]) -> Result<CompiledPack, PackError> {
    compile_pack(&locate_pack(spec, search_path)?)
}

/// Locates and compiles a pack, loading its plugins if `policy` allows it.
pub fn load_pack_with(
    spec: &str,
    search_path: &[PathBuf],
    policy: plugin::PluginPolicy,
) -> Result<CompiledPack, PackError> {
    pack::compile_pack_with(&locate_pack(spec, search_path)?, policy)
}
