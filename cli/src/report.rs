//! `grade report` and `--html FILE` on a grading run: one self-contained page over a run's
//! results or a grades history (`.cleo/metrics/GRADES.jsonl`). The figures (distribution,
//! letters, each dimension's mean and spread, frequent flags, the trend of each rubric's mean)
//! are computed here; the page's script only draws them and the table of sessions, which it
//! renders lazily so that 50,000 sessions open at once. Every text of the results is data in
//! the page's JSON, which the script writes as text (never as markup).
//!
//! The sessions travel in a compact form: every repeated text (flags, evidence, rule ids,
//! operations, files) once in a table of strings, and each session as an array of numbers
//! into it. A run of 50,000 CLEO sessions with their traces is about 20 MB, not 150.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use grade_engine::result::Score;
use grade_engine::{CompiledPack, GradeResult};
use serde::Serialize;

use crate::args::ReportArgs;
use crate::error::CliError;

mod figures;

#[cfg(test)]
use figures::{five, mean_sd};
use figures::{stats_of, trend_of};

const TEMPLATE: &str = include_str!("../assets/report.html");

/// Histogram bins of the score distribution: ten of 10 percentage points, 100 in the last.
const BINS: usize = 10;
/// How many of the most frequent flag shapes a rubric's figures list.
const TOP_FLAGS: usize = 20;
/// Most points a trend line has: finer buckets (runs, then days) are used while they fit.
const TREND_POINTS: usize = 60;

/// A table of texts, each stored once; the page refers to a text by its index.
#[derive(Default)]
struct Strings {
    index: HashMap<String, u32>,
    list: Vec<String>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        self.index.insert(s.to_owned(), i);
        self.list.push(s.to_owned());
        i
    }
}

/// What the page knows of one rubric (an id at a version and digest).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rubric {
    id: String,
    version: String,
    /// The pack's human name, when the pack was at hand.
    name: String,
    dimensions: Vec<DimensionInfo>,
    /// The letters, best first: the pack's bands, else the letters seen in order.
    letters: Vec<String>,
    stats: Option<Stats>,
    #[serde(skip)]
    digest: String,
}

#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct DimensionInfo {
    id: String,
    name: String,
    description: String,
    max: f64,
}

/// The figures of one rubric over its standing grades (the last of each session).
#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Stats {
    /// Sessions with a standing grade.
    sessions: usize,
    /// Of those, sessions graded out of more than 0 (the others had nothing to grade).
    graded: usize,
    mean: Option<f64>,
    sd: Option<f64>,
    median: Option<f64>,
    /// Sessions per bin of 10 percentage points.
    histogram: [usize; BINS],
    /// How many sessions got each letter, in `letters` order.
    letters: Vec<usize>,
    dimensions: Vec<Spread>,
    /// The most frequent flag shapes: index into `shapes`, times raised, sessions raising it.
    flags: Vec<[usize; 3]>,
    /// Distinct flag shapes raised in all.
    flag_shapes: usize,
}

/// How one dimension's scores spread, in points (of its `max`), over the sessions where it
/// applied.
#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Spread {
    n: usize,
    /// Sessions where it did not apply (or was not scored).
    not_applicable: usize,
    mean: Option<f64>,
    /// Population standard deviation (divided by n), as `--judge-runs` spreads are.
    sd: Option<f64>,
    /// Minimum, first quartile, median, third quartile, maximum (linear interpolation, as
    /// NumPy's default percentile).
    five: Option<[f64; 5]>,
    /// Sessions at the dimension's max.
    full: usize,
}

/// A session's row: `[id, rubric, percent|null, letter|null, total, max, graded at, entries,
/// scores, flags, source|null, standing, detail]`; texts are indices into `strings`. The
/// detail is the JSON of a [`Detail`], as a string the page parses when the row is opened:
/// the page's load parses 50,000 strings, not 50,000 traces.
#[derive(Serialize)]
struct Row(
    String,
    u32,
    Option<Score>,
    Option<u32>,
    Score,
    Score,
    u32,
    usize,
    Vec<Option<Score>>,
    Vec<u32>,
    Option<u32>,
    bool,
    String,
);

/// What a row opens: each dimension's evidence (and judge's label and rationale), and the
/// rule trace of `--explain`.
#[derive(Serialize, Default)]
struct Detail {
    #[serde(rename = "d")]
    dimensions: Vec<DimensionDetail>,
    #[serde(rename = "x", skip_serializing_if = "Option::is_none")]
    explain: Option<Vec<Trimmed>>,
    /// The CLEO task, when the session names one.
    #[serde(rename = "t", skip_serializing_if = "Option::is_none")]
    task: Option<String>,
    /// What the letter stands on when some dimensions did not apply (`on 1 of 5 dimensions`).
    #[serde(rename = "a", skip_serializing_if = "Option::is_none")]
    applied: Option<String>,
    /// Lines of the source skipped as malformed that may have been this session's.
    #[serde(rename = "k", skip_serializing_if = "is_zero")]
    skipped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Serialize, Default)]
struct DimensionDetail {
    #[serde(rename = "e", skip_serializing_if = "Vec::is_empty")]
    evidence: Vec<u32>,
    #[serde(rename = "l", skip_serializing_if = "Option::is_none")]
    label: Option<u32>,
    #[serde(rename = "r", skip_serializing_if = "Option::is_none")]
    rationale: Option<String>,
    #[serde(rename = "n", skip_serializing_if = "std::ops::Not::not")]
    not_applicable: bool,
}

/// A list written without the empty lists and nulls at its end. One rule's part in a
/// dimension is `[dimension, rule, points, evidence, flags, entries]` (most rules of a session
/// give nothing, and a page of 50,000 sessions holds 600,000 of them: `[3,18,0]`), an entry
/// behind a rule `[position, operation, file, line, row]`; texts are indices into `strings`.
struct Trimmed(Vec<Cell>);

/// A value of a [`Trimmed`] list.
#[derive(Serialize)]
#[serde(untagged)]
enum Cell {
    Int(u64),
    Score(Score),
    Ids(Vec<u32>),
    List(Vec<Trimmed>),
    Opt(Option<u64>),
}

impl Cell {
    fn is_empty(&self) -> bool {
        match self {
            Cell::Int(_) | Cell::Score(_) => false,
            Cell::Ids(v) => v.is_empty(),
            Cell::List(v) => v.is_empty(),
            Cell::Opt(v) => v.is_none(),
        }
    }
}

impl Serialize for Trimmed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq as _;
        let len = self
            .0
            .iter()
            .rposition(|c| !c.is_empty())
            .map_or(0, |i| i + 1);
        let mut seq = s.serialize_seq(Some(len))?;
        for cell in &self.0[..len] {
            seq.serialize_element(cell)?;
        }
        seq.end()
    }
}

/// The trend of each rubric's mean over time (a grades history graded more than once).
#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Trend {
    /// `run` (one point per grading run), `day` or `month`.
    bucket: &'static str,
    /// The buckets, in time order (as their labels sort).
    at: Vec<String>,
    lines: Vec<TrendLine>,
    /// Graded results without a timestamp, left out of the trend.
    undated: usize,
}

#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct TrendLine {
    rubric: String,
    /// The versions of the rubric the line's results were graded by.
    versions: Vec<String>,
    /// Mean percentage and how many results, per bucket of `at` (null where none).
    points: Vec<Option<(f64, usize)>>,
}

/// The page's data.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PageData {
    title: String,
    /// What made the page (`grade report`, or the grading run).
    made_by: String,
    inputs: Vec<String>,
    /// Whether some session was graded more than once (a history).
    history: bool,
    /// Whether the sessions carry their rule traces.
    explained: bool,
    strings: Vec<String>,
    /// Flag shapes (numbers read as N), and each flag's shape by its index in `strings`.
    shapes: Vec<String>,
    flag_shape: HashMap<u32, u32>,
    rubrics: Vec<Rubric>,
    sessions: Vec<Row>,
    trend: Option<Trend>,
}

/// What a page tells of a rubric from its pack: names, dimensions and letters.
#[derive(Clone, Default)]
pub struct PackInfo {
    name: String,
    dimensions: Vec<DimensionInfo>,
    letters: Vec<String>,
}

impl PackInfo {
    pub fn of(pack: &CompiledPack) -> PackInfo {
        PackInfo {
            name: pack.name.clone(),
            dimensions: pack
                .dimensions
                .iter()
                .map(|d| DimensionInfo {
                    id: d.id.clone(),
                    name: d.name.clone(),
                    description: d.description.clone(),
                    max: d.max,
                })
                .collect(),
            letters: pack.bands.iter().map(|b| b.grade.clone()).collect(),
        }
    }
}

/// Finds what a page tells of the pack that graded results, when the pack is at hand with
/// the digest the results name.
pub type FindPack = Box<dyn Fn(&grade_engine::result::RubricRef) -> Option<PackInfo>>;

/// The page, made one result at a time: a run of many sessions keeps each result's row, not
/// the result.
pub struct ReportBuilder {
    title: String,
    made_by: String,
    inputs: Vec<String>,
    strings: Strings,
    shapes: Strings,
    flag_shape: HashMap<u32, u32>,
    rubrics: Vec<Rubric>,
    /// The row standing for each (rubric, session): its last grade.
    standing: HashMap<(u32, String), usize>,
    rows: Vec<Row>,
    explained: bool,
    /// Finds the pack of a rubric the results name.
    find_pack: FindPack,
}

impl ReportBuilder {
    /// A page titled `title`, over `inputs` (as the page names them); `find_pack` gives a
    /// rubric's pack when it is at hand with the results' digest.
    pub fn new(title: String, made_by: String, inputs: Vec<String>, find_pack: FindPack) -> Self {
        ReportBuilder {
            title,
            made_by,
            inputs,
            strings: Strings::default(),
            shapes: Strings::default(),
            flag_shape: HashMap::new(),
            rubrics: Vec::new(),
            standing: HashMap::new(),
            rows: Vec::new(),
            explained: true,
            find_pack,
        }
    }

    fn rubric_of(&mut self, r: &GradeResult) -> u32 {
        let found = self.rubrics.iter().position(|x| {
            x.id == r.rubric.id && x.version == r.rubric.version && x.digest == r.rubric.digest
        });
        let i = match found {
            Some(i) => i,
            None => {
                let pack = (self.find_pack)(&r.rubric).unwrap_or_default();
                self.rubrics.push(Rubric {
                    id: r.rubric.id.clone(),
                    version: r.rubric.version.clone(),
                    name: pack.name,
                    dimensions: pack.dimensions,
                    letters: pack.letters,
                    stats: None,
                    digest: r.rubric.digest.clone(),
                });
                self.rubrics.len() - 1
            }
        };
        let rubric = &mut self.rubrics[i];
        // Dimensions the pack does not name (or all of them, without the pack), as results
        // give them.
        for (id, d) in &r.dimensions {
            if !rubric.dimensions.iter().any(|x| &x.id == id) {
                rubric.dimensions.push(DimensionInfo {
                    id: id.clone(),
                    name: String::new(),
                    description: String::new(),
                    max: d.max.0,
                });
            }
        }
        if let Some(g) = &r.grade {
            if !rubric.letters.contains(g) {
                rubric.letters.push(g.clone());
            }
        }
        u32::try_from(i).unwrap_or(u32::MAX)
    }

    /// Takes the next result (a later grade of the same session by the same rubric stands
    /// in its place in the figures; both stay in the table).
    pub fn add(&mut self, r: &GradeResult) {
        let rubric = self.rubric_of(r);
        let dims: Vec<String> = self.rubrics[rubric as usize]
            .dimensions
            .iter()
            .map(|d| d.id.clone())
            .collect();
        let scores = dims
            .iter()
            .map(|id| {
                r.dimensions
                    .get(id)
                    .filter(|d| !d.not_applicable)
                    .map(|d| d.score)
            })
            .collect();
        let mut flags = Vec::with_capacity(r.flags.len());
        for f in &r.flags {
            let i = self.strings.id(f);
            if !self.flag_shape.contains_key(&i) {
                let shape = self.shapes.id(&crate::summary::shape_of(f));
                self.flag_shape.insert(i, shape);
            }
            flags.push(i);
        }
        let strings = &mut self.strings;
        let dimensions = dims
            .iter()
            .map(|id| match r.dimensions.get(id) {
                Some(d) => DimensionDetail {
                    evidence: d.evidence.iter().map(|e| strings.id(e)).collect(),
                    label: d.label.as_deref().map(|l| strings.id(l)),
                    rationale: d.rationale.clone(),
                    not_applicable: d.not_applicable,
                },
                None => DimensionDetail {
                    not_applicable: true,
                    ..Default::default()
                },
            })
            .collect();
        let explain = r.explain.as_ref().map(|explain| {
            let mut rows = Vec::new();
            for (dim, traces) in explain {
                let d = dims.iter().position(|x| x == dim).unwrap_or(usize::MAX);
                for t in traces {
                    let entries = t.entries.iter().map(|e| {
                        Trimmed(vec![
                            Cell::Int(e.position as u64),
                            Cell::Int(u64::from(strings.id(&e.operation))),
                            Cell::Opt(e.file.as_deref().map(|f| u64::from(strings.id(f)))),
                            Cell::Opt(e.line),
                            Cell::Opt(e.row_id),
                        ])
                    });
                    let entries = Cell::List(entries.collect());
                    rows.push(Trimmed(vec![
                        Cell::Int(d as u64),
                        Cell::Int(u64::from(strings.id(&t.rule))),
                        Cell::Score(t.points),
                        Cell::Ids(t.evidence.iter().map(|e| strings.id(e)).collect()),
                        Cell::Ids(t.flags.iter().map(|f| strings.id(f)).collect()),
                        entries,
                    ]));
                }
            }
            rows
        });
        self.explained &= explain.is_some();
        let graded = r.max_score.0 > 0.0;
        let row = Row(
            r.session_id.clone(),
            rubric,
            r.percent.filter(|_| graded),
            r.grade.as_deref().filter(|_| graded).map(|g| strings.id(g)),
            r.total_score,
            r.max_score,
            strings.id(&r.timestamp),
            r.entry_count,
            scores,
            flags,
            r.source.as_deref().map(|s| strings.id(s)),
            true,
            // A detail of numbers and known texts: it cannot fail to be JSON.
            serde_json::to_string(&Detail {
                dimensions,
                explain,
                task: r.task_id.clone(),
                applied: r.applied_note(),
                skipped: r.skipped_lines,
            })
            .unwrap_or_default(),
        );
        let at = self.rows.len();
        if let Some(before) = self.standing.insert((rubric, r.session_id.clone()), at) {
            self.rows[before].11 = false;
        }
        self.rows.push(row);
    }

    /// Whether no result was taken.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn finish(mut self) -> PageData {
        for i in 0..self.rubrics.len() {
            let stats = stats_of(
                &self.rubrics[i],
                i as u32,
                &self.rows,
                &self.strings.list,
                &self.flag_shape,
            );
            self.rubrics[i].stats = Some(stats);
        }
        let trend = trend_of(&self.rubrics, &self.rows, &self.strings.list);
        let history = self.rows.iter().any(|r| !r.11);
        PageData {
            title: self.title,
            made_by: self.made_by,
            inputs: self.inputs,
            history,
            explained: self.explained && !self.rows.is_empty(),
            strings: self.strings.list,
            shapes: self.shapes.list,
            flag_shape: self.flag_shape,
            rubrics: self.rubrics,
            sessions: self.rows,
            trend,
        }
    }

    /// The page.
    pub fn page(self) -> Result<String, serde_json::Error> {
        let data = self.finish();
        let json = serde_json::to_string(&data)?;
        let title = crate::page::html_escape(&format!("grade report: {}", data.title));
        Ok(crate::page::fill(TEMPLATE, &[("TITLE", &title)], &json))
    }
}

/// `grade report`: the page over results files or grades histories.
pub fn run(args: &ReportArgs) -> Result<(), CliError> {
    let files = if args.files.is_empty() {
        vec![PathBuf::from(crate::DEFAULT_GRADES)]
    } else {
        args.files.clone()
    };
    let shown: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let title = args.title.clone().unwrap_or_else(|| shown.join(", "));
    let search = args.packs.search.rubric_path.clone();
    let policy = args.packs.policy();
    let find_pack = move |rubric: &grade_engine::result::RubricRef| {
        let files = grade_engine::locate_pack(&rubric.id, &search).ok()?;
        let pack = grade_engine::pack::compile_pack_with(&files, policy).ok()?;
        (pack.digest == rubric.digest).then(|| PackInfo::of(&pack))
    };
    let mut builder = ReportBuilder::new(title, "grade report".into(), shown, Box::new(find_pack));
    for path in &files {
        let before = builder.rows.len();
        read_results(path, &mut |r| builder.add(&r))?;
        if builder.rows.len() == before {
            crate::warn(&format!("`{}` holds no results", path.display()));
        }
    }
    if builder.is_empty() {
        return Err(CliError::Usage(format!(
            "no results to report: {} held none (grade with `--format jsonl -o FILE`, or record to a grades file)",
            files
                .iter()
                .map(|f| format!("`{}`", f.display()))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if !builder.explained {
        crate::note("note: the results carry no rule traces (grade with `--explain` to open each rule's points and entries in the page)");
    }
    write_page(builder, &args.html)
}

/// Writes the page to `path` (`-`: standard output).
pub fn write_page(builder: ReportBuilder, path: &Path) -> Result<(), CliError> {
    let sessions = builder.rows.len();
    let page = builder.page().map_err(CliError::Json)?;
    if path.as_os_str() == "-" {
        return crate::write_stdout(page.as_bytes());
    }
    std::fs::write(path, page.as_bytes()).map_err(|source| CliError::Output {
        path: path.to_owned(),
        source,
    })?;
    crate::note(&format!(
        "wrote {} ({sessions} session{}, {})",
        path.display(),
        if sessions == 1 { "" } else { "s" },
        size(page.len())
    ));
    Ok(())
}

fn size(bytes: usize) -> String {
    let mut out = String::new();
    if bytes >= 1 << 20 {
        let _ = write!(out, "{:.1} MiB", bytes as f64 / f64::from(1 << 20));
    } else {
        let _ = write!(out, "{} KiB", bytes.div_ceil(1 << 10));
    }
    out
}

/// Hands each result of a file to `take`: a JSON document (`--format json`, an array or one
/// result) or JSON lines (`--format jsonl`, a grades file). A result as CLEO's own grader
/// writes it (no rubric, no percent) is completed as `grade compare` completes it.
fn read_results(path: &Path, take: &mut dyn FnMut(GradeResult)) -> Result<(), CliError> {
    let not_found = || CliError::Usage(format!("results file `{}` does not exist", path.display()));
    if path.as_os_str() != "-" && !path.exists() {
        return Err(not_found());
    }
    let rubric = grade_engine::compare::recorded::file_label(path);
    let convert = |value: serde_json::Value| -> Result<GradeResult, String> {
        grade_engine::compare::recorded::read_result(value, &rubric).1
    };
    if starts_with_bracket(path) {
        let text = crate::input::read_text(path, crate::input::MAX_DOCUMENT, "results file")
            .map_err(|source| CliError::GradesRead {
                path: path.to_owned(),
                source,
            })?
            .ok_or_else(not_found)?;
        let values: Vec<serde_json::Value> =
            serde_json::from_str(&text).map_err(|e| CliError::GradesLine {
                path: path.to_owned(),
                line: e.line(),
                message: format!("not a JSON array of results: {e}"),
            })?;
        for (i, value) in values.into_iter().enumerate() {
            let r = convert(value).map_err(|message| {
                CliError::Usage(format!(
                    "`{}`: result {} of the array is not a result: {message}",
                    path.display(),
                    i + 1
                ))
            })?;
            take(r);
        }
        return Ok(());
    }
    let lines = crate::grades::read_json_lines_as(path, |line, value| (line, convert(value)))?
        .ok_or_else(not_found)?;
    for (line, read) in lines {
        take(read.map_err(|message| CliError::GradesLine {
            path: path.to_owned(),
            line,
            message,
        })?);
    }
    Ok(())
}

/// Whether a file's first character that is not white space is `[` (a JSON document of
/// results, as `--format json` prints them).
fn starts_with_bracket(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(4096).read_to_end(&mut head).is_err() {
        return false;
    }
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head);
    head.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'[')
}

/// The page of a grading run (`--html FILE`), its results to be added as they are graded.
pub fn for_run(plan: &crate::plan::GradePlan) -> ReportBuilder {
    let pack = &plan.pack;
    let source = plan.source_path().display().to_string();
    let info = PackInfo::of(pack);
    let (id, digest) = (pack.id.clone(), pack.digest.clone());
    ReportBuilder::new(
        format!("{} · {source}", pack.id),
        format!("grade --rubric {}", pack.id),
        vec![source],
        Box::new(move |rubric: &grade_engine::result::RubricRef| {
            (rubric.id == id && rubric.digest == digest).then(|| info.clone())
        }),
    )
}

#[cfg(test)]
mod tests;
