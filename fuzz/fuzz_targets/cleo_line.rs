//! One CLEO audit line, and the same bytes as a `tasks.db` row's `details_json`: whatever
//! the fast reader takes, serde must read as the same entry, or the same params; and
//! whatever line the full parse takes, the first pass's skim must find the session its
//! entry lands in.
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
        if let Err(difference) = grade_engine::fuzzing::cleo_skim_agrees_with_parse(line) {
            panic!("the skim and the parse disagree on the session: {difference}");
        }
    }
});
