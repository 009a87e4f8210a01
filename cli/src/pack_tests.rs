//! `grade rubric test`: a pack's own fixtures, graded and compared with their expectations.
//!
//! A fixture is any file under the pack's `tests/` folder (an audit log in a format the
//! engine reads) except `*.expected.jsonl` and notes (`*.md`, `*.txt`); its expectation is
//! `<name>.expected.jsonl` beside it: one result per session, in order of first appearance.
//! Compared per session: `totalScore`, `maxScore`, `entryCount`, `flags` in order, and each
//! dimension's `score`, `max`, whether it applies, and `evidence` in order.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use grade_engine::judgment::Judgment;
use grade_engine::result::Score;
use grade_engine::source::Input;
use grade_engine::{
    CompiledPack, GradeOptions, GradeResult, PackOrigin, ReadOptions, Registry, SessionFilter,
};
use serde_json::Value;

use crate::args::RubricTestArgs;
use crate::error::CliError;
use crate::write_stdout;

const EXPECTED_SUFFIX: &str = ".expected.jsonl";

struct Fixture {
    /// As shown to the user: `tests/basic.jsonl`.
    name: String,
    source: PathBuf,
    expected: PathBuf,
    /// For packs with judged dimensions: `NAME.judgments.json`, an object mapping each
    /// session id of the fixture to its judgment (one object, or an array of chunks).
    judgments: PathBuf,
}

const JUDGMENTS_SUFFIX: &str = ".judgments.json";

/// Built-in packs carry their fixtures inside the binary; they are written to a private
/// temporary folder to be read like any other source, and removed afterwards.
struct Unpacked(PathBuf);

impl Drop for Unpacked {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(
    args: &RubricTestArgs,
    search_path: &[PathBuf],
    policy: grade_engine::plugin::PluginPolicy,
) -> Result<(), CliError> {
    let files = grade_engine::locate_pack(&args.pack, search_path)?;
    let pack = grade_engine::pack::compile_pack_with(&files, policy)?;
    let (tests_dir, _unpacked) = match &pack.origin {
        PackOrigin::Folder(dir) => (dir.join("tests"), None),
        PackOrigin::Builtin(id) => {
            if args.update {
                return Err(CliError::Usage(format!(
                    "`--update` rewrites a pack's files, and `{id}` is built into the binary; run it on the pack's folder (`rubrics/{id}`)"
                )));
            }
            let dir =
                std::env::temp_dir().join(format!("grade-rubric-test-{}-{id}", std::process::id()));
            let unpacked = Unpacked(dir.clone());
            for (name, text) in grade_engine::builtin_pack_tests(id) {
                let path = dir.join("tests").join(name);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|source| CliError::Io {
                        path: parent.to_owned(),
                        source,
                    })?;
                }
                std::fs::write(&path, text).map_err(|source| CliError::Io {
                    path: path.clone(),
                    source,
                })?;
            }
            (dir.join("tests"), Some(unpacked))
        }
    };
    let fixtures = discover(&tests_dir)?;
    // A fixture in a format of the pack's plugins is read by that plugin.
    let registry = Registry::with_plugins_of(&pack)
        .map_err(|e| CliError::Usage(format!("rubric `{}`: {e}", pack.id)))?;
    if fixtures.is_empty() {
        return Err(CliError::CheckFailed(format!(
            "pack `{}` has no test fixtures in `{}` (add `tests/NAME.jsonl` with `tests/NAME{EXPECTED_SUFFIX}`)",
            pack.id,
            tests_dir.display()
        )));
    }

    let mut out = String::new();
    let (mut passed, mut failed, mut updated) = (0usize, 0usize, 0usize);
    let mut coverage = Coverage::new(&pack);
    'fixtures: for fixture in &fixtures {
        // A fixture in a format of the pack's plugins is read by that plugin.
        let sessions = registry
            .read(
                &Input::File(&fixture.source),
                None,
                &SessionFilter::All,
                &ReadOptions::default(),
            )?
            .sessions;
        let options = GradeOptions {
            now: 0,
            explain: true,
        };
        let judgments = read_judgments(&fixture.judgments, &pack)?;
        let mut actual = Vec::new();
        for session in &sessions {
            let judgment = judgments.get(&session.id);
            if judgment.is_none() && pack.judge.is_some() {
                return Err(CliError::Usage(format!(
                    "{}: session `{}` has no judgment in `{}`, and rubric `{}` scores dimensions from one",
                    fixture.name,
                    session.id,
                    fixture.judgments.display(),
                    pack.id
                )));
            }
            // A rule that cannot grade a fixture is a failed test, not a usage error.
            let result = match pack.grade_with(session, judgment, &options) {
                Ok(result) => result,
                Err(err) => {
                    failed += sessions.len();
                    let _ = writeln!(
                        out,
                        "FAIL {} session `{}`: {err}\n",
                        fixture.name, session.id
                    );
                    continue 'fixtures;
                }
            };
            coverage.record(&result);
            actual.push(result);
        }
        if args.update {
            write_expected(&fixture.expected, &actual)?;
            updated += actual.len();
            continue;
        }
        let expected = match read_expected(&fixture.expected)? {
            Some(expected) => expected,
            None => {
                failed += actual.len().max(1);
                let _ = writeln!(
                    out,
                    "FAIL {}: no expectation `{}` (run with `--update` to write it from the current results)\n",
                    fixture.name,
                    fixture.expected.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
                );
                continue;
            }
        };
        let mut by_id: BTreeMap<String, &Value> = BTreeMap::new();
        for e in &expected {
            by_id.insert(e["sessionId"].as_str().unwrap_or_default().to_owned(), e);
        }
        for result in &actual {
            let got = compared_fields(result);
            match by_id.remove(&result.session_id) {
                None => {
                    failed += 1;
                    let _ = writeln!(
                        out,
                        "FAIL {} session `{}`: not in the expectation\n",
                        fixture.name, result.session_id
                    );
                }
                Some(want) => {
                    let diff = diff_results(want, &got);
                    if diff.is_empty() {
                        passed += 1;
                    } else {
                        failed += 1;
                        let _ =
                            writeln!(out, "FAIL {} session `{}`", fixture.name, result.session_id);
                        out.push_str(&diff);
                        out.push('\n');
                    }
                }
            }
        }
        for missing in by_id.keys() {
            failed += 1;
            let _ = writeln!(
                out,
                "FAIL {} session `{missing}`: expected, but the fixture has no such session\n",
                fixture.name
            );
        }
    }

    if args.coverage || args.min_coverage.is_some() {
        out.push_str(&coverage.table());
    }
    let percent = coverage.percent();
    if args.update {
        let _ = writeln!(
            out,
            "updated the expectations of {updated} session{} in {} fixture{}",
            plural_s(updated),
            fixtures.len(),
            plural_s(fixtures.len())
        );
    } else {
        let _ = writeln!(out, "{passed} passed, {failed} failed");
    }
    write_stdout(out.as_bytes())?;
    if failed > 0 {
        return Err(CliError::CheckFailed(format!(
            "{failed} pack test{} failed",
            plural_s(failed)
        )));
    }
    if let Some(min) = args.min_coverage {
        if percent < min {
            return Err(CliError::CheckFailed(format!(
                "rule coverage {}% is below the required {}%: {} never fired",
                grade_engine::entry::js_number(percent),
                grade_engine::entry::js_number(min),
                coverage.never_fired().join(", ")
            )));
        }
    }
    Ok(())
}

fn read_judgments(
    path: &Path,
    pack: &CompiledPack,
) -> Result<BTreeMap<String, Judgment>, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => {
            return Err(CliError::Io {
                path: path.to_owned(),
                source,
            })
        }
    };
    let shown = path.display().to_string();
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text) else {
        return Err(CliError::Usage(format!(
            "{shown}: judgments are a JSON object mapping session ids to judgments"
        )));
    };
    map.into_iter()
        .map(|(session, judgment)| {
            let origin = format!("{shown} (session `{session}`)");
            let parsed =
                grade_engine::judgment::parse_judgment(&judgment.to_string(), &origin, pack)?;
            Ok((session, parsed))
        })
        .collect()
}

fn plural_s(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn discover(dir: &Path) -> Result<Vec<Fixture>, CliError> {
    let mut fixtures = Vec::new();
    if !dir.is_dir() {
        return Ok(fixtures);
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(folder) = stack.pop() {
        let listing = std::fs::read_dir(&folder).map_err(|source| CliError::Io {
            path: folder.clone(),
            source,
        })?;
        for entry in listing {
            let entry = entry.map_err(|source| CliError::Io {
                path: folder.clone(),
                source,
            })?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if name.ends_with(EXPECTED_SUFFIX)
                || name.ends_with(JUDGMENTS_SUFFIX)
                || name.ends_with(".md")
                || name.ends_with(".txt")
                || name.starts_with('.')
            {
                continue;
            }
            let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
            let expected = path.with_file_name(format!("{stem}{EXPECTED_SUFFIX}"));
            let judgments = path.with_file_name(format!("{stem}{JUDGMENTS_SUFFIX}"));
            let shown = path
                .strip_prefix(dir.parent().unwrap_or(dir))
                .unwrap_or(&path)
                .display()
                .to_string();
            fixtures.push(Fixture {
                name: shown,
                source: path,
                expected,
                judgments,
            });
        }
    }
    fixtures.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(fixtures)
}

/// The fields a pack test compares, in the order of a result (what `--update` writes).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Expectation<'r> {
    session_id: &'r str,
    total_score: Score,
    max_score: Score,
    dimensions: &'r indexmap::IndexMap<String, grade_engine::result::DimensionScore>,
    flags: &'r [String],
    entry_count: usize,
}

fn expectation(r: &GradeResult) -> Expectation<'_> {
    Expectation {
        session_id: &r.session_id,
        total_score: r.total_score,
        max_score: r.max_score,
        dimensions: &r.dimensions,
        flags: &r.flags,
        entry_count: r.entry_count,
    }
}

fn compared_fields(r: &GradeResult) -> Value {
    serde_json::to_value(expectation(r)).unwrap_or(Value::Null)
}

pub fn write_expected(path: &Path, results: &[GradeResult]) -> Result<(), CliError> {
    let mut text = String::new();
    for r in results {
        text.push_str(&serde_json::to_string(&expectation(r)).map_err(CliError::Json)?);
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|source| CliError::Io {
        path: path.to_owned(),
        source,
    })
}

fn read_expected(path: &Path) -> Result<Option<Vec<Value>>, CliError> {
    Ok(crate::grades::read_json_lines(path)?
        .map(|lines| lines.into_iter().map(|(_, v)| v).collect()))
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A readable difference between an expected and an actual result; empty when they agree.
fn diff_results(want: &Value, got: &Value) -> String {
    let mut out = String::new();
    for key in ["totalScore", "maxScore", "entryCount"] {
        if !same(&want[key], &got[key]) {
            let _ = writeln!(out, "  {key}: expected {}, got {}", want[key], got[key]);
        }
    }
    diff_list(&mut out, "flags", &want["flags"], &got["flags"]);
    let empty = serde_json::Map::new();
    let want_dims = want["dimensions"].as_object().unwrap_or(&empty);
    let got_dims = got["dimensions"].as_object().unwrap_or(&empty);
    for (id, w) in want_dims {
        let Some(g) = got_dims.get(id) else {
            let _ = writeln!(
                out,
                "  dimension `{id}`: expected, but the pack has no such dimension"
            );
            continue;
        };
        for key in ["score", "max"] {
            if !same(&w[key], &g[key]) {
                let _ = writeln!(out, "  {id}.{key}: expected {}, got {}", w[key], g[key]);
            }
        }
        let applies = |d: &Value| d["notApplicable"] != Value::Bool(true);
        if applies(w) != applies(g) {
            let says = |d: &Value| {
                if applies(d) {
                    "applies"
                } else {
                    "not applicable"
                }
            };
            let _ = writeln!(out, "  {id}: expected {}, got {}", says(w), says(g));
        }
        diff_list(
            &mut out,
            &format!("{id}.evidence"),
            &w["evidence"],
            &g["evidence"],
        );
    }
    for id in got_dims.keys().filter(|id| !want_dims.contains_key(*id)) {
        let _ = writeln!(out, "  dimension `{id}`: not in the expectation");
    }
    out
}

/// Lines only expected get `-`, lines only produced get `+`, in order (a longest common
/// subsequence keeps the shared lines aligned).
fn diff_list(out: &mut String, label: &str, want: &Value, got: &Value) {
    let texts = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (texts(want), texts(got));
    if a == b {
        return;
    }
    let _ = writeln!(out, "  {label}:");
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            let _ = writeln!(out, "      {}", a[i]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            let _ = writeln!(out, "    - {}", a[i]);
            i += 1;
        } else {
            let _ = writeln!(out, "    + {}", b[j]);
            j += 1;
        }
    }
}

/// In how many fixture sessions each rule gave points, evidence or a flag.
struct Coverage {
    rules: Vec<(String, String)>,
    counts: BTreeMap<(String, String), [usize; 4]>,
}

impl Coverage {
    fn new(pack: &CompiledPack) -> Coverage {
        let rules = pack
            .dimensions
            .iter()
            .flat_map(|d| d.rules.iter().map(|r| (d.id.clone(), r.id.clone())))
            .collect();
        Coverage {
            rules,
            counts: BTreeMap::new(),
        }
    }

    fn record(&mut self, result: &GradeResult) {
        let Some(explain) = &result.explain else {
            return;
        };
        for (dimension, traces) in explain {
            for t in traces {
                let c = self
                    .counts
                    .entry((dimension.clone(), t.rule.clone()))
                    .or_default();
                if t.points.0 > 0.0 {
                    c[0] += 1;
                }
                if t.points.0 < 0.0 {
                    c[1] += 1;
                }
                if !t.flags.is_empty() {
                    c[2] += 1;
                }
                if t.points.0 != 0.0 || !t.flags.is_empty() || !t.evidence.is_empty() {
                    c[3] += 1;
                }
            }
        }
    }

    fn fired(&self, key: &(String, String)) -> usize {
        self.counts.get(key).map_or(0, |c| c[3])
    }

    fn percent(&self) -> f64 {
        if self.rules.is_empty() {
            return 100.0;
        }
        let fired = self.rules.iter().filter(|k| self.fired(k) > 0).count();
        grade_engine::result::percent_of(fired as f64, self.rules.len() as f64)
    }

    fn never_fired(&self) -> Vec<String> {
        self.rules
            .iter()
            .filter(|k| self.fired(k) == 0)
            .map(|(d, r)| format!("`{d}/{r}`"))
            .collect()
    }

    fn table(&self) -> String {
        let width = self
            .rules
            .iter()
            .map(|(d, r)| d.len() + r.len() + 1)
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = format!(
            "{:<width$}  {:>7}  {:>8}  {:>7}  {:>5}\n",
            "RULE", "AWARDED", "DEDUCTED", "FLAGGED", "FIRED"
        );
        for key in &self.rules {
            let c = self.counts.get(key).copied().unwrap_or_default();
            let name = format!("{}/{}", key.0, key.1);
            let mark = if c[3] == 0 { "  never" } else { "" };
            let _ = writeln!(
                out,
                "{name:<width$}  {:>7}  {:>8}  {:>7}  {:>5}{mark}",
                c[0], c[1], c[2], c[3]
            );
        }
        let fired = self.rules.iter().filter(|k| self.fired(k) > 0).count();
        let _ = writeln!(
            out,
            "coverage: {fired} of {} rules fired ({}%)",
            self.rules.len(),
            grade_engine::entry::js_number(self.percent())
        );
        out
    }
}
