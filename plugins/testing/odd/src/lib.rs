//! A plugin that gives the host what it must refuse: NaN and infinite values, half a point,
//! text that is not UTF-8, more evidence than a call may return, a text of an unknown kind,
//! entries with durations no session can have, and (when `GRADE_TEST_ODD_TWICE` is set when
//! it is loaded) a description naming a function or a source format twice. It is written
//! against the raw ABI, since the SDK can give none of these.
#![allow(
    unsafe_code,
    reason = "written against the raw C ABI on purpose, to hand the host what the SDK cannot"
)]

use grade_plugin::abi::{
    GradeCall, GradeFunction, GradeNewEntry, GradeOutput, GradePlugin, GradeSource,
    GradeSourceOutput, GradeStr, ABI_VERSION, KIND_CONDITION, KIND_METRIC, KIND_RULE, STATUS_OK,
    TEXT_EVIDENCE,
};

/// Bytes that are not UTF-8 (a lone continuation byte and an invalid lead byte).
const NOT_UTF8: &[u8] = b"bad \xff\xfe text";

fn give(out: *const GradeOutput, value: f64) -> i32 {
    // SAFETY: the host passes a valid output for the duration of the call.
    let out = unsafe { &*out };
    (out.value)(out.host, value);
    STATUS_OK
}

extern "C" fn nan_metric(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    give(out, f64::NAN)
}

extern "C" fn nan_condition(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    give(out, f64::NAN)
}

extern "C" fn infinite_rule(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    give(out, f64::NEG_INFINITY)
}

extern "C" fn half_value(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    give(out, 0.5)
}

extern "C" fn one_point(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    give(out, 1.0)
}

extern "C" fn bad_evidence(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    // SAFETY: as in `give`.
    let out = unsafe { &*out };
    (out.value)(out.host, 1.0);
    (out.text)(out.host, TEXT_EVIDENCE, GradeStr::bytes(NOT_UTF8));
    STATUS_OK
}

/// A point with 8 MiB of evidence in four texts, as a plugin gone wrong (or hostile) might.
extern "C" fn huge_evidence(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    // SAFETY: as in `give`.
    let out = unsafe { &*out };
    (out.value)(out.host, 1.0);
    let text = "x".repeat(2 << 20);
    for _ in 0..4 {
        (out.text)(out.host, TEXT_EVIDENCE, GradeStr::new(&text));
    }
    STATUS_OK
}

/// A point with a million short evidence texts.
extern "C" fn many_evidence(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    // SAFETY: as in `give`.
    let out = unsafe { &*out };
    (out.value)(out.host, 1.0);
    for _ in 0..1_000_000 {
        (out.text)(out.host, TEXT_EVIDENCE, GradeStr::new("again"));
    }
    STATUS_OK
}

/// A point naming the first entry two million times.
extern "C" fn many_entries(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    // SAFETY: as in `give`.
    let out = unsafe { &*out };
    (out.value)(out.host, 1.0);
    for _ in 0..2_000_000 {
        (out.entry)(out.host, 0);
    }
    STATUS_OK
}

/// A point with a text of kind 7, which the ABI does not define.
extern "C" fn unknown_text_kind(_: *const GradeCall, out: *const GradeOutput) -> i32 {
    // SAFETY: as in `give`.
    let out = unsafe { &*out };
    (out.value)(out.host, 1.0);
    (out.text)(
        out.host,
        7,
        GradeStr::new("evidence of a kind no host knows"),
    );
    STATUS_OK
}

extern "C" fn claims_nothing(_: GradeStr) -> u32 {
    0
}

/// Reads one entry whose `operation` is not UTF-8.
extern "C" fn read_bad_entry(_: GradeStr, _: GradeStr, out: *const GradeSourceOutput) -> i32 {
    // SAFETY: the host passes a valid output for the duration of the call.
    let out = unsafe { &*out };
    let entry = GradeNewEntry {
        session_id: GradeStr::new("s"),
        timestamp: GradeStr::new("2026-03-01T09:00:00.000Z"),
        domain: GradeStr::new("tasks"),
        operation: GradeStr::bytes(NOT_UTF8),
        success: 1,
        exit_code: 0,
        duration_ms: 1.0,
        error: GradeStr::EMPTY,
        params_json: GradeStr::EMPTY,
        metadata_json: GradeStr::EMPTY,
        line: 1,
    };
    (out.entry)(out.host, &entry)
}

/// Reads one entry of session `s` per line of the file, whose `duration_ms` is the line as
/// Rust parses a float (`12`, `NaN`, `inf`, `1e308`).
extern "C" fn read_durations(_: GradeStr, content: GradeStr, out: *const GradeSourceOutput) -> i32 {
    // SAFETY: the host passes a valid output for the duration of the call.
    let out = unsafe { &*out };
    let content: &[u8] = if content.ptr.is_null() {
        &[]
    } else {
        // SAFETY: and content of `len` bytes at `ptr`, alive as long.
        unsafe { std::slice::from_raw_parts(content.ptr, content.len) }
    };
    let text = String::from_utf8_lossy(content);
    for (n, line) in text.lines().enumerate() {
        let timestamp = format!("2026-03-01T09:00:{:02}.000Z", n % 60);
        let entry = GradeNewEntry {
            session_id: GradeStr::new("s"),
            timestamp: GradeStr::new(&timestamp),
            domain: GradeStr::new("tasks"),
            operation: GradeStr::new("find"),
            success: 1,
            exit_code: 0,
            duration_ms: line.trim().parse().unwrap_or(0.0),
            error: GradeStr::EMPTY,
            params_json: GradeStr::EMPTY,
            metadata_json: GradeStr::EMPTY,
            line: n as u64 + 1,
        };
        let status = (out.entry)(out.host, &entry);
        if status != STATUS_OK {
            return status;
        }
    }
    STATUS_OK
}

const fn function(
    name: &'static str,
    kind: u32,
    call: extern "C" fn(*const GradeCall, *const GradeOutput) -> i32,
) -> GradeFunction {
    GradeFunction {
        name: GradeStr::new(name),
        kind,
        doc: GradeStr::new("gives what a grade cannot hold"),
        fields: std::ptr::null(),
        field_count: 0,
        call,
    }
}

const fn source(name: &'static str) -> GradeSource {
    GradeSource {
        name: GradeStr::new(name),
        doc: GradeStr::new("one entry whose operation is not UTF-8"),
        detect: claims_nothing,
        read: read_bad_entry,
    }
}

const DURATIONS: GradeSource = GradeSource {
    name: GradeStr::new("odd-durations"),
    doc: GradeStr::new("an entry per line, its duration the line (`NaN`, `inf`, `1e308`)"),
    detect: claims_nothing,
    read: read_durations,
};

struct Table<T: 'static>(&'static [T]);
// SAFETY: the tables hold pointers to `'static` strings and functions only, never written.
unsafe impl<T> Sync for Table<T> {}

static FUNCTIONS: Table<GradeFunction> = Table(&[
    function("nan_metric", KIND_METRIC, nan_metric),
    function("nan_condition", KIND_CONDITION, nan_condition),
    function("infinite_rule", KIND_RULE, infinite_rule),
    function("half_value", KIND_RULE, half_value),
    function("one_point", KIND_RULE, one_point),
    function("bad_evidence", KIND_RULE, bad_evidence),
    function("huge_evidence", KIND_RULE, huge_evidence),
    function("many_evidence", KIND_RULE, many_evidence),
    function("many_entries", KIND_RULE, many_entries),
    function("unknown_text_kind", KIND_RULE, unknown_text_kind),
]);

static FUNCTIONS_TWICE: Table<GradeFunction> = Table(&[
    function("one_point", KIND_RULE, one_point),
    function("half_value", KIND_RULE, half_value),
    function("one_point", KIND_METRIC, nan_metric),
]);

static SOURCES: Table<GradeSource> = Table(&[source("odd-bytes"), DURATIONS]);
static SOURCES_TWICE: Table<GradeSource> = Table(&[source("odd-bytes"), source("odd-bytes")]);

struct Described(GradePlugin);
// SAFETY: as for `Table`.
unsafe impl Sync for Described {}

const fn described(
    functions: &'static Table<GradeFunction>,
    sources: &'static Table<GradeSource>,
) -> Described {
    Described(GradePlugin {
        name: GradeStr::new("odd"),
        version: GradeStr::new("0.0.1"),
        functions: functions.0.as_ptr(),
        function_count: functions.0.len(),
        sources: sources.0.as_ptr(),
        source_count: sources.0.len(),
    })
}

static PLAIN: Described = described(&FUNCTIONS, &SOURCES);
static FUNCTION_TWICE: Described = described(&FUNCTIONS_TWICE, &SOURCES);
static SOURCE_TWICE: Described = described(&FUNCTIONS, &SOURCES_TWICE);

#[no_mangle]
pub extern "C" fn grade_plugin_abi_version() -> u32 {
    ABI_VERSION
}

#[no_mangle]
pub extern "C" fn grade_plugin_describe() -> *const GradePlugin {
    let chosen = match std::env::var("GRADE_TEST_ODD_TWICE").as_deref() {
        Ok("function") => &FUNCTION_TWICE,
        Ok("source") => &SOURCE_TWICE,
        _ => &PLAIN,
    };
    &chosen.0
}
