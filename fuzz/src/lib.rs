//! Helpers shared by the fuzz targets: the engine's readers take paths, so each input is
//! written to one scratch file per process, and the packs the targets grade with are
//! compiled once.

use std::path::PathBuf;
use std::sync::OnceLock;

use grade_engine::{CompiledPack, GradeOptions, Session};

/// Writes `data` to this process's scratch file (ending in `ext`, which some readers look
/// at) and returns its path. One file per process keeps parallel jobs (`-jobs=N`) apart.
pub fn scratch_file(data: &[u8], ext: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("grade-fuzz-{}.{ext}", std::process::id()));
    if let Err(e) = std::fs::write(&path, data) {
        // The fuzzer cannot go on without its scratch file; this is not an engine finding.
        eprintln!("cannot write {}: {e}", path.display());
        std::process::exit(2);
    }
    path
}

/// A shipped pack, compiled once per process.
pub fn builtin(id: &'static str) -> &'static CompiledPack {
    static PACKS: OnceLock<Vec<(&'static str, CompiledPack)>> = OnceLock::new();
    let packs = PACKS.get_or_init(|| {
        grade_engine::builtin_pack_ids()
            .into_iter()
            .filter_map(|id| Some((id, grade_engine::load_pack(id, &[]).ok()?)))
            .collect()
    });
    match packs.iter().find(|(p, _)| *p == id) {
        Some((_, pack)) => pack,
        None => {
            eprintln!("the shipped pack `{id}` does not compile");
            std::process::exit(2);
        }
    }
}

/// Grades every session with each deterministic pack given: reading is only half of
/// what a source does, the values it yields must also survive every rule.
pub fn grade_all(sessions: &[Session], packs: &[&'static str]) {
    let options = GradeOptions {
        now: 0,
        explain: true,
        references: None,
    };
    for id in packs {
        let pack = builtin(id);
        for session in sessions.iter().take(8) {
            let _ = pack.grade(session, &options);
        }
    }
}

/// The sessions of `rubrics/cleo-v1/tests/example.jsonl`, read once.
pub fn example_sessions() -> &'static [Session] {
    static SESSIONS: OnceLock<Vec<Session>> = OnceLock::new();
    SESSIONS.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../rubrics/cleo-v1/tests/example.jsonl"
        );
        grade_engine::read_sessions(
            std::path::Path::new(path),
            &grade_engine::SessionFilter::All,
        )
        .unwrap_or_default()
    })
}
