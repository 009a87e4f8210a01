//! One CLEO audit line read for a pack that reads only some of it: the skimming reader
//! (which skips what is not kept, checking it is JSON) and serde must take and refuse the
//! same lines, with the same error, and agree on every field kept. The first two bytes
//! choose what is kept and checked; the rest is the line.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [a, b, rest @ ..] = data else { return };
    if let Ok(line) = std::str::from_utf8(rest) {
        if let Err(difference) = grade_engine::fuzzing::cleo_projection_agrees_with_serde(line, *a, *b) {
            panic!("the skimming reader and serde disagree: {difference}");
        }
    }
});
