//! Invariants of grading that hold for any session: scores stay within [0, max], and a
//! session's grade does not depend on other sessions interleaved with it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use grade_engine::entry::{Entry, Metadata, Outcome};
use grade_engine::{builtin_pack, compile_pack, GradeOptions, Session};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const DOMAINS: &[&str] = &[
    "session",
    "tasks",
    "admin",
    "tools",
    "skills",
    "orchestrate",
    "agent",
    "Session",
];
const OPERATIONS: &[&str] = &[
    "list",
    "end",
    "find",
    "show",
    "add",
    "exists",
    "complete",
    "help",
    "skill.show",
    "skill.list",
    "spawn",
    "delegate_task",
    "Find",
];

fn entry_strategy(session: &'static str) -> impl Strategy<Value = Entry> {
    (
        0usize..DOMAINS.len(),
        0usize..OPERATIONS.len(),
        any::<bool>(),
        prop_oneof![Just(0i64), Just(1), Just(4)],
        0i64..100_000,
        prop_oneof![
            Just(None),
            Just(Some("")),
            Just(Some("  ")),
            Just(Some("Fix it"))
        ],
        prop_oneof![
            Just(None),
            Just(Some("Task A")),
            Just(Some("task a ")),
            Just(Some("B"))
        ],
        prop_oneof![Just(None), Just(Some("T1")), Just(Some(""))],
        prop_oneof![
            Just(None),
            Just(Some("cleo_query")),
            Just(Some("query")),
            Just(Some("mutate"))
        ],
        prop_oneof![Just(None), Just(Some("lead")), Just(Some("worker"))],
    )
        .prop_map(
            move |(d, o, success, code, t, desc, title, parent, gateway, role)| {
                let mut params = Map::new();
                for (k, v) in [("description", desc), ("title", title), ("parent", parent)] {
                    if let Some(v) = v {
                        params.insert(k.to_owned(), json!(v));
                    }
                }
                let mut meta = Map::new();
                if let Some(g) = gateway {
                    meta.insert("gateway".into(), json!(g));
                }
                if let Some(r) = role {
                    meta.insert("role".into(), json!(r));
                }
                Entry {
                    timestamp: Default::default(),
                    instant: 1_772_400_000_000 + t * 1_000,
                    session_id: session.into(),
                    domain: DOMAINS[d].into(),
                    operation: OPERATIONS[o].into(),
                    params: params.into(),
                    result: Outcome {
                        success,
                        exit_code: if success { 0 } else { code },
                        duration: 1.0,
                    },
                    metadata: Metadata::from_map(meta, "mcp"),
                    error: None,
                    origin: grade_engine::entry::Origin::UNKNOWN,
                }
            },
        )
}

fn packs() -> Vec<grade_engine::CompiledPack> {
    ["cleo-v1", "cleo-v2"]
        .iter()
        .map(|id| compile_pack(&builtin_pack(id).expect("shipped")).expect("valid"))
        .collect()
}

/// cleo-v1 written in Rhai, remembering script outcomes across cases and not.
fn scripted_packs() -> &'static (grade_engine::CompiledPack, grade_engine::CompiledPack) {
    static PACKS: std::sync::OnceLock<(grade_engine::CompiledPack, grade_engine::CompiledPack)> =
        std::sync::OnceLock::new();
    PACKS.get_or_init(|| {
        let folder = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/packs/cleo-v1-scripted"
        );
        let remembering = grade_engine::load_pack(folder, &[]).expect("valid");
        let mut fresh = grade_engine::load_pack(folder, &[]).expect("valid");
        fresh.remember_script_outcomes(false);
        (remembering, fresh)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A script's remembered outcome, reused for a session that answers its probes alike,
    /// is the outcome a fresh run would have.
    #[test]
    fn remembered_script_outcomes_are_those_of_fresh_runs(entries in proptest::collection::vec(entry_strategy("s"), 0..40)) {
        let session = Session { id: "s".into(), entries, ..Session::default() };
        let (remembering, fresh) = scripted_packs();
        let options = GradeOptions { now: 0, explain: true , references: None,};
        for _ in 0..2 {
            prop_assert_eq!(
                remembering.grade(&session, &options).expect("grades"),
                fresh.grade(&session, &options).expect("grades")
            );
        }
    }

    #[test]
    fn every_score_stays_within_zero_and_its_max(entries in proptest::collection::vec(entry_strategy("s"), 0..60)) {
        let session = Session { id: "s".into(), entries, ..Session::default() };
        for pack in packs() {
            let r = pack.grade(&session, &GradeOptions { now: 0, explain: true , references: None,}).expect("grades");
            let mut sum = 0.0;
            for (id, d) in &r.dimensions {
                prop_assert!(d.score.0 >= 0.0 && d.score.0 <= d.max.0, "{} {id}: {} of {}", pack.id, d.score.0, d.max.0);
                sum += d.score.0;
            }
            prop_assert_eq!(r.total_score.0, sum);
            prop_assert!(r.total_score.0 <= r.max_score.0);
            prop_assert!(r.percent.is_none_or(|p| (0.0..=100.0).contains(&p.0)));
            let json: Value = serde_json::to_value(&r).expect("serialises");
            prop_assert!(json["grade"].is_string());
        }
    }

    /// Interleaving a session with another in the source changes nothing about its grade.
    #[test]
    fn unrelated_sessions_do_not_change_a_grade(
        mine in proptest::collection::vec(entry_strategy("mine"), 1..30),
        other in proptest::collection::vec(entry_strategy("other"), 0..30),
        seed in any::<u64>(),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |path: &std::path::Path, entries: &[&Entry]| {
            let text: String = entries.iter().map(|e| {
                let mut v = serde_json::to_value(e).expect("entry serialises");
                v["timestamp"] = json!(grade_engine::time::format_iso_millis(e.instant));
                format!("{v}\n")
            }).collect();
            std::fs::write(path, text).expect("write");
        };
        let alone: Vec<&Entry> = mine.iter().collect();
        // A deterministic interleaving that keeps each session's own order.
        let mut mixed = Vec::new();
        let (mut a, mut b, mut state) = (0, 0, seed | 1);
        while a < mine.len() || b < other.len() {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            if b >= other.len() || (a < mine.len() && state % 2 == 0) { mixed.push(&mine[a]); a += 1 } else { mixed.push(&other[b]); b += 1 }
        }
        write(&dir.path().join("alone.jsonl"), &alone);
        write(&dir.path().join("mixed.jsonl"), &mixed);
        let filter = grade_engine::SessionFilter::only(["mine"]);
        let s1 = grade_engine::read_sessions(&dir.path().join("alone.jsonl"), &filter).expect("reads");
        let s2 = grade_engine::read_sessions(&dir.path().join("mixed.jsonl"), &filter).expect("reads");
        for pack in packs() {
            let g1 = pack.grade(&s1[0], &GradeOptions { now: 0, explain: false , references: None,}).expect("grades");
            let g2 = pack.grade(&s2[0], &GradeOptions { now: 0, explain: false , references: None,}).expect("grades");
            prop_assert_eq!(g1, g2);
        }
    }
}

#[test]
fn shipped_packs_compile_and_name_their_digest() {
    for pack in packs() {
        assert!(
            pack.digest.starts_with("sha256:") && pack.digest.len() == 71,
            "{}",
            pack.digest
        );
        assert_eq!(pack.max_score(), 100.0);
    }
}
