//! What a streamed read costs without the results a caller keeps: streams a source as
//! `grade --all` does, grades every session with a pack, keeps only each session's score,
//! and prints the sessions, the entries and the time. Run under GNU time, the peak resident
//! set is the streaming machinery's (session table, waiting entries, read buffers), without
//! the result lines the binary holds until the source has read cleanly.
//!
//! ```text
//! cargo run --release -p grade-engine --example stream_only -- LOG [PACK]
//! ```

use std::time::Instant;

use grade_engine::source::{ReadOptions, SessionFilter};
use grade_engine::GradeOptions;

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
    let (log, pack) = match args.as_slice() {
        [log] => (log, "cleo-v1"),
        [log, pack] => (log, pack.as_str()),
        _ => {
            eprintln!("usage: stream_only LOG [PACK]");
            std::process::exit(2);
        }
    };
    let policy = grade_engine::plugin::PluginPolicy {
        allow: false,
        how_to_allow: None,
    };
    let pack = grade_engine::load_pack_with(pack, &[], policy)?;
    let options = GradeOptions {
        now: 0,
        explain: false,
        references: None,
    };
    let started = Instant::now();
    let mapped = grade_engine::source::map_sessions(
        log.as_ref(),
        &SessionFilter::All,
        &ReadOptions::default(),
        None,
        |session| {
            let entries = session.entries.len();
            pack.grade_owned(session, None, &options)
                .map(|r| (r.total_score, entries))
        },
    )?;
    let entries: usize = mapped.results.iter().map(|(_, n)| n).sum();
    println!(
        "{} sessions, {entries} entries, {:.3} s",
        mapped.results.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
