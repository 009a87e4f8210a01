//! Criterion benchmarks of the engine on generated CLEO traffic (`grade-bench`, seed 1).
//!
//! - `read/*`: reading a log into sessions (per entry), JSONL and tasks.db.
//! - `grade/*`: grading already-read sessions with cleo-v1 and with its Rhai form
//!   (`tests/packs/cleo-v1-scripted`), per entry.
//! - `rule/<kind>/{declarative,rhai}`: one rule of each kind alone in a pack, in both forms.
//! - `trajectory/<metric>`: a session of 1,000 tool calls graded against a reference of
//!   1,000 calls (five tool names, overlapping arguments), per session.
//!
//! `cargo bench -p grade-engine --bench engine` (add `-- rule/` to run a group).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use grade_bench::{generate, GenConfig};
use grade_engine::{
    compile_pack, CompiledPack, GradeOptions, PackFiles, PackOrigin, Session, SessionFilter,
};

const SESSIONS: usize = 1_000;
const ENTRIES: usize = 20_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Data {
    _dir: tempfile::TempDir,
    jsonl: PathBuf,
    db: PathBuf,
    sessions: Vec<Session>,
}

fn data() -> Data {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let traffic = generate(&GenConfig::new(SESSIONS, ENTRIES, 1));
    let jsonl = dir.path().join("audit.jsonl");
    let db = dir.path().join("tasks.db");
    traffic.write_jsonl(&jsonl).expect("JSONL written");
    traffic.write_cleo_db(&db).expect("tasks.db written");
    let sessions =
        grade_engine::read_sessions(&jsonl, &SessionFilter::All).expect("generated log reads");
    Data {
        _dir: dir,
        jsonl,
        db,
        sessions,
    }
}

fn options() -> GradeOptions {
    GradeOptions {
        now: 0,
        explain: false,
        references: None,
    }
}

/// Grades owned sessions, as `grade --all` does (scripts then get the entries without a
/// copy); the copy made for each iteration is not timed.
fn grade_all(pack: &CompiledPack, sessions: Vec<Session>) -> usize {
    let options = options();
    sessions
        .into_iter()
        .map(|s| {
            pack.grade_owned(s, None, &options)
                .expect("grades")
                .flags
                .len()
        })
        .sum()
}

fn read(c: &mut Criterion) {
    let d = data();
    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements(ENTRIES as u64));
    g.bench_function("jsonl", |b| {
        b.iter(|| {
            grade_engine::read_sessions(black_box(&d.jsonl), &SessionFilter::All)
                .unwrap()
                .len()
        })
    });
    g.bench_function("cleo_db", |b| {
        b.iter(|| {
            grade_engine::read_sessions(black_box(&d.db), &SessionFilter::All)
                .unwrap()
                .len()
        })
    });
    g.bench_function("jsonl_streamed_graded", |b| {
        let pack = grade_engine::load_pack("cleo-v1", &[]).unwrap();
        let options = options();
        b.iter(|| {
            grade_engine::source::map_sessions(
                &d.jsonl,
                &SessionFilter::All,
                &grade_engine::ReadOptions::default(),
                None,
                |s| pack.grade(&s, &options),
            )
            .unwrap()
            .results
            .len()
        })
    });
    g.finish();
}

fn grade(c: &mut Criterion) {
    let d = data();
    let declarative = grade_engine::load_pack("cleo-v1", &[]).unwrap();
    let scripted = grade_engine::load_pack(
        root()
            .join("tests/packs/cleo-v1-scripted")
            .to_str()
            .unwrap(),
        &[],
    )
    .unwrap();
    let mut g = c.benchmark_group("grade");
    g.throughput(Throughput::Elements(ENTRIES as u64));
    g.bench_function("cleo-v1/declarative", |b| {
        b.iter_batched(
            || d.sessions.clone(),
            |s| grade_all(&declarative, black_box(s)),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("cleo-v1/rhai", |b| {
        b.iter_batched(
            || d.sessions.clone(),
            |s| grade_all(&scripted, black_box(s)),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// cleo-v1's selectors and metrics, and one dimension holding `rule`.
fn single_rule_pack(rule_yaml: &str, script: Option<(&str, String)>) -> CompiledPack {
    let text = std::fs::read_to_string(root().join("rubrics/cleo-v1/rubric.yaml")).unwrap();
    let head = &text[..text.find("\ndimensions:").unwrap()];
    let head = head.replacen("id: cleo-v1", "id: single-rule", 1);
    let yaml = format!(
        "{head}\ndimensions:\n  - id: only\n    max: 20\n    start: 20\n    rules:\n{rule_yaml}"
    );
    let mut files = BTreeMap::new();
    files.insert("rubric.yaml".to_owned(), yaml);
    if let Some((name, source)) = script {
        files.insert(name.to_owned(), source);
    }
    compile_pack(&PackFiles {
        origin: PackOrigin::Folder(PathBuf::from("single-rule")),
        files,
    })
    .unwrap_or_else(|e| panic!("bench pack compiles: {e}"))
}

/// Each rule kind of cleo-v1, declaratively and as the Rhai script of the scripted pack.
const RULES: &[(&str, &str, &str)] = &[
    (
        "count",
        "      - id: r\n        doc: d\n        when: { count: session_end }\n        points: 10\n        evidence: session.end called\n        otherwise:\n          flag: session.end never called (always end sessions when done)\n",
        "session_ended.rhai",
    ),
    (
        "first_before_first",
        "      - id: r\n        doc: d\n        cases:\n          - when: { count: session_list, at_most: 0 }\n            flag: session.list never called (check existing sessions before starting)\n          - when: { first: session_list, before_first: task_op }\n            points: 10\n            evidence: session.list called before first task op\n          - flag: session.list called after task ops (should check sessions first)\n",
        "session_list_first.rhai",
    ),
    (
        "metric_scaled",
        "      - id: r\n        doc: d\n        cases:\n          - when: { count: task_discovery, at_most: 0 }\n            points: 10\n            evidence: No discovery calls needed\n          - when: { metric: find_ratio, at_least: 0.8 }\n            points: 15\n            evidence: \"find:list ratio {percent.find_ratio}% >= 80%\"\n          - points: { metric: find_ratio, times: 15 }\n            flag: tasks.list used {count.task_list}x (prefer tasks.find for discovery)\n",
        "find_over_list.rhai",
    ),
    (
        "for_each_field",
        "      - id: r\n        doc: d\n        for_each: task_added_without_description\n        points: -5\n        flag: \"tasks.add without description (taskId: {entry.metadata.taskId|unknown})\"\n",
        "add_without_description.rhai",
    ),
    (
        "for_each_followed_by",
        "      - id: r\n        doc: d\n        for_each: not_found_error\n        cases:\n          - when: { followed_by: recovery_lookup, within: 4 }\n            evidence: E_NOT_FOUND followed by recovery lookup\n          - points: -5\n            flag: E_NOT_FOUND ({entry.domain}.{entry.operation}) not followed by recovery lookup\n",
        "not_found_recovery.rhai",
    ),
];

fn rules(c: &mut Criterion) {
    let d = data();
    let mut g = c.benchmark_group("rule");
    g.throughput(Throughput::Elements(ENTRIES as u64));
    for (kind, yaml, script) in RULES {
        let declarative = single_rule_pack(yaml, None);
        let source =
            std::fs::read_to_string(root().join("tests/packs/cleo-v1-scripted").join(script))
                .unwrap();
        let rhai = single_rule_pack(
            &format!("      - id: r\n        doc: d\n        script: {script}\n"),
            Some((script, source)),
        );
        // Both forms must agree before their costs are compared.
        let options = options();
        for s in d.sessions.iter().take(200) {
            let a = declarative.grade(s, &options).unwrap();
            let b = rhai.grade(s, &options).unwrap();
            assert_eq!(
                (a.total_score, &a.flags),
                (b.total_score, &b.flags),
                "{kind} differs on {}",
                s.id
            );
        }
        g.bench_function(format!("{kind}/declarative"), |b| {
            b.iter_batched(
                || d.sessions.clone(),
                |s| grade_all(&declarative, black_box(s)),
                BatchSize::LargeInput,
            )
        });
        g.bench_function(format!("{kind}/rhai"), |b| {
            b.iter_batched(
                || d.sessions.clone(),
                |s| grade_all(&rhai, black_box(s)),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

/// A session of `n` tool calls and a reference of `n` calls drawn from five names and a few
/// argument values, so that names repeat and arguments overlap (a worst case for matching:
/// every call of a name is a candidate for every call of that name).
fn trajectory_pair(n: usize) -> (Session, grade_engine::reference::References) {
    let call = |i: usize, salt: usize| {
        let name = ["Read", "Edit", "Bash", "Grep", "Glob"][(i * 7 + salt) % 5];
        serde_json::json!({"name": name, "args": {"path": format!("f{}", (i * 13 + salt) % 40), "n": (i + salt) % 3}})
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("calls.jsonl");
    let lines: Vec<String> = (0..n)
        .map(|i| {
            let c = call(i, 0);
            serde_json::json!({
                "timestamp": format!("2026-03-01T09:{:02}:{:02}.000Z", i / 60 % 60, i % 60),
                "sessionId": "s",
                "domain": "tool",
                "operation": c["name"],
                "params": c["args"],
                "result": {"success": true},
            })
            .to_string()
        })
        .collect();
    std::fs::write(&log, lines.join("\n")).expect("log written");
    let session = grade_engine::read_sessions(&log, &SessionFilter::All)
        .expect("the log reads")
        .remove(0);
    let calls: Vec<serde_json::Value> = (0..n).map(|i| call(i, 1)).collect();
    let line = serde_json::json!({"sessionId": "s", "toolCalls": calls}).to_string();
    let references = grade_engine::reference::References::parse(&line, "bench").expect("valid");
    (session, references)
}

fn trajectory(c: &mut Criterion) {
    let (session, references) = trajectory_pair(1_000);
    let options = GradeOptions {
        references: Some(std::sync::Arc::new(references)),
        ..options()
    };
    let mut g = c.benchmark_group("trajectory");
    for (name, metric) in [
        ("f1_contains", "tool_f1: { args: contains }"),
        ("unordered_exact", "trajectory_match: { mode: unordered }"),
        ("sequence_ignore", "tool_sequence: { args: ignore }"),
    ] {
        let yaml = format!("id: t\nversion: '1'\nname: T\nmetrics:\n  m: {{ {metric} }}\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - {{ id: r, doc: d, points: {{ metric: m, times: 10 }} }}\n");
        let pack = compile_pack(&PackFiles {
            origin: PackOrigin::Folder(PathBuf::from("trajectory")),
            files: BTreeMap::from([("rubric.yaml".to_owned(), yaml)]),
        })
        .unwrap_or_else(|e| panic!("bench pack compiles: {e}"));
        g.bench_function(name, |b| {
            b.iter(|| pack.grade(black_box(&session), &options).unwrap())
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = read, grade, rules, trajectory
}
criterion_main!(benches);
