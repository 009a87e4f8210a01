//! The C ABI between `grade` and a plugin, as Rust types. `plugins/grade_plugin.h` declares
//! the same layout for authors in other languages; a test checks the two agree.
//!
//! Everything crossing the boundary is a `#[repr(C)]` struct of integers, floats and
//! pointers: no Rust type (`String`, `Vec`, `&str`, trait objects) crosses it, so a plugin
//! built by another compiler, or another language, works with any `grade` of the same ABI
//! version.
//!
//! Memory never changes hands. What the host passes in (entries, field values, source bytes)
//! is borrowed for the duration of one call. What a plugin gives back (a value, evidence, a
//! flag, an entry of a source) it hands to a host callback, which copies it before returning.

use std::ffi::c_void;

/// The version of this ABI. A host loads only plugins that report exactly this version from
/// `grade_plugin_abi_version`; any change to a type below raises it.
pub const ABI_VERSION: u32 = 1;

/// The symbol every plugin exports first: `uint32_t grade_plugin_abi_version(void)`.
pub const ABI_VERSION_SYMBOL: &str = "grade_plugin_abi_version";
/// `const grade_plugin *grade_plugin_describe(void)`, looked up only after the version matched.
pub const DESCRIBE_SYMBOL: &str = "grade_plugin_describe";

/// A function decides a rule: its outcome is points, evidence, flags and entries.
pub const KIND_RULE: u32 = 1;
/// A function is a condition: its value is true (non-zero) or false.
pub const KIND_CONDITION: u32 = 2;
/// A function is a metric: a number, or no value (undefined).
pub const KIND_METRIC: u32 = 3;

/// A field value is missing (or JSON `null`, which rules treat alike).
pub const VALUE_MISSING: u32 = 0;
/// `number` is 0 or 1.
pub const VALUE_BOOL: u32 = 1;
/// `number` holds it.
pub const VALUE_NUMBER: u32 = 2;
/// `text` holds it (UTF-8).
pub const VALUE_STRING: u32 = 3;
/// An object or array: `text` holds its JSON.
pub const VALUE_JSON: u32 = 4;

/// What a plugin's text output is.
pub const TEXT_EVIDENCE: u32 = 1;
pub const TEXT_FLAG: u32 = 2;
/// The call failed; the text says why.
pub const TEXT_ERROR: u32 = 3;

/// A function or source call succeeded.
pub const STATUS_OK: i32 = 0;
/// It failed; the reason was given with `TEXT_ERROR` (or the plugin panicked).
pub const STATUS_ERROR: i32 = 1;

/// UTF-8 text (or bytes, for source content), not NUL-terminated. `ptr` may be null when
/// `len` is 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GradeStr {
    pub ptr: *const u8,
    pub len: usize,
}

impl GradeStr {
    pub const EMPTY: GradeStr = GradeStr {
        ptr: std::ptr::null(),
        len: 0,
    };

    /// Borrows `text` for as long as the caller keeps it alive.
    pub const fn new(text: &str) -> GradeStr {
        GradeStr {
            ptr: text.as_ptr(),
            len: text.len(),
        }
    }

    pub const fn bytes(bytes: &[u8]) -> GradeStr {
        GradeStr {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
        }
    }
}

/// One audit entry, as the host lends it to a function.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GradeEntry {
    /// As the source spelled it.
    pub timestamp: GradeStr,
    /// Milliseconds since the Unix epoch: what rules compare.
    pub instant_ms: i64,
    pub domain: GradeStr,
    pub operation: GradeStr,
    /// 1 when the operation succeeded, else 0.
    pub success: u32,
    pub exit_code: i64,
    /// Milliseconds.
    pub duration_ms: f64,
    /// `ptr` is null when the entry has no error.
    pub error: GradeStr,
}

/// The value of one declared field in one entry.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GradeValue {
    /// One of the `VALUE_*` constants.
    pub kind: u32,
    pub number: f64,
    pub text: GradeStr,
}

/// One call of a function: the session and what the function declared it reads.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GradeCall {
    pub session_id: GradeStr,
    pub entries: *const GradeEntry,
    pub entry_count: usize,
    /// `entry_count × field_count` values, row by row: entry `i`'s field `f` is at
    /// `fields[i * field_count + f]`, fields in the order the function declared them.
    pub fields: *const GradeValue,
    pub field_count: usize,
    /// In a `for_each` rule, the index of the entry being judged; -1 elsewhere.
    pub current: i64,
    /// The dimension's running score before this rule.
    pub score: f64,
}

/// Where a function puts its result. Each callback copies what it is given before returning.
#[repr(C)]
pub struct GradeOutput {
    /// The host's, passed back to each callback.
    pub host: *mut c_void,
    /// A metric's value, a condition's truth (non-zero holds), or a rule's points. Not
    /// calling it means: undefined metric, false condition, no points.
    pub value: extern "C" fn(host: *mut c_void, value: f64),
    /// Evidence, a flag, or the error of a failed call (`TEXT_*`).
    pub text: extern "C" fn(host: *mut c_void, kind: u32, text: GradeStr),
    /// An entry (by index) behind the outcome, for `--explain`.
    pub entry: extern "C" fn(host: *mut c_void, index: u64),
}

/// `int32_t call(const grade_call *call, const grade_output *out)`: `STATUS_OK` or `STATUS_ERROR`.
pub type GradeFn = extern "C" fn(call: *const GradeCall, out: *const GradeOutput) -> i32;

/// A function a plugin provides.
#[repr(C)]
pub struct GradeFunction {
    pub name: GradeStr,
    /// `KIND_RULE`, `KIND_CONDITION` or `KIND_METRIC`.
    pub kind: u32,
    pub doc: GradeStr,
    /// The entry fields the function reads (`params.command`, `metadata.cwd`), which the host
    /// resolves into `GradeCall::fields`.
    pub fields: *const GradeStr,
    pub field_count: usize,
    pub call: GradeFn,
}

/// An entry a source plugin read.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GradeNewEntry {
    pub session_id: GradeStr,
    /// RFC 3339 / ISO 8601, as `grade` reads everywhere.
    pub timestamp: GradeStr,
    pub domain: GradeStr,
    pub operation: GradeStr,
    pub success: u32,
    pub exit_code: i64,
    pub duration_ms: f64,
    /// `ptr` null: no error.
    pub error: GradeStr,
    /// A JSON object, or empty for none.
    pub params_json: GradeStr,
    /// A JSON object, or empty for none; `source` defaults to the format's name.
    pub metadata_json: GradeStr,
    /// The 1-based line (or record) the entry came from, for messages; 0 when unknown.
    pub line: u64,
}

/// Where a source plugin puts what it read.
#[repr(C)]
pub struct GradeSourceOutput {
    pub host: *mut c_void,
    /// Adds an entry; returns `STATUS_ERROR` when the host refuses it (a bad timestamp, params
    /// that are not a JSON object), and the reader should then stop.
    pub entry: extern "C" fn(host: *mut c_void, entry: *const GradeNewEntry) -> i32,
    /// Something skipped or guessed, at a 1-based line (0: the whole file).
    pub warning: extern "C" fn(host: *mut c_void, line: u64, message: GradeStr),
    /// Why reading failed, at a 1-based line (0: the whole file).
    pub error: extern "C" fn(host: *mut c_void, line: u64, message: GradeStr),
}

/// `uint32_t detect(grade_str head)`: 1 when the first bytes of a file (up to 64 KiB) are
/// this format, else 0.
pub type GradeDetectFn = extern "C" fn(head: GradeStr) -> u32;
/// `int32_t read(grade_str path, grade_str content, const grade_source_output *out)`.
pub type GradeReadFn =
    extern "C" fn(path: GradeStr, content: GradeStr, out: *const GradeSourceOutput) -> i32;

/// A source format a plugin reads.
#[repr(C)]
pub struct GradeSource {
    /// The name `--source-format` takes.
    pub name: GradeStr,
    pub doc: GradeStr,
    pub detect: GradeDetectFn,
    pub read: GradeReadFn,
}

/// What `grade_plugin_describe` returns: a pointer to data that lives as long as the library.
#[repr(C)]
pub struct GradePlugin {
    pub name: GradeStr,
    pub version: GradeStr,
    pub functions: *const GradeFunction,
    pub function_count: usize,
    pub sources: *const GradeSource,
    pub source_count: usize,
}

/// `uint32_t grade_plugin_abi_version(void)`.
pub type AbiVersionFn = extern "C" fn() -> u32;
/// `const grade_plugin *grade_plugin_describe(void)`.
pub type DescribeFn = extern "C" fn() -> *const GradePlugin;
