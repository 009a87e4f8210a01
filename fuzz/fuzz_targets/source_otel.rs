//! An OpenTelemetry trace export (OTLP JSON, Tempo, Jaeger, any-agent) read and graded.
#![no_main]

use grade_engine::{read_source, SessionFilter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = grade_fuzz::scratch_file(data, "json");
    if let Ok(read) = read_source(&path, Some(&grade_engine::source::Otel), &SessionFilter::All) {
        grade_fuzz::grade_all(&read.sessions, &["claude-code-v1"]);
    }
});
