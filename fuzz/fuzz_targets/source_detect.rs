//! Format detection on any bytes, then the detected reader, then every deterministic pack.
#![no_main]

use grade_engine::{read_source, SessionFilter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = grade_fuzz::scratch_file(data, "jsonl");
    if let Ok(read) = read_source(&path, None, &SessionFilter::All) {
        grade_fuzz::grade_all(&read.sessions, &["cleo-v1", "cleo-v2", "claude-code-v1"]);
    }
});
