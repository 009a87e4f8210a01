//! A CLEO audit log (JSONL) read and graded with both CLEO packs.
#![no_main]

use grade_engine::{read_source, SessionFilter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = grade_fuzz::scratch_file(data, "jsonl");
    if let Ok(read) = read_source(&path, Some(&grade_engine::source::CleoJsonl), &SessionFilter::All) {
        grade_fuzz::grade_all(&read.sessions, &["cleo-v1", "cleo-v2"]);
    }
});
