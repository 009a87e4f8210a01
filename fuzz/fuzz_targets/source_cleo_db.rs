//! A CLEO `tasks.db` (any bytes, so mostly SQLite's own header checks) read and graded.
#![no_main]

use grade_engine::{read_source, SessionFilter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = grade_fuzz::scratch_file(data, "db");
    if let Ok(read) = read_source(&path, Some(&grade_engine::source::CleoDb), &SessionFilter::All) {
        grade_fuzz::grade_all(&read.sessions, &["cleo-v1", "cleo-v2"]);
    }
});
