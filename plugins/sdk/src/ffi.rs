//! The plugin's side of the boundary, used by [`plugin!`](crate::plugin): turns what the host
//! lends into safe views, runs the author's function with panics caught, and hands results
//! back through the host's callbacks. This is the SDK's only `unsafe`: reading what the host
//! passes is what a C ABI means, and doing it here is what spares authors from it.
#![expect(
    unsafe_code,
    reason = "the SDK's one place that reads what the host lends through the C ABI"
)]

use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use crate::abi::{
    GradeCall, GradeDetectFn, GradeEntry, GradeFn, GradeFunction, GradeOutput, GradePlugin,
    GradeReadFn, GradeSource, GradeSourceOutput, GradeStr, GradeValue,
};
use crate::{abi, FunctionResult, Session, Sink, Source, Value};

/// Bytes the host lends, as a slice.
fn bytes<'a>(s: GradeStr) -> &'a [u8] {
    if s.ptr.is_null() || s.len == 0 {
        return &[];
    }
    // SAFETY: the ABI requires `ptr` to point at `len` readable bytes that stay valid for the
    // whole call; every view built from them is dropped before the call returns.
    unsafe { std::slice::from_raw_parts(s.ptr, s.len) }
}

/// Text the host lends; the host passes only UTF-8, and anything else reads as empty.
pub fn text<'a>(s: GradeStr) -> &'a str {
    std::str::from_utf8(bytes(s)).unwrap_or_default()
}

pub(crate) fn value<'a>(v: GradeValue) -> Value<'a> {
    match v.kind {
        abi::VALUE_BOOL => Value::Bool(v.number != 0.0),
        abi::VALUE_NUMBER => Value::Number(v.number),
        abi::VALUE_STRING => Value::Str(text(v.text)),
        abi::VALUE_JSON => Value::Json(text(v.text)),
        _ => Value::Missing,
    }
}

fn slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: the ABI requires `ptr` to point at `len` initialised values that stay valid for
    // the whole call; the slice does not outlive it.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// The host's output callbacks, for [`FunctionResult::deliver`].
pub struct Output<'a> {
    raw: &'a GradeOutput,
}

impl Output<'_> {
    pub(crate) fn value(&self, value: f64) {
        (self.raw.value)(self.raw.host, value);
    }

    pub(crate) fn text(&self, kind: u32, text: &str) {
        (self.raw.text)(self.raw.host, kind, GradeStr::new(text));
    }

    pub(crate) fn entry(&self, index: u64) {
        (self.raw.entry)(self.raw.host, index);
    }
}

thread_local! {
    /// Where the last panic on this thread happened, for the error the host reports.
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics are caught and reported as the call's error, so the default hook's message on
/// standard error would only repeat it in the middle of `grade`'s output.
fn quiet_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let at = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            PANIC_AT.with(|p| *p.borrow_mut() = at);
        }));
    });
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    match PANIC_AT.with(|p| p.borrow_mut().take()) {
        Some(at) => format!("panicked at {at}: {message}"),
        None => format!("panicked: {message}"),
    }
}

/// Runs `f` with what `call` lends, and reports its result through `out`.
///
/// # Safety
/// `call` and `out` are null or point at values that stay valid and unchanged for the whole
/// call, as the ABI requires of the host; so are the arrays and strings they point to.
pub unsafe fn call<R: FunctionResult, F: Fn(&Session<'_>) -> R>(
    call: *const GradeCall,
    out: *const GradeOutput,
    reads: &'static [&'static str],
    f: F,
) -> i32 {
    quiet_panics();
    if call.is_null() || out.is_null() {
        return abi::STATUS_ERROR;
    }
    // SAFETY: the caller promises `call` and `out` are valid for the whole call (see above);
    // they were checked non-null.
    let (call, out) = unsafe { (&*call, &*out) };
    let out = Output { raw: out };
    let width = reads.len();
    let session = Session {
        id: text(call.session_id),
        entries: slice::<GradeEntry>(call.entries, call.entry_count),
        fields: if call.field_count == width {
            slice(call.fields, call.entry_count.saturating_mul(width))
        } else {
            &[]
        },
        names: reads,
        current: usize::try_from(call.current).ok(),
        score: call.score,
    };
    if call.field_count != width {
        out.text(
            abi::TEXT_ERROR,
            &format!(
                "the host passed {} fields and the function reads {width}",
                call.field_count
            ),
        );
        return abi::STATUS_ERROR;
    }
    match catch_unwind(AssertUnwindSafe(|| f(&session).deliver(&out))) {
        Ok(Ok(())) => abi::STATUS_OK,
        Ok(Err(message)) => {
            out.text(abi::TEXT_ERROR, &message);
            abi::STATUS_ERROR
        }
        Err(payload) => {
            out.text(abi::TEXT_ERROR, &panic_message(payload.as_ref()));
            abi::STATUS_ERROR
        }
    }
}

/// The kind of a function, from what it returns.
pub fn kind_of<R: FunctionResult, F: Fn(&Session<'_>) -> R>(_: &F) -> u32 {
    R::KIND
}

pub fn detect<S: Source>(head: GradeStr) -> u32 {
    quiet_panics();
    let head = bytes(head);
    // A detector that panics does not recognise the file.
    catch_unwind(|| S::detect(head)).map_or(0, u32::from)
}

/// Runs a source reader over the content the host lends.
///
/// # Safety
/// `out` is null or points at a `GradeSourceOutput` valid for the whole call; `path` and
/// `content` are as the ABI requires (see [`call`]).
pub unsafe fn read<S: Source>(
    path: GradeStr,
    content: GradeStr,
    out: *const GradeSourceOutput,
) -> i32 {
    quiet_panics();
    if out.is_null() {
        return abi::STATUS_ERROR;
    }
    // SAFETY: the caller promises `out` is valid for the whole call; it was checked non-null.
    let out = unsafe { &*out };
    let (path, content) = (text(path), bytes(content));
    let mut sink = Sink { out };
    match catch_unwind(AssertUnwindSafe(|| S::read(path, content, &mut sink))) {
        Ok(Ok(())) => abi::STATUS_OK,
        Ok(Err(e)) => {
            (out.error)(out.host, e.line, GradeStr::new(&e.message));
            abi::STATUS_ERROR
        }
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            (out.error)(out.host, 0, GradeStr::new(&message));
            abi::STATUS_ERROR
        }
    }
}

/// The description a plugin returns, built once and kept for the life of the library.
pub struct Described {
    plugin: GradePlugin,
    _functions: Vec<GradeFunction>,
    _sources: Vec<GradeSource>,
    _fields: Vec<Vec<GradeStr>>,
}

// SAFETY: `Described` only holds pointers to `'static` strings and to its own vectors, which
// are never written after construction; sharing it between threads reads immutable data.
unsafe impl Sync for Described {}
// SAFETY: as above: nothing in it is tied to the thread that built it.
unsafe impl Send for Described {}

/// A function's description, before [`Described::new`] gives its `reads` a home.
pub struct FunctionSpec {
    name: &'static str,
    doc: &'static str,
    reads: &'static [&'static str],
    kind: u32,
    call: GradeFn,
}

pub fn function(
    name: &'static str,
    doc: &'static str,
    reads: &'static [&'static str],
    kind: u32,
    call: GradeFn,
) -> FunctionSpec {
    FunctionSpec {
        name,
        doc,
        reads,
        kind,
        call,
    }
}

pub fn source(
    name: &'static str,
    doc: &'static str,
    detect: GradeDetectFn,
    read: GradeReadFn,
) -> GradeSource {
    GradeSource {
        name: GradeStr::new(name),
        doc: GradeStr::new(doc),
        detect,
        read,
    }
}

impl Described {
    pub fn new(
        name: &'static str,
        version: &'static str,
        functions: Vec<FunctionSpec>,
        sources: Vec<GradeSource>,
    ) -> Described {
        let fields: Vec<Vec<GradeStr>> = functions
            .iter()
            .map(|f| f.reads.iter().map(|r| GradeStr::new(r)).collect())
            .collect();
        let functions: Vec<GradeFunction> = functions
            .iter()
            .zip(&fields)
            .map(|(f, reads)| GradeFunction {
                name: GradeStr::new(f.name),
                kind: f.kind,
                doc: GradeStr::new(f.doc),
                fields: reads.as_ptr(),
                field_count: reads.len(),
                call: f.call,
            })
            .collect();
        let plugin = GradePlugin {
            name: GradeStr::new(name),
            version: GradeStr::new(version),
            functions: functions.as_ptr(),
            function_count: functions.len(),
            sources: sources.as_ptr(),
            source_count: sources.len(),
        };
        Described {
            plugin,
            _functions: functions,
            _sources: sources,
            _fields: fields,
        }
    }

    pub fn as_ptr(&self) -> *const GradePlugin {
        &self.plugin
    }
}
