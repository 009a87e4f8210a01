//! What a run may hold and allocate: counted by the allocator, checked at every operation and,
//! for the built-ins that can build far more than they are given, before they do.

use std::collections::HashMap;
use std::sync::Arc;

use super::{ScriptHost, SessionData};

fn empty_session() -> Arc<SessionData> {
    Arc::new(SessionData {
        session_id: "s".to_owned(),
        entries: Arc::new(Vec::new()),
        hits: Vec::new(),
        metrics: Vec::new(),
        selector_ids: Arc::new(HashMap::new()),
        metric_ids: Arc::new(HashMap::new()),
    })
}

/// A host running `source`, whose runs may hold `held` and allocate `all` bytes.
fn host(source: &str, held: u64, all: u64) -> ScriptHost {
    let mut host = ScriptHost::new();
    assert!(
        host.max_memory.is_some(),
        "the engine's tests count allocations"
    );
    host.max_memory = Some((held, all));
    host.compile("rule.rhai", source).expect("compiles");
    host
}

fn outcome(host: &ScriptHost) -> Result<f64, String> {
    let data = empty_session();
    host.run(0, &data.observable(), 0.0, &mut || Arc::clone(&data))
        .map(|o| o.points)
}

const HELD: &str = "rule.rhai:1: its values take more than 16 MiB of memory";

#[test]
fn an_array_past_a_million_items_is_built() {
    // Rhai's size limit refused an array of more than 1,048,576 items, which a session of
    // that many entries needs; what bounds an array now is the memory it takes.
    let host = host(
        "let a = []; a.pad(1100000, 0); a.push(1); #{ points: a.len() }",
        128 << 20,
        1 << 30,
    );
    assert_eq!(outcome(&host), Ok(1_100_001.0));
}

#[test]
fn a_session_past_a_million_entries_is_walked() {
    // `session.entries` of more than 1,048,576 entries was refused by Rhai's array size limit
    // (`size of array/BLOB too large`), so every script that walks a session failed on it.
    let entry = crate::entry::Entry {
        timestamp: "2026-03-01T00:00:00Z".into(),
        instant: 1_772_323_200_000,
        session_id: "s".into(),
        domain: "tasks".into(),
        operation: "show".into(),
        params: crate::entry::Params::new(),
        result: crate::entry::Outcome {
            success: true,
            exit_code: 0,
            duration: 1.0,
        },
        metadata: crate::entry::Metadata::with_source("mcp"),
        error: None,
        origin: crate::entry::Origin::UNKNOWN,
    };
    let data = Arc::new(SessionData {
        session_id: "s".to_owned(),
        entries: Arc::new(vec![entry; 1_100_000]),
        hits: Vec::new(),
        metrics: Vec::new(),
        selector_ids: Arc::new(HashMap::new()),
        metric_ids: Arc::new(HashMap::new()),
    });
    let mut host = ScriptHost::new();
    host.compile(
        "rule.rhai",
        "let n = 0; let all = [];\nfor e in session.entries { n += 1; all.push(e); }\n#{ points: n + all.len() }",
    )
    .expect("compiles");
    let outcome = host
        .run(0, &data.observable(), 0.0, &mut || Arc::clone(&data))
        .map(|o| o.points);
    assert_eq!(outcome, Ok(2_200_000.0));
}

#[test]
fn a_value_doubled_until_memory_runs_out_stops_the_run() {
    for source in [
        "let s = \"x\"; loop { s += s; }",
        "let a = [1]; loop { a += a; }",
        "let a = [1]; loop { a.append(a); }",
        "let m = #{ a: 1 }; let i = 0; loop { m[`${i}`] = m; i += 1; }",
    ] {
        let host = host(source, 16 << 20, 1 << 40);
        assert_eq!(outcome(&host), Err(HELD.to_owned()), "{source}");
    }
}

#[test]
fn built_ins_that_build_more_than_they_are_given_check_the_room_first() {
    // Each would take gigabytes or terabytes in one operation, past any look between two.
    for source in [
        "let a = []; a.pad(1000000000000, 0);",
        "let a = []; a.pad(10000, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]); let b = []; b.pad(1000000, a);",
        "let s = \"\"; s.pad(1000000000000, 'x');",
        "let s = \"\"; s.pad(1000000000000, \"xyz\");",
        "let b = blob(1000000000000);",
        "let b = blob(1000000000000, 7);",
        "let b = blob(); b.pad(1000000000000, 7);",
        "let s = \"a\"; s.pad(4000000, 'a'); s.replace(\"a\", s);",
        "let s = \"a\"; s.pad(4000000, 'a'); s.replace('a', s);",
        "let s = \"a\"; s.pad(4000000, 'a'); let p = s.split(\"\");",
        "let s = \"a\"; s.pad(4000000, 'a'); let p = s.split('a');",
        "let s = \"a \"; s.pad(4000000, \"a \"); let p = s.split();",
        "let s = \"a\"; s.pad(4000000, 'a'); let p = s.split_rev(\"\");",
        "let s = \"a\"; s.pad(4000000, 'a'); let p = s.to_chars();",
    ] {
        let host = host(source, 16 << 20, 1 << 40);
        assert_eq!(outcome(&host), Err(HELD.to_owned()), "{source}");
    }
}

#[test]
fn the_guarded_built_ins_do_what_rhais_do() {
    let body = r#"
        let a = [1]; a.pad(3, 0); a.pad(-1, 9);
        let s = "ab"; s.pad(4, '-'); let t = "x"; t.pad(6, "yz"); let u = "abc"; u.pad(2, '-');
        let b = blob(2, 0x1ff); b.pad(3, 1); let z = blob(-1);
        let r = "a.b.a"; r.replace("a", "cc"); let q = "aa"; q.replace('a', "b");
        let w = "ab"; w.replace("b", 'z'); let e = "ab"; e.replace("", "-");
        let parts = [
            "a b  c".split(), "a,b,,c".split(","), "a,b,c".split(",", 2), "abc".split(""),
            "a-b-c".split('-'), "a-b-c".split('-', 2), "a,b,c".split_rev(","),
            "a,b,c".split_rev(",", 2), "a-b-c".split_rev('-'), "a-b-c".split_rev('-', 2),
            "a,b".split(",", 0), "a-b".split_rev('-', 1), "abc".split_rev(""),
            "héllo".to_chars(), "".to_chars(), "".split(","), "".split(), "abc".split("x"),
        ];
        const C = "a b";
        let from_constant = C.split();
        let out = `${a} ${s} ${t} ${u} ${b} ${z} ${r} ${q} ${w} ${e} ${parts} ${from_constant}`;
    "#;
    let host = host(
        &format!("{body}\n#{{ points: 1, evidence: out }}"),
        128 << 20,
        1 << 30,
    );
    let data = empty_session();
    let ours = host
        .run(0, &data.observable(), 0.0, &mut || Arc::clone(&data))
        .expect("runs")
        .evidence;
    // Rhai's own built-ins, on an engine without limits or guards.
    let mut plain = rhai::Engine::new_raw();
    plain.register_global_module(rhai::packages::Package::as_shared_module(
        &rhai::packages::StandardPackage::new(),
    ));
    let theirs: String = plain.eval(&format!("{body}\nout")).expect("runs");
    assert_eq!(ours, vec![theirs]);
}

#[test]
fn copying_a_large_array_again_and_again_stops_the_run() {
    // Each `let b = a` copies a million items, one operation each time: the loop ran for
    // minutes within the operation budget. What it allocates in all now stops it.
    let host = host(
        "let a = []; a.pad(1000000, 0);\nfor i in 0..1000 { let b = a; b.push(1); }\n#{ points: 1 }",
        128 << 20,
        256 << 20,
    );
    assert_eq!(
        outcome(&host),
        Err("rule.rhai:2: it allocated more than 256 MiB in all (each copy of an array, map or string, as `let b = a` makes, counts again)".to_owned())
    );
}

#[test]
fn sleep_is_refused() {
    for source in ["sleep(1000000.0);", "sleep(1000000);"] {
        let host = host(source, 128 << 20, 1 << 30);
        let err = outcome(&host).expect_err("refused");
        assert!(err.contains("`sleep` is not available to scripts"), "{err}");
    }
}

#[test]
fn without_counted_allocations_rhais_size_limits_bound_a_run() {
    // An embedder that does not install the counting allocator keeps Rhai's limits: safe,
    // and quadratic in the size of the values a script builds.
    let mut host = ScriptHost::bounded(false);
    assert!(host.max_memory.is_none());
    host.compile(
        "rule.rhai",
        "let a = []; a.pad(2000000, 0);\n#{ points: 1 }",
    )
    .expect("compiles");
    let err = outcome(&host).expect_err("refused");
    assert!(err.contains("size of array"), "{err}");
    let mut host = ScriptHost::bounded(false);
    host.compile("rule.rhai", "let s = \"x\"; loop { s += s; }")
        .expect("compiles");
    let err = outcome(&host).expect_err("refused");
    assert!(err.contains("length of string"), "{err}");
}
