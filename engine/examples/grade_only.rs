//! Grading cost alone, without reading: reads a log once, then grades every session with each
//! pack given, several times, and prints the best time per pack (per entry) and the ratio of
//! each pack to the first.
//!
//! ```text
//! cargo run --release -p grade-engine --example grade_only -- LOG PACK [PACK...]
//! ```
//!
//! `PASSES=N` sets the timed passes per pack (default 5); `GRADE_ALLOW_PLUGINS=1` lets packs
//! load their plugins, to time a native function against its declarative twin.

use std::time::{Duration, Instant};

use grade_engine::{GradeOptions, SessionFilter};
use rayon::prelude::*;

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: grade_engine::CountingAllocator<tikv_jemallocator::Jemalloc> =
    grade_engine::CountingAllocator(tikv_jemallocator::Jemalloc);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // As the `grade` binary does: script runs keep to the threads' own stacks.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(grade_engine::SCRIPT_THREAD_STACK)
        .build_global();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [log, packs @ ..] = args.as_slice() else {
        eprintln!("usage: grade_only LOG PACK [PACK...]");
        std::process::exit(2);
    };
    let sessions = grade_engine::read_sessions(log.as_ref(), &SessionFilter::All)?;
    let entries: usize = sessions.iter().map(|s| s.entries.len()).sum();
    let options = GradeOptions {
        now: 0,
        explain: false,
        references: None,
    };
    let policy = grade_engine::plugin::PluginPolicy {
        allow: std::env::var("GRADE_ALLOW_PLUGINS").is_ok_and(|v| v == "1"),
        how_to_allow: Some("`GRADE_ALLOW_PLUGINS=1`"),
    };
    let mut first: Option<Duration> = None;
    for spec in packs {
        let mut best = Duration::MAX;
        let passes: usize = std::env::var("PASSES")
            .ok()
            .and_then(|p| p.parse().ok())
            .unwrap_or(5);
        for _ in 0..passes {
            // A pack compiled afresh each time: what scripts remember starts empty, as in a run.
            let pack = grade_engine::load_pack_with(spec, &[], policy)?;
            // Owned sessions, as `grade --all` grades them (the copy is not timed).
            let copy = sessions.clone();
            let started = Instant::now();
            let flags = copy
                .into_par_iter()
                .map(|s| pack.grade_owned(s, None, &options).map(|r| r.flags.len()))
                .try_reduce(|| 0, |a, b| Ok(a + b))?;
            std::hint::black_box(flags);
            best = best.min(started.elapsed());
        }
        let ratio = first.map_or(1.0, |f| best.as_secs_f64() / f.as_secs_f64());
        first.get_or_insert(best);
        println!(
            "{spec}\t{:.3} s\t{:.0} ns/entry\t{ratio:.2}x\t({} sessions, {entries} entries)",
            best.as_secs_f64(),
            best.as_nanos() as f64 / entries as f64,
            sessions.len()
        );
    }
    Ok(())
}
