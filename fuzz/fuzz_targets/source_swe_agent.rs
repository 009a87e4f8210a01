//! A SWE-agent trajectory read and graded with the tool-discipline pack.
#![no_main]

use grade_engine::{read_source, SessionFilter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = grade_fuzz::scratch_file(data, "traj");
    if let Ok(read) = read_source(&path, Some(&grade_engine::source::SweAgent), &SessionFilter::All) {
        grade_fuzz::grade_all(&read.sessions, &["claude-code-v1"]);
    }
});
