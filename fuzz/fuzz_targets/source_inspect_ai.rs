//! An inspect_ai eval log (an `.eval` zip or a `.json` document) read and graded: the zip
//! reader and its caps, the events and the messages of every sample.
#![no_main]

use grade_engine::{read_source, SessionFilter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = grade_fuzz::scratch_file(data, "eval");
    if let Ok(read) = read_source(&path, Some(&grade_engine::source::InspectAi), &SessionFilter::All) {
        grade_fuzz::grade_all(&read.sessions, &["claude-code-v1"]);
    }
});
