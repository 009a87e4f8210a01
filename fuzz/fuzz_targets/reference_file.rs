//! The reader of reference trajectories (`--reference FILE`), then the trajectory metrics
//! over what it read: no input may panic, a refusal names its reason, and every grade with a
//! reference keeps each dimension between 0 and its maximum.
#![no_main]

use std::sync::{Arc, OnceLock};

use grade_engine::reference::References;
use grade_engine::{CompiledPack, GradeOptions, Session};
use libfuzzer_sys::fuzz_target;

/// The trajectory example (`examples/trajectory/`): a pack of `tool_f1`, `trajectory_match`
/// and `tool_sequence`, and the real Claude Code session it grades.
fn example() -> &'static (CompiledPack, Session) {
    static EXAMPLE: OnceLock<(CompiledPack, Session)> = OnceLock::new();
    EXAMPLE.get_or_init(|| {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/trajectory");
        let pack = grade_engine::load_pack(&format!("{root}/pack"), &[]);
        let sessions = grade_engine::read_sessions(
            std::path::Path::new(&format!("{root}/session.jsonl")),
            &grade_engine::SessionFilter::All,
        );
        match (pack, sessions) {
            (Ok(pack), Ok(mut sessions)) if !sessions.is_empty() => (pack, sessions.remove(0)),
            _ => {
                // Not an engine finding: the target cannot run without its example.
                eprintln!("the trajectory example does not load");
                std::process::exit(2);
            }
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let references = match References::parse(text, "fuzz.jsonl") {
        Ok(references) => references,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let (pack, session) = example();
    // Each reference read, as the example session's own: matched against its real calls.
    for id in text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|v| v.get("sessionId")?.as_str().map(str::to_owned))
        .take(4)
    {
        let Some(trajectory) = references.get(&id) else {
            continue;
        };
        let options = GradeOptions {
            now: 0,
            explain: true,
            references: Some(Arc::new(References::from_sessions([(
                session.id.clone(),
                trajectory.clone(),
            )]))),
        };
        let graded = pack.grade(session, &options);
        let Ok(result) = graded else {
            panic!("a reference that reads must grade: {graded:?}");
        };
        for (name, d) in &result.dimensions {
            assert!(
                d.score.0.is_finite() && d.score.0 >= 0.0 && d.score.0 <= d.max.0,
                "{name}: {} of {}",
                d.score.0,
                d.max.0
            );
        }
        assert!(result.percent.is_none_or(|p| p.0.is_finite()));
    }
});
