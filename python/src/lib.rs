//! `grade._native`: the engine's facade as Python sees it. The package's Python half
//! (`grade/__init__.py`) turns what this returns into dicts, warnings and exceptions, and
//! turns pandas and Arrow input into the entries read here; this half only reads, grades and
//! says what failed, in the engine's words, with the GIL released while it works.

// No unwrap, expect or panic: input must never crash the interpreter that loaded us.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod arrow;
mod pyobj;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};

use grade_engine::plugin::PluginPolicy;
use grade_engine::source::{CleoJsonl, Input, Registry, StreamError};
use grade_engine::{
    named, CompiledPack, GradeOptions, GradeResult, PackFiles, PackOrigin, ReadOptions, Session,
    SessionFilter, SourceFormat,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyStopIteration};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Scripts are bounded by what they allocate, counted per thread by the global allocator,
/// as in the `grade` binary, over the binary's allocator, jemalloc, for the binary's reasons
/// (see `cli/src/main.rs`): sessions parsed on one thread are graded and freed on another,
/// which glibc's malloc handles worst (the module took 1.6 to 1.8 times the binary's time on
/// the same 1M-entry log). Its symbols are prefixed, so the interpreter's own allocations stay
/// with glibc. MSVC cannot build jemalloc: the system allocator serves there.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: grade_engine::CountingAllocator<tikv_jemallocator::Jemalloc> =
    grade_engine::CountingAllocator(tikv_jemallocator::Jemalloc);
#[cfg(target_env = "msvc")]
#[global_allocator]
static ALLOCATOR: grade_engine::CountingAllocator<std::alloc::System> =
    grade_engine::CountingAllocator(std::alloc::System);

create_exception!(grade, Error, PyException, "Anything `grade` refuses.");
create_exception!(
    grade,
    PackError,
    Error,
    "A rubric pack could not be found, read or compiled."
);
create_exception!(
    grade,
    SourceError,
    Error,
    "A source (a file, in-memory entries) could not be read as sessions."
);
create_exception!(
    grade,
    GradeError,
    Error,
    "A session could not be graded (a script failed, a judgment is missing)."
);

/// How a refusal names the setting that allows plugins.
const ALLOW_PLUGINS_HINT: &str = "`allow_plugins=True`";
/// How a refusal of a named session names the way to grade it anyway.
const ALLOW_EMPTY_HINT: &str = "`allow_empty=True`";

fn pack_error(err: grade_engine::PackError) -> PyErr {
    PackError::new_err(err.to_string())
}

/// How a refusal of a malformed line names the way to skip such lines.
const SKIP_BAD_LINES_HINT: &str = "`skip_bad_lines=True`";

fn source_message(err: &grade_engine::SourceError) -> String {
    grade_engine::run::source_message(err, SKIP_BAD_LINES_HINT)
}

fn source_error(err: &grade_engine::SourceError) -> PyErr {
    SourceError::new_err(source_message(err))
}

/// A source the caller named that is not there, in the words of `grade --source`, not the
/// system's.
fn exists(path: &Path) -> PyResult<()> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(SourceError::new_err(format!(
            "source `{}` does not exist",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// A compiled pack, shared by every grading thread.
#[pyclass(frozen, module = "grade._native", name = "Pack")]
struct NativePack {
    pack: Arc<CompiledPack>,
    files: PackFiles,
}

fn policy(allow_plugins: bool) -> PluginPolicy {
    PluginPolicy {
        allow: allow_plugins,
        how_to_allow: Some(ALLOW_PLUGINS_HINT),
    }
}

/// Finds and compiles a pack as `grade --rubric` does.
#[pyfunction]
#[pyo3(signature = (spec, rubric_path, allow_plugins))]
fn load_pack(
    py: Python<'_>,
    spec: &str,
    rubric_path: Vec<PathBuf>,
    allow_plugins: bool,
) -> PyResult<NativePack> {
    py.detach(|| {
        let files = grade_engine::locate_pack(spec, &rubric_path)?;
        let pack = grade_engine::pack::compile_pack_with(&files, policy(allow_plugins))?;
        Ok(NativePack {
            pack: Arc::new(pack),
            files,
        })
    })
    .map_err(pack_error)
}

/// Compiles a pack from its files (what a Spark executor is sent): `builtin` names the
/// built-in pack they are, `folder` the folder they were read from on the driver.
#[pyfunction]
#[pyo3(signature = (files, builtin, folder, allow_plugins))]
fn pack_from_files(
    py: Python<'_>,
    files: std::collections::BTreeMap<String, String>,
    builtin: Option<String>,
    folder: Option<PathBuf>,
    allow_plugins: bool,
) -> PyResult<NativePack> {
    let origin = match (builtin, folder) {
        (Some(id), _) => PackOrigin::Builtin(id),
        (None, Some(folder)) => PackOrigin::Folder(folder),
        (None, None) => PackOrigin::Folder(PathBuf::from(".")),
    };
    let files = PackFiles { origin, files };
    py.detach(|| {
        let pack = grade_engine::pack::compile_pack_with(&files, policy(allow_plugins))?;
        Ok(NativePack {
            pack: Arc::new(pack),
            files,
        })
    })
    .map_err(pack_error)
}

/// What `grade_arrow`'s table holds of one result, taken from it on the grading thread.
struct Row {
    /// The result as `grade --format json` prints it.
    json: String,
    total: Option<f64>,
    max: Option<f64>,
    percent: Option<f64>,
    grade: Option<String>,
    /// Each of the pack's dimensions' score, in the pack's order.
    scores: Vec<Option<f64>>,
    flags: Vec<String>,
}

/// A score as `float()` of what `json.loads` reads of it: serde_json writes `null` for one
/// that is not finite.
fn finite(score: f64) -> Option<f64> {
    score.is_finite().then_some(score)
}

impl Row {
    fn of(pack: &CompiledPack, result: &GradeResult) -> Result<Row, String> {
        Ok(Row {
            json: result_json(result)?,
            total: finite(result.total_score.0),
            max: finite(result.max_score.0),
            percent: result.percent.and_then(|p| finite(p.0)),
            grade: result.grade.clone(),
            scores: pack
                .dimensions
                .iter()
                .map(|d| result.dimensions.get(&d.id).and_then(|s| finite(s.score.0)))
                .collect(),
            flags: result.flags.clone(),
        })
    }
}

/// The columns of `grade_arrow`'s table, as Python lists, a row a session: see
/// `grade_jsonl_table`.
#[derive(Default, IntoPyObject)]
struct Columns {
    ids: Vec<String>,
    total: Vec<Option<f64>>,
    max: Vec<Option<f64>>,
    percent: Vec<Option<f64>>,
    grade: Vec<Option<String>>,
    scores: Vec<Vec<Option<f64>>>,
    flags: Vec<Option<Vec<String>>>,
    json: Vec<Option<String>>,
    error: Vec<Option<String>>,
}

impl Columns {
    fn push(&mut self, done: Done) -> PyResult<()> {
        let (id, row, error) = match done {
            Done::Result(id, Made::Row(row)) => (id, Some(*row), None),
            Done::Result(_, Made::Unserialisable(why)) => return Err(GradeError::new_err(why)),
            Done::Result(_, Made::Plan(_)) => {
                return Err(GradeError::new_err(
                    "a result was made for the wrong caller",
                ))
            }
            Done::Failed(id, message) => (id, None, Some(message)),
        };
        self.ids.push(id);
        self.error.push(error);
        match row {
            Some(row) => {
                self.total.push(row.total);
                self.max.push(row.max);
                self.percent.push(row.percent);
                self.grade.push(row.grade);
                for (column, score) in self.scores.iter_mut().zip(row.scores) {
                    column.push(score);
                }
                self.flags.push(Some(row.flags));
                self.json.push(Some(row.json));
            }
            None => {
                self.total.push(None);
                self.max.push(None);
                self.percent.push(None);
                self.grade.push(None);
                for column in &mut self.scores {
                    column.push(None);
                }
                self.flags.push(None);
                self.json.push(None);
            }
        }
        Ok(())
    }
}

/// What grading a source gives back: the results' dicts in order, the sessions that could
/// not be graded with why, how many sessions there were, the source's warnings, and how many
/// malformed lines were skipped.
type Graded<'py> = (
    Bound<'py, PyList>,
    Vec<(String, String)>,
    usize,
    Vec<String>,
    u64,
);

/// What reading a source left to say before its sessions are graded: its warnings, and how
/// many malformed lines were skipped.
type Read = (Vec<String>, u64);

/// One session's outcome, as a grading thread leaves it: its result made ready for Python
/// there, so that the thread holding the GIL only makes objects.
enum Done {
    Result(String, Made),
    Failed(String, String),
}

/// A result made ready on a grading thread.
enum Made {
    /// The dict `json.loads` makes of its JSON text, laid out (`pyobj`).
    Plan(pyobj::Plan),
    /// What `grade_arrow`'s table holds of it.
    Row(Box<Row>),
    /// It could not be serialised (our own type: never seen, but said if it happens).
    Unserialisable(String),
}

/// A result as JSON text; serialising our own type cannot fail but says so if it does.
fn result_json(result: &GradeResult) -> Result<String, String> {
    let mut line = Vec::with_capacity(1024);
    result
        .write_json_line(&mut line)
        .map_err(|e| format!("cannot serialise a result: {e}"))?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    String::from_utf8(line).map_err(|e| format!("cannot serialise a result: {e}"))
}

fn grade_one(pack: &CompiledPack, session: Session, options: &GradeOptions, shape: Shape) -> Done {
    let id = session.id.clone();
    match pack.grade_owned(session, None, options) {
        Ok(result) => {
            let made = match shape {
                Shape::Dict => match pyobj::plan(&result) {
                    Ok(plan) => Made::Plan(plan),
                    Err(e) => Made::Unserialisable(format!("cannot serialise a result: {e}")),
                },
                Shape::Row => match Row::of(pack, &result) {
                    Ok(row) => Made::Row(Box::new(row)),
                    Err(e) => Made::Unserialisable(e),
                },
            };
            Done::Result(result.session_id, made)
        }
        Err(err) => Done::Failed(id, err.to_string()),
    }
}

/// How a result reaches Python.
#[derive(Clone, Copy)]
enum Shape {
    /// The dict `json.loads` makes of its JSON text, made in Rust (`pyobj`).
    Dict,
    /// What `grade_arrow`'s table holds of it.
    Row,
}

/// A result made into its Python object.
fn make<'py>(py: Python<'py>, keys: &mut pyobj::Keys, made: Made) -> PyResult<Bound<'py, PyAny>> {
    match made {
        Made::Plan(plan) => pyobj::build(py, keys, &plan),
        Made::Row(_) => Err(GradeError::new_err(
            "a result was made for the wrong caller",
        )),
        Made::Unserialisable(why) => Err(GradeError::new_err(why)),
    }
}

impl NativePack {
    fn registry(&self) -> PyResult<Registry> {
        Registry::with_plugins_of(&self.pack)
            .map_err(|e| SourceError::new_err(format!("rubric `{}`: {e}", self.pack.id)))
    }

    fn format(
        &self,
        registry: &Registry,
        name: Option<&str>,
    ) -> PyResult<Option<Arc<dyn SourceFormat>>> {
        match name {
            None | Some("auto") => Ok(None),
            Some(name) => registry
                .format_named(name)
                .map(Some)
                .map_err(SourceError::new_err),
        }
    }

    /// Reads the lines of `data` and grades their sessions on a thread of their own: the
    /// source's warnings first, then the outcomes in the sessions' order.
    fn grade_lines(
        &self,
        data: &Bound<'_, PyAny>,
        name: PathBuf,
        skip_bad_lines: bool,
        explain: bool,
        shape: Shape,
    ) -> PyResult<Receiver<Item>> {
        let read_options = self.read_options(skip_bad_lines);
        let options = GradeOptions {
            explain,
            ..GradeOptions::default()
        };
        let pack = Arc::clone(&self.pack);
        let data = arrow::Lines::take(data)?;
        spawn_grading(move |tx| {
            let input = Input::Bytes {
                name: &name,
                bytes: &data,
            };
            let registry = pack.grading(Registry::builtin().clone());
            let read =
                match registry.read(&input, Some(&CleoJsonl), &SessionFilter::All, &read_options) {
                    Ok(read) => read,
                    Err(e) => {
                        let _ = tx.send(Item::SourceFailed(source_message(&e)));
                        return;
                    }
                };
            drop(data);
            if read.sessions.is_empty() {
                let _ = tx.send(Item::SourceFailed(format!(
                    "{}: nothing was graded",
                    grade_engine::run::no_sessions(&name)
                )));
                return;
            }
            for w in &read.warnings {
                let _ = tx.send(Item::Warning(w.to_string()));
            }
            if let Some(w) = grade_engine::run::skipped_warning(read.skipped_lines, &name) {
                let _ = tx.send(Item::Warning(w));
            }
            let _ = tx.send(Item::Skipped(read.skipped_lines));
            send_graded(&pack, read.sessions, &options, shape, tx);
        })
    }

    fn read_options(&self, skip_bad_lines: bool) -> ReadOptions {
        // What the binary reads for this pack, so that entries are built (and type-checked)
        // as it builds them: only the fields the pack reads.
        self.pack.read_options(skip_bad_lines)
    }
}

#[pymethods]
impl NativePack {
    /// The pack's id.
    #[getter]
    fn id(&self) -> &str {
        &self.pack.id
    }

    /// The pack's version.
    #[getter]
    fn version(&self) -> &str {
        &self.pack.version
    }

    /// The pack's name.
    #[getter]
    fn name(&self) -> &str {
        &self.pack.name
    }

    /// `sha256:` over the pack's files (and plugins): what its results carry.
    #[getter]
    fn digest(&self) -> &str {
        &self.pack.digest
    }

    /// The ids of the pack's dimensions, in its order.
    #[getter]
    fn dimensions(&self) -> Vec<String> {
        self.pack.dimensions.iter().map(|d| d.id.clone()).collect()
    }

    /// Whether the pack scores dimensions from a judgment.
    #[getter]
    fn judged(&self) -> bool {
        self.pack.judge.is_some()
    }

    /// Where the pack came from: `("builtin", id)` or `("folder", path)`.
    #[getter]
    fn origin(&self) -> (&'static str, String) {
        match &self.files.origin {
            PackOrigin::Builtin(id) => ("builtin", id.clone()),
            PackOrigin::Folder(path) => ("folder", path.display().to_string()),
        }
    }

    /// The pack's files (name → text), from which `pack_from_files` compiles it again.
    fn files(&self) -> std::collections::BTreeMap<String, String> {
        self.files.files.clone()
    }

    /// Grades the sessions of a source: every one, in the order of its first entry, or the
    /// ones named, in the order named.
    #[pyo3(signature = (path, sessions, source_format, skip_bad_lines, allow_empty, explain))]
    #[allow(
        clippy::too_many_arguments,
        reason = "the keywords of `Pack.grade_source`, one argument each"
    )]
    fn grade_source<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        sessions: Option<Vec<String>>,
        source_format: Option<String>,
        skip_bad_lines: bool,
        allow_empty: bool,
        explain: bool,
    ) -> PyResult<Graded<'py>> {
        exists(&path)?;
        let registry = self.registry()?;
        let format = self.format(&registry, source_format.as_deref())?;
        let read = self.read_options(skip_bad_lines);
        let options = GradeOptions {
            explain,
            ..GradeOptions::default()
        };
        let pack = Arc::clone(&self.pack);
        let Some(asked) = sessions else {
            let from = path.clone();
            let rx = spawn_grading(move |tx| {
                stream_source(&pack, &registry, &from, format, &read, &options, BATCH, tx);
            })?;
            let mut graded = collect_dicts(py, rx, (Vec::new(), 0))?;
            if graded.2 == 0 {
                graded.3.push(format!(
                    "{}: nothing was graded",
                    grade_engine::run::no_sessions(&path)
                ));
            }
            return Ok(graded);
        };
        let (sessions, warnings) = py.detach(|| {
            read_named(
                &registry,
                &path,
                format.as_deref(),
                &read,
                &asked,
                allow_empty,
            )
        })?;
        let rx = spawn_grading(move |tx| send_graded(&pack, sessions, &options, Shape::Dict, tx))?;
        collect_dicts(py, rx, warnings)
    }

    /// Grades the entries of a CLEO audit log held in memory (one JSON object a line, as
    /// `bytes` or as `arrow_jsonl` wrote them); `name` is how messages name it.
    #[pyo3(signature = (name, data, skip_bad_lines, explain))]
    fn grade_jsonl<'py>(
        &self,
        py: Python<'py>,
        name: PathBuf,
        data: &Bound<'py, PyAny>,
        skip_bad_lines: bool,
        explain: bool,
    ) -> PyResult<Graded<'py>> {
        let rx = self.grade_lines(data, name, skip_bad_lines, explain, Shape::Dict)?;
        collect_dicts(py, rx, (Vec::new(), 0))
    }

    /// `grade_jsonl` into the columns of `grade_arrow`'s table, filled here rather than
    /// from each result's JSON text read again in Python: the sessions' ids, `totalScore`,
    /// `maxScore`, `percent`, `grade`, each dimension's scores (in the pack's order),
    /// `flags`, the results' JSON text and why a session could not be graded; then the
    /// warnings.
    #[pyo3(signature = (name, data, skip_bad_lines, explain))]
    fn grade_jsonl_table(
        &self,
        py: Python<'_>,
        name: PathBuf,
        data: &Bound<'_, PyAny>,
        skip_bad_lines: bool,
        explain: bool,
    ) -> PyResult<(Columns, Vec<String>)> {
        let rx = self.grade_lines(data, name, skip_bad_lines, explain, Shape::Row)?;
        let mut columns = Columns {
            scores: vec![Vec::new(); self.pack.dimensions.len()],
            ..Columns::default()
        };
        let (warnings, _skipped) =
            collect_stream(py, rx, (Vec::new(), 0), |done| columns.push(done))?;
        Ok((columns, warnings))
    }

    /// The sessions of a source graded one by one, as they are read: an iterator of
    /// `("result", dict)`, `("failed", (session, message))` and `("warning", message)`.
    #[pyo3(signature = (path, source_format, skip_bad_lines, explain))]
    fn iter_source(
        &self,
        path: PathBuf,
        source_format: Option<String>,
        skip_bad_lines: bool,
        explain: bool,
    ) -> PyResult<SourceIter> {
        exists(&path)?;
        let registry = self.registry()?;
        let format = self.format(&registry, source_format.as_deref())?;
        let read = self.read_options(skip_bad_lines);
        let options = GradeOptions {
            explain,
            ..GradeOptions::default()
        };
        let pack = Arc::clone(&self.pack);
        // One result at a time: each is the iterator's as soon as it is graded.
        let rx = spawn_grading(move |tx| {
            stream_source(&pack, &registry, &path, format, &read, &options, 1, tx);
        })?;
        Ok(SourceIter {
            rx: Mutex::new(rx),
            ready: Mutex::default(),
            keys: Mutex::default(),
        })
    }
}

/// Starts `work` on a thread of its own, which hands outcomes over as they come, so that the
/// calling thread makes Python objects of what is graded while the rest is graded (made
/// after the grading, the dicts cost about a third of the binary's time again). A few
/// batches ahead of the reader: memory stays bounded whatever the source's size.
fn spawn_grading(
    work: impl FnOnce(&SyncSender<Item>) + Send + 'static,
) -> PyResult<Receiver<Item>> {
    let (tx, rx) = sync_channel::<Item>(16);
    std::thread::Builder::new()
        .name("grade-source".into())
        .spawn(move || work(&tx))
        .map_err(|e| GradeError::new_err(format!("cannot start grading: {e}")))?;
    Ok(rx)
}

/// Outcomes handed over together: one message, and at most one wake-up of the thread that
/// makes their objects, for this many results rather than for each.
const BATCH: usize = 64;

/// Sessions graded a chunk at a time: each chunk's sessions in parallel, in their order.
const CHUNK: usize = 1024;

/// Grades sessions already read and hands the outcomes over in their order, a chunk at a
/// time, so that one chunk's results are made into Python objects while the next is graded.
fn send_graded(
    pack: &CompiledPack,
    sessions: Vec<Session>,
    options: &GradeOptions,
    shape: Shape,
    tx: &SyncSender<Item>,
) {
    use rayon::prelude::*;
    let mut sessions = sessions.into_iter();
    loop {
        let chunk: Vec<Session> = sessions.by_ref().take(CHUNK).collect();
        if chunk.is_empty() {
            return;
        }
        let mut done: Vec<Done> = chunk
            .into_par_iter()
            .map(|s| grade_one(pack, s, options, shape))
            .collect();
        while !done.is_empty() {
            let rest = done.split_off(BATCH.min(done.len()));
            // The reader went away (an error making its objects): nothing more to grade.
            if tx.send(Item::Done(done)).is_err() {
                return;
            }
            done = rest;
        }
    }
}

/// The sessions named, in the order named, with the warnings and the count of skipped
/// lines of their reading; a name the source does not hold is refused as the binary refuses
/// it, unless `allow_empty`.
fn read_named(
    registry: &Registry,
    path: &Path,
    format: Option<&dyn SourceFormat>,
    read_options: &ReadOptions,
    asked: &[String],
    allow_empty: bool,
) -> PyResult<(Vec<Session>, Read)> {
    let input = Input::File(path);
    let filter = SessionFilter::only(asked.iter().cloned());
    let read = registry
        .read(&input, format, &filter, read_options)
        .map_err(|e| source_error(&e))?;
    let mut warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    let lost_to_unknown = read.skipped_unattributed;
    if !allow_empty && lost_to_unknown == 0 {
        let missing = named::missing(named::held(&read.sessions), asked);
        if !missing.is_empty() {
            let known: Option<Vec<String>> = registry
                .read(&input, format, &SessionFilter::All, read_options)
                .ok()
                .map(|all| all.sessions.into_iter().map(|s| s.id).collect());
            let lines = named::not_found_lines(&missing, path, known.as_deref(), ALLOW_EMPTY_HINT);
            return Err(SourceError::new_err(lines.join("\n")));
        }
    }
    let sessions = named::in_order_asked(read.sessions, asked, lost_to_unknown);
    let mut warned = std::collections::HashSet::new();
    for s in sessions
        .iter()
        .filter(|s| s.entries.is_empty() && warned.insert(s.id.clone()))
    {
        warnings.push(named::empty_session_warning(&s.id, path));
    }
    warnings.extend(grade_engine::run::skipped_warning(read.skipped_lines, path));
    Ok((sessions, (warnings, read.skipped_lines)))
}

/// What a grading thread hands over.
enum Item {
    /// Outcomes, in the sessions' order.
    Done(Vec<Done>),
    Warning(String),
    /// How many malformed lines were skipped: sent once.
    Skipped(u64),
    /// The source could not be read; nothing follows.
    SourceFailed(String),
}

/// The reader went away: grading stops.
struct Cancelled;

/// Grades the sessions of a file as they are read, and hands their outcomes over in their
/// order, `batch` at a time (the last ones when the read ends).
#[allow(
    clippy::too_many_arguments,
    reason = "what a streamed grading takes, each its own choice of the caller"
)]
fn stream_source(
    pack: &CompiledPack,
    registry: &Registry,
    path: &Path,
    format: Option<Arc<dyn SourceFormat>>,
    read: &ReadOptions,
    options: &GradeOptions,
    batch: usize,
    tx: &SyncSender<Item>,
) {
    let mut gone = false;
    let mut pending = Vec::with_capacity(batch);
    let delivered = registry.map_sessions_into(
        path,
        format.as_deref(),
        &SessionFilter::All,
        read,
        None,
        |session| Ok::<_, Cancelled>(grade_one(pack, session, options, Shape::Dict)),
        &mut |done| {
            pending.push(done);
            if pending.len() >= batch {
                let full = std::mem::replace(&mut pending, Vec::with_capacity(batch));
                if !gone && tx.send(Item::Done(full)).is_err() {
                    gone = true;
                }
            }
        },
    );
    if !pending.is_empty() && !gone {
        let _ = tx.send(Item::Done(pending));
    }
    let _ = match delivered {
        Ok(delivered) => {
            let _ = tx.send(Item::Skipped(delivered.skipped_lines));
            for w in &delivered.warnings {
                let _ = tx.send(Item::Warning(w.to_string()));
            }
            if let Some(w) = grade_engine::run::skipped_warning(delivered.skipped_lines, path) {
                let _ = tx.send(Item::Warning(w));
            }
            Ok(())
        }
        Err(StreamError::Source(e)) => tx.send(Item::SourceFailed(source_message(&e))),
        Err(StreamError::Session(Cancelled)) => Ok(()),
    };
}

/// Python's cyclic garbage collector held off while results are made, and let run again
/// (if it ran before) when they are made or making them failed. The results' dicts and
/// lists hold no cycles, yet each allocation of a container counts towards a collection,
/// and collections that walk every dict made so far took a quarter of `grade_source`'s time
/// on 50,000 results (perf, 1M entries).
///
/// Let run again as it was, the collector would start at once on the young generation
/// those allocations overfilled, and walk every container just made (650,000 for 50,000
/// CLEO results: 0.2 to 0.5 s, as long as making them all), only to find that they all
/// live, as results handed to a caller do. So they are moved to the oldest generation first,
/// with `gc.freeze()` then `gc.unfreeze()` (each moves whole lists of objects, in constant
/// time): the next full collection sees them, as it would see any old object. What else was
/// young moves with them, which only delays its collection to the next full one. Not done
/// when objects are frozen already (a forking server's): `unfreeze` would thaw them.
struct GcPaused<'py> {
    gc: Bound<'py, PyModule>,
    was_enabled: bool,
    /// Whether what was made moves to the oldest generation when done.
    age: bool,
}

impl<'py> GcPaused<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        let gc = py.import("gc")?;
        let was_enabled = gc.call_method0("isenabled")?.is_truthy()?;
        if was_enabled {
            gc.call_method0("disable")?;
        }
        let age = was_enabled
            && gc
                .call_method0("get_freeze_count")
                .and_then(|n| n.extract::<usize>())
                .is_ok_and(|n| n == 0);
        Ok(GcPaused {
            gc,
            was_enabled,
            age,
        })
    }
}

impl Drop for GcPaused<'_> {
    fn drop(&mut self) {
        if !self.was_enabled {
            return;
        }
        // These set flags or move lists and cannot fail but by a broken interpreter; a drop
        // has no caller to tell, and Python prints what it raises as unraisable.
        let calls: &[&str] = if self.age {
            &["freeze", "unfreeze", "enable"]
        } else {
            &["enable"]
        };
        for call in calls {
            if let Err(err) = self.gc.call_method0(*call) {
                err.write_unraisable(self.gc.py(), None);
            }
        }
    }
}

/// What a grading thread hands over, each outcome given to `take` as it comes: what is
/// there is taken with the GIL held, and only an empty channel is waited on without it.
/// Returns the warnings (`before`'s first) and the count of skipped lines.
fn collect_stream(
    py: Python<'_>,
    rx: Receiver<Item>,
    before: Read,
    mut take: impl FnMut(Done) -> PyResult<()>,
) -> PyResult<Read> {
    let mut rx = rx;
    let (mut warnings, mut skipped) = before;
    loop {
        let item = match rx.try_recv() {
            Ok(item) => item,
            Err(TryRecvError::Empty) => {
                // A receiver is not `Sync`: lent to the thread without the GIL and given back.
                let (next, back) = py.detach(move || (rx.recv(), rx));
                rx = back;
                match next {
                    Ok(item) => item,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        match item {
            Item::Done(batch) => {
                for done in batch {
                    take(done)?;
                }
            }
            Item::Warning(message) => warnings.push(message),
            Item::Skipped(lines) => skipped = lines,
            Item::SourceFailed(message) => return Err(SourceError::new_err(message)),
        }
    }
    Ok((warnings, skipped))
}

/// The outcomes a grading thread hands over, the results made into dicts as they come.
fn collect_dicts<'py>(py: Python<'py>, rx: Receiver<Item>, before: Read) -> PyResult<Graded<'py>> {
    let mut keys = pyobj::Keys::default();
    let mut results = Vec::new();
    let mut failed = Vec::new();
    let _paused = GcPaused::new(py)?;
    let (warnings, skipped) = collect_stream(py, rx, before, |done| {
        match done {
            Done::Result(_, result) => results.push(make(py, &mut keys, result)?),
            Done::Failed(id, message) => failed.push((id, message)),
        }
        Ok(())
    })?;
    let total = results.len() + failed.len();
    Ok((PyList::new(py, results)?, failed, total, warnings, skipped))
}

/// Results of a source as the grading thread hands them over.
#[pyclass(module = "grade._native")]
struct SourceIter {
    rx: Mutex<Receiver<Item>>,
    /// Outcomes handed over and not yet asked for.
    ready: Mutex<std::collections::VecDeque<Done>>,
    /// The keys the results' dicts share.
    keys: Mutex<pyobj::Keys>,
}

#[pymethods]
impl SourceIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<(&'static str, Py<PyAny>)> {
        loop {
            // Held only to take or add outcomes, never while Python runs.
            let ready = self
                .ready
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop_front();
            if let Some(done) = ready {
                return self.outcome(py, done);
            }
            let item = py.detach(|| match self.rx.lock() {
                Ok(rx) => rx.recv().ok(),
                Err(_) => None,
            });
            match item {
                // The count is for `grade_source`: an iterator's reader has it in the
                // warning that follows.
                Some(Item::Skipped(_)) => continue,
                None => return Err(PyStopIteration::new_err(())),
                Some(Item::Done(batch)) => {
                    let mut batch = batch.into_iter();
                    let Some(first) = batch.next() else { continue };
                    self.ready
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(batch);
                    return self.outcome(py, first);
                }
                Some(Item::Warning(message)) => {
                    return Ok(("warning", message.into_pyobject(py)?.into_any().unbind()))
                }
                Some(Item::SourceFailed(message)) => return Err(SourceError::new_err(message)),
            }
        }
    }
}

impl SourceIter {
    fn outcome(&self, py: Python<'_>, done: Done) -> PyResult<(&'static str, Py<PyAny>)> {
        match done {
            Done::Result(_, result) => {
                // Not waited for: a thread that holds them may be waiting for the GIL we
                // hold (a finalizer run while the dict was made); fresh keys serve then.
                let made = match self.keys.try_lock() {
                    Ok(mut keys) => make(py, &mut keys, result)?,
                    Err(_) => make(py, &mut pyobj::Keys::default(), result)?,
                };
                Ok(("result", made.unbind()))
            }
            Done::Failed(id, message) => Ok((
                "failed",
                (id, message).into_pyobject(py)?.into_any().unbind(),
            )),
        }
    }
}

/// The last word of a run in which sessions could not be graded.
#[pyfunction]
fn could_not_grade(failed: usize, total: usize) -> String {
    grade_engine::run::could_not_grade(failed, total)
}

/// A result read from JSON text, given back both ways it reaches Python: the dict made in
/// Rust and the JSON text the binary prints. For the tests, which hold the dict to what
/// `json.loads` makes of the text over values no pack's grades hold yet (judges' costs,
/// numbers at the ends of their ranges).
#[pyfunction]
fn _result_forms<'py>(py: Python<'py>, text: &str) -> PyResult<(Bound<'py, PyAny>, String)> {
    let result: GradeResult =
        serde_json::from_str(text).map_err(|e| SourceError::new_err(e.to_string()))?;
    let plan = pyobj::plan(&result).map_err(GradeError::new_err)?;
    let dict = pyobj::build(py, &mut pyobj::Keys::default(), &plan)?;
    Ok((dict, result_json(&result).map_err(GradeError::new_err)?))
}

/// The ids of the packs built into the engine.
#[pyfunction]
fn builtin_packs() -> Vec<&'static str> {
    grade_engine::builtin_pack_ids()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The threads that grade keep a script run's stack in reserve, as the binary's do.
    // Building fails only when a pool exists already; rayon's default one then serves.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(grade_engine::SCRIPT_THREAD_STACK)
        .build_global();
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("PackError", py.get_type::<PackError>())?;
    m.add("SourceError", py.get_type::<SourceError>())?;
    m.add("GradeError", py.get_type::<GradeError>())?;
    m.add_class::<NativePack>()?;
    m.add_class::<SourceIter>()?;
    m.add_function(wrap_pyfunction!(load_pack, m)?)?;
    m.add_function(wrap_pyfunction!(pack_from_files, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_packs, m)?)?;
    m.add_function(wrap_pyfunction!(could_not_grade, m)?)?;
    m.add_function(wrap_pyfunction!(_result_forms, m)?)?;
    m.add_function(wrap_pyfunction!(compare_packs, m)?)?;
    m.add_function(wrap_pyfunction!(compare_results, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::arrow_jsonl, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::arrow_lines, m)?)?;
    m.add_class::<arrow::Lines>()?;
    Ok(())
}

/// Two packs over the sessions of one source, as `grade compare --rubric BASE --rubric
/// CAND --source PATH --format json` compares them, through the engine's
/// `compare::TwoPacks` as the binary does: the report as JSON text, the warnings (the
/// source's, then the sessions left out), the grades that could not be made, and why there
/// is nothing to compare (then the text is empty).
#[pyfunction]
#[pyo3(signature = (base, base_spec, candidate, candidate_spec, source, sessions, source_format, skip_bad_lines, pass_at, seed))]
#[allow(
    clippy::too_many_arguments,
    reason = "the keywords of `grade.compare`, one argument each"
)]
fn compare_packs(
    py: Python<'_>,
    base: &NativePack,
    base_spec: &str,
    candidate: &NativePack,
    candidate_spec: &str,
    source: PathBuf,
    sessions: Option<Vec<String>>,
    source_format: Option<String>,
    skip_bad_lines: bool,
    pass_at: Option<f64>,
    seed: u64,
) -> PyResult<Compared> {
    use grade_engine::compare::{self, CompareOptions, PackSource, TwoPacks};
    exists(&source)?;
    for pack in [&base.pack, &candidate.pack] {
        if let Some(why) = compare::judged_refusal(pack) {
            return Err(GradeError::new_err(why));
        }
    }
    let format = match source_format.as_deref() {
        None | Some("auto") => None,
        Some(name) => Some(
            Registry::builtin()
                .format_named(name)
                .map_err(SourceError::new_err)?,
        ),
    };
    let options = CompareOptions {
        pass_at,
        seed,
        resamples: compare::DEFAULT_RESAMPLES,
    };
    py.detach(|| {
        let two = TwoPacks::new(
            PackSource {
                pack: &base.pack,
                files: &base.files,
            },
            base_spec,
            PackSource {
                pack: &candidate.pack,
                files: &candidate.files,
            },
            candidate_spec,
        );
        let read = two
            .grade_source(
                &source,
                format.as_deref(),
                sessions.as_deref(),
                skip_bad_lines,
                None,
            )
            .map_err(|e| source_error(&e))?;
        let mut warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        warnings.extend(grade_engine::run::skipped_warning(
            read.skipped_lines,
            &source,
        ));
        let done = two
            .compare(read.results, sessions.as_deref(), &source, &options)
            .map_err(|e| SourceError::new_err(e.to_string()))?;
        let errors: Vec<String> = done.failed.iter().map(ToString::to_string).collect();
        let mut report = done.report;
        let (text, warnings, nothing) = reported(&mut report, warnings)?;
        Ok((text, warnings, errors, nothing))
    })
}

/// A comparison as the module hands it over: the report as JSON text (empty when there is
/// nothing to compare), the warnings, the grades that could not be made, and why there is
/// nothing to compare.
type Compared = (String, Vec<String>, Vec<String>, Option<String>);

/// The report of a comparison with the warnings the binary gives before it: `warnings`,
/// then the sessions it left out; when there is nothing to compare, why instead of the
/// report, which the caller raises once it has warned (what the sides hold is why).
fn reported(
    report: &mut grade_engine::compare::Comparison,
    mut warnings: Vec<String>,
) -> PyResult<(String, Vec<String>, Option<String>)> {
    warnings.extend(report.left_out().iter().map(ToString::to_string));
    if let Some(why) = report.nothing_to_compare() {
        return Ok((
            String::new(),
            warnings,
            Some(format!("nothing to compare: {why}")),
        ));
    }
    Ok((report_json(report)?, warnings, None))
}

/// How the warnings of a comparison of recorded results name the module's keywords.
const RECORDED_HINTS: grade_engine::compare::recorded::Hints =
    grade_engine::compare::recorded::Hints {
        pass_at: "`pass_at=`",
        traces: "grade them with `explain=True`",
    };

/// Two lists of recorded results, as `grade compare BASE.jsonl CAND.jsonl --format json`
/// compares two files of them: each side its label (where the binary names the file by its
/// path) and its results, a result a line of JSON, read by the engine's
/// `compare::recorded::read_side` as the binary reads a file. The report as JSON text, the
/// warnings, and why there is nothing to compare (then the text is empty).
#[pyfunction]
#[pyo3(signature = (sides, pass_at, seed, rubric_path, allow_plugins))]
fn compare_results(
    py: Python<'_>,
    sides: ((String, String), (String, String)),
    pass_at: Option<f64>,
    seed: u64,
    rubric_path: Vec<PathBuf>,
    allow_plugins: bool,
) -> PyResult<(String, Vec<String>, Option<String>)> {
    use grade_engine::compare::{self, recorded, CompareOptions};
    let options = CompareOptions {
        pass_at,
        seed,
        resamples: compare::DEFAULT_RESAMPLES,
    };
    let policy = policy(allow_plugins);
    py.detach(|| {
        let mut warnings = Vec::new();
        let read = |label: &str, text: &str, warnings: &mut Vec<String>| {
            recorded::read_side(
                label,
                text,
                "the side's label",
                &rubric_path,
                policy,
                &mut |warning| warnings.push(warning),
            )
            .map(|read| (read.results, read.pack))
            .map_err(|e| SourceError::new_err(e.to_string()))
        };
        let ((base_label, base), (candidate_label, candidate)) = &sides;
        let (ra, pa) = read(base_label, base, &mut warnings)?;
        let (rb, pb) = read(candidate_label, candidate, &mut warnings)?;
        let mut report = recorded::compare_recorded(
            recorded::RecordedSide::new(base_label.as_str(), ra, pa.as_ref()),
            recorded::RecordedSide::new(candidate_label.as_str(), rb, pb.as_ref()),
            &options,
            RECORDED_HINTS,
            &mut |warning| warnings.push(warning),
        )
        .map_err(|e| SourceError::new_err(e.to_string()))?;
        reported(&mut report, warnings)
    })
}

/// The report as `grade compare --format json` writes it.
fn report_json(report: &mut grade_engine::compare::Comparison) -> PyResult<String> {
    let mut out = Vec::new();
    grade_engine::compare::write_json(&mut out, report)
        .map_err(|e| GradeError::new_err(format!("cannot serialise the report: {e}")))?;
    String::from_utf8(out)
        .map_err(|e| GradeError::new_err(format!("cannot serialise the report: {e}")))
}
