//! The judgment parser: a judge's reply (prose, a fenced block or bare JSON) checked
//! against `langfuse-v1`'s judged dimensions, then used to grade a session.
#![no_main]

use grade_engine::judgment::{find_judgment_json, parse_judgment};
use grade_engine::GradeOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(reply) = std::str::from_utf8(data) else {
        return;
    };
    let pack = grade_fuzz::builtin("langfuse-v1");
    let Ok(json) = find_judgment_json(reply) else {
        return;
    };
    if let Ok(judgment) = parse_judgment(json, "fuzz", pack) {
        let options = GradeOptions {
            now: 0,
            explain: true,
            references: None,
        };
        for session in grade_fuzz::example_sessions().iter().take(2) {
            let _ = pack.grade_with(session, Some(&judgment), &options);
        }
    }
});
