//! `grade-engine`: grades AI coding-agent sessions against rubric packs.
//!
//! A pack is data — `rubric.yaml` plus optional Rhai scripts — and goes through three
//! stages: [`pack::raw`] (the YAML as written, unknown keys refused), [`pack::compile`]
//! (references resolved, every problem collected, scripts compiled once) and
//! [`pack::CompiledPack::grade`] (one session at a time; sessions are independent).

// No unwrap, expect or panic outside tests: input must never crash the grader, and a failure
// must say what failed (clippy.toml allows them in `#[cfg(test)]` code).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod agreement;
pub mod compare;
pub mod entry;
pub mod eval;
pub mod judgment;
pub mod pack;
pub mod plugin;
pub mod prompt;
pub mod result;
pub mod script;
pub mod source;
pub mod time;

use std::path::{Path, PathBuf};

pub use entry::{Entry, Session};
pub use eval::{EvalError, GradeOptions};
pub use pack::reads::FieldsRead;
pub use pack::{
    compile_pack, validate_pack, CompiledPack, PackError, PackFiles, PackOrigin, Validation,
};
pub use result::GradeResult;
pub use source::{
    read_sessions, read_source, read_source_with, ReadOptions, Registry, SessionFilter,
    SourceError, SourceFormat, SourceRead, SourceWarning,
};

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
    }
    if let Some(files) = builtin_pack(spec) {
        return Ok(files);
    }
    if as_path.join("rubric.yaml").is_file() {
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
