//! How fast general JSON parsers read CLEO audit lines, against `grade`'s own reading: the
//! measurement behind docs/performance-history.md's "a SIMD parser" section. One thread, the
//! best of five runs over lines already in memory.
//!
//! ```text
//! cd bench/parsers && cargo run --release -- ../../target/bench-data/100k.jsonl
//! ```
//!
//! - `grade`: the CLEO JSONL format's whole read of the log's bytes, already in memory, into
//!   owned entries grouped by session: what a run's second pass builds (on a log of 100,000
//!   lines they all stay in memory; on a larger one page faults count too);
//! - `serde_json`, `sonic-rs`, `simd-json`: each parser's serde reading of a line into a typed
//!   entry whose strings borrow from the line and whose `params` is a `serde_json::Value`;
//! - `simd-json tape`: simd-json's tape of the line alone, no entry built;
//! - a loop counting the line's quotes: the floor of touching its bytes.

use std::time::{Duration, Instant};

use grade_engine::source::SourceFormat as _;
use serde::Deserialize;

// The allocator the `grade` binary uses, for every parser alike.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[allow(dead_code, reason = "the fields are parsed to measure parsing, never read")]
#[derive(Deserialize)]
struct Outcome {
    success: bool,
    #[serde(rename = "exitCode")]
    exit_code: Option<i64>,
    duration: Option<f64>,
}

#[allow(dead_code, reason = "the fields are parsed to measure parsing, never read")]
#[derive(Deserialize)]
struct Metadata<'a> {
    #[serde(borrow)]
    source: Option<&'a str>,
    #[serde(borrow)]
    gateway: Option<&'a str>,
    #[serde(rename = "taskId", borrow)]
    task_id: Option<&'a str>,
    #[serde(rename = "userId", borrow)]
    user_id: Option<&'a str>,
    #[serde(borrow)]
    role: Option<&'a str>,
}

#[allow(dead_code, reason = "the fields are parsed to measure parsing, never read")]
#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow)]
    timestamp: &'a str,
    #[serde(rename = "sessionId", borrow)]
    session_id: &'a str,
    #[serde(borrow)]
    domain: &'a str,
    #[serde(borrow)]
    operation: &'a str,
    params: Option<serde_json::Value>,
    result: Outcome,
    #[serde(borrow)]
    metadata: Option<Metadata<'a>>,
    #[serde(borrow)]
    error: Option<&'a str>,
}

/// One way of reading every line; returns a number that depends on what it read, so that the
/// reading is not optimized away.
type Reading<'a> = Box<dyn FnMut() -> usize + 'a>;

fn best_of_five(mut run: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut check = 0;
    for _ in 0..5 {
        let started = Instant::now();
        check = run();
        best = best.min(started.elapsed());
    }
    (best, check)
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: grade-parsers-bench LOG.jsonl");
        std::process::exit(2);
    };
    let data = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("cannot read `{path}`: {e}");
        std::process::exit(2);
    });
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap_or_else(|e| panic!("a thread pool of one: {e}"));
    let mut scratch = Vec::with_capacity(1024);
    let mut buffers = simd_json::Buffers::new(1024);
    let runs: Vec<(&str, Reading<'_>)> = vec![
        (
            "grade (owned entries, by session)",
            Box::new(|| {
                one.install(|| {
                    let input = grade_engine::source::Input::Bytes {
                        name: path.as_ref(),
                        bytes: &data,
                    };
                    let read = grade_engine::source::CleoJsonl
                        .read(
                            &input,
                            &grade_engine::source::SessionFilter::All,
                            &grade_engine::source::ReadOptions::default(),
                        )
                        .unwrap_or_else(|e| panic!("{e}"));
                    read.sessions.iter().map(|s| s.entries.len()).sum()
                })
            }),
        ),
        (
            "serde_json (typed, borrowed)",
            Box::new(|| {
                lines
                    .iter()
                    .map(|l| serde_json::from_slice::<Entry>(l).map_or(0, |e| e.domain.len()))
                    .sum()
            }),
        ),
        (
            "sonic-rs (typed, borrowed)",
            Box::new(|| {
                lines
                    .iter()
                    .map(|l| sonic_rs::from_slice::<Entry>(l).map_or(0, |e| e.domain.len()))
                    .sum()
            }),
        ),
        (
            "simd-json (typed, borrowed)",
            Box::new(|| {
                let mut n = 0;
                for l in &lines {
                    scratch.clear();
                    scratch.extend_from_slice(l);
                    n += simd_json::serde::from_slice::<Entry>(&mut scratch)
                        .map_or(0, |e| e.domain.len());
                }
                n
            }),
        ),
        (
            "simd-json tape (no entry)",
            Box::new(|| {
                let mut n = 0;
                for l in &lines {
                    let mut line = l.to_vec();
                    n += simd_json::to_tape_with_buffers(&mut line, &mut buffers)
                        .map_or(0, |t| t.0.len());
                }
                n
            }),
        ),
        (
            "a loop counting quotes (no parse)",
            Box::new(|| lines.iter().map(|l| quotes(l)).sum()),
        ),
    ];
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    println!(
        "{} lines, {:.0} bytes a line, one thread, best of 5",
        lines.len(),
        bytes as f64 / lines.len() as f64
    );
    println!("| reading | ns a line | MB/s | check |");
    println!("|---|---|---|---|");
    for (name, mut run) in runs {
        let (took, check) = best_of_five(&mut run);
        println!(
            "| {name} | {:.0} | {:.0} | {check} |",
            took.as_nanos() as f64 / lines.len() as f64,
            bytes as f64 / took.as_secs_f64() / 1e6
        );
    }
}

fn quotes(line: &[u8]) -> usize {
    line.iter().filter(|&&b| b == b'"').count()
}
