//! A Codex CLI rollout (plain, or zstd-compressed when it starts with a zstd frame) read and graded with the tool-discipline pack.
#![no_main]

use grade_engine::{read_source, SessionFilter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = grade_fuzz::scratch_file(data, "jsonl");
    if let Ok(read) = read_source(&path, Some(&grade_engine::source::Codex), &SessionFilter::All) {
        grade_fuzz::grade_all(&read.sessions, &["claude-code-v1"]);
    }
});
