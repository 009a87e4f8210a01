//! One CLEO audit line, and the same bytes as a `tasks.db` row's `details_json`: whatever
//! the fast reader takes, serde must read as the same entry, or the same params.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        if let Err(difference) = grade_engine::fuzzing::cleo_line_agrees_with_serde(line) {
            panic!("the fast reader and serde disagree: {difference}");
        }
        if let Err(difference) = grade_engine::fuzzing::params_agree_with_serde(line) {
            panic!("the fast params reader and serde disagree: {difference}");
        }
    }
});
