//! `grade calibrate`: a judge's results against people's labels. The flags become the
//! inputs (results or judgments, labels from a file or from Langfuse), the engine's
//! `calibrate` module computes the figures, and this file renders them as text, JSON or
//! HTML and applies the gate (`--min-kappa`, `--min-alpha`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use grade_engine::calibrate::{
    self, Calibration, DimensionCalibration, Figure, JudgeResults, Judged, Label,
};
use grade_engine::pack::DimensionKind;
use grade_engine::CompiledPack;
use serde_json::Value;

use crate::args::{CalibrateArgs, CompareFormat};
use crate::error::CliError;
use crate::render::{self, use_color, Paint};

fn usage(message: impl Into<String>) -> CliError {
    CliError::Usage(message.into())
}

/// A figure a gate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gauge {
    /// Cohen's κ, quadratic-weighted (categorical dimensions).
    Kappa,
    /// Krippendorff's α of the judge and the people.
    Alpha,
}

impl Gauge {
    fn flag(self) -> &'static str {
        match self {
            Gauge::Kappa => "--min-kappa",
            Gauge::Alpha => "--min-alpha",
        }
    }
}

/// One `--min-kappa [DIMENSION=]X` or `--min-alpha [DIMENSION=]X`.
#[derive(Debug, Clone, PartialEq)]
struct Gate {
    gauge: Gauge,
    /// `None`: every dimension that has pairs.
    dimension: Option<String>,
    min: f64,
}

fn gates(args: &CalibrateArgs, pack: &CompiledPack) -> Result<Vec<Gate>, CliError> {
    let mut out = Vec::new();
    for (gauge, given) in [
        (Gauge::Kappa, &args.min_kappa),
        (Gauge::Alpha, &args.min_alpha),
    ] {
        for text in given {
            let (dimension, value) = match text.rsplit_once('=') {
                Some((d, v)) => (Some(d.trim().to_owned()), v),
                None => (None, text.as_str()),
            };
            let min: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| (-1.0..=1.0).contains(v))
                .ok_or_else(|| {
                    usage(format!(
                        "`{} {text}`: the least value is a number from -1 to 1 (`0.6`, or `DIMENSION=0.6`)",
                        gauge.flag()
                    ))
                })?;
            if let Some(d) = &dimension {
                let aggregate = pack.aggregate.as_ref().is_some_and(|(id, _)| id == d);
                let found = pack.judged_dimensions().find(|x| x.id == *d);
                match (found, gauge) {
                    (None, Gauge::Alpha) if aggregate => {}
                    (None, _) => {
                        return Err(usage(format!(
                            "`{} {text}`: rubric `{}` judges no dimension `{d}` (it judges {})",
                            gauge.flag(),
                            pack.id,
                            pack.judged_dimensions()
                                .map(|x| format!("`{}`", x.id))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )))
                    }
                    (Some(x), Gauge::Kappa)
                        if !matches!(x.kind, DimensionKind::Categorical { .. }) =>
                    {
                        return Err(usage(format!(
                            "`--min-kappa {text}`: `{d}` is numeric and has no κ; gate it with `--min-alpha {d}=X`"
                        )))
                    }
                    _ => {}
                }
            }
            out.push(Gate {
                gauge,
                dimension,
                min,
            });
        }
    }
    Ok(out)
}

/// The dimensions below a gate, each with why, for the first judge (the results as graded).
fn failures(gates: &[Gate], calibration: &Calibration) -> Vec<String> {
    let Some(judge) = calibration.judges.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for gate in gates {
        for d in &judge.dimensions {
            let figure = match gate.gauge {
                Gauge::Kappa => match &d.categorical {
                    Some(c) => &c.kappa_quadratic,
                    None => continue,
                },
                Gauge::Alpha => &d.alpha,
            };
            match &gate.dimension {
                Some(named) if *named != d.dimension => continue,
                // A gate over all dimensions passes over those nobody labelled.
                None if d.pairs == 0 => continue,
                _ => {}
            }
            let name = match gate.gauge {
                Gauge::Kappa => "quadratic κ",
                Gauge::Alpha => "α",
            };
            match (figure.value, &figure.reason) {
                (Some(v), _) if v >= gate.min => {}
                (Some(v), _) => out.push(format!(
                    "`{}`: {name} {} is below {}",
                    d.dimension,
                    fixed(v),
                    gate.min
                )),
                (None, reason) => out.push(format!(
                    "`{}`: {name} is undefined ({}), so it cannot reach {}",
                    d.dimension,
                    reason.as_deref().unwrap_or("no pairs"),
                    gate.min
                )),
            }
        }
    }
    out
}

/// A name for the judge of a results file: `NAME=` as given, else the model the results
/// name (`panel` for a panel's), else the file.
fn split_named(text: &str) -> (Option<&str>, &str) {
    match text.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() && !Path::new(text).exists() => {
            (Some(name), file)
        }
        _ => (None, text),
    }
}

fn read_results(spec: &str, pack: &CompiledPack) -> Result<Vec<JudgeResults>, CliError> {
    let (name, file) = split_named(spec);
    let path = PathBuf::from(file);
    let lines = crate::grades::read_json_lines_as(&path, |line, value| {
        (format!("{}:{line}", path.display()), value)
    })?
    .ok_or_else(|| crate::input::missing("results file", &path))?;
    if lines.is_empty() {
        return Err(usage(format!(
            "results file `{}` holds no results",
            path.display()
        )));
    }
    // A panel's results are the panel's; each of its judges is named in them.
    let model = lines.iter().find_map(|(_, v)| {
        v.pointer("/judge/model")
            .and_then(Value::as_str)
            .or(v.get("panel").map(|_| "panel"))
    });
    let name = name
        .map(str::to_owned)
        .or_else(|| model.map(str::to_owned))
        .unwrap_or_else(|| path.display().to_string());
    calibrate::judges_from_results(&lines, pack, &name).map_err(|e| usage(e.to_string()))
}

fn read_judgments(spec: &str, pack: &CompiledPack) -> Result<JudgeResults, CliError> {
    let (name, file) = split_named(spec);
    let path = PathBuf::from(file);
    let text = crate::input::read_text(&path, crate::input::MAX_DOCUMENT, "judgments file")
        .map_err(|e| usage(format!("cannot read judgments `{}`: {e}", path.display())))?
        .ok_or_else(|| crate::input::missing("judgments file", &path))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "judgments `{}` is not JSON ({e}); it is an object mapping each session id to its judgment",
            path.display()
        ))
    })?;
    let Value::Object(sessions) = value else {
        return Err(usage(format!(
            "judgments `{}` is {}, not an object mapping each session id to its judgment",
            path.display(),
            grade_engine::entry::json_kind(&value)
        )));
    };
    let mut out = JudgeResults {
        judge: name.map_or_else(|| path.display().to_string(), str::to_owned),
        sessions: indexmap::IndexMap::new(),
    };
    for (session, judgment) in sessions {
        let origin = format!("{} (session `{session}`)", path.display());
        let judgment =
            grade_engine::judgment::parse_judgment(&judgment.to_string(), &origin, pack)?;
        let judged = judgment
            .dimensions
            .into_iter()
            .map(|(d, j)| {
                (
                    d,
                    Judged {
                        score: j.score,
                        rationale: j.rationale,
                        evidence: j.evidence,
                    },
                )
            })
            .collect();
        out.sessions.insert(session, judged);
    }
    Ok(out)
}

fn read_labels(spec: &str, args: &CalibrateArgs) -> Result<Vec<Label>, CliError> {
    if let Some(remote) = crate::langfuse::scores::Wanted::parse(spec) {
        let remote = remote?;
        return crate::langfuse::scores::labels(&remote, args.timeout);
    }
    let path = PathBuf::from(spec);
    let text = crate::input::read_text(&path, crate::input::MAX_DOCUMENT, "labels file")
        .map_err(|e| usage(format!("cannot read labels `{}`: {e}", path.display())))?
        .ok_or_else(|| crate::input::missing("labels file", &path))?;
    let labels = calibrate::parse_labels(&text, &path.display().to_string())
        .map_err(|e| usage(e.to_string()))?;
    if labels.is_empty() {
        return Err(usage(format!("labels file `{spec}` holds no labels")));
    }
    Ok(labels)
}

pub fn run(args: &CalibrateArgs) -> Result<(), CliError> {
    if args.results.is_empty() && args.judgments.is_empty() {
        return Err(usage(
            "give the judge's results (`--results FILE`, from `grade … --format jsonl`) or its judgments (`--judgments FILE`)",
        ));
    }
    let files = grade_engine::locate_pack(&args.rubric, &args.packs.search.rubric_path)?;
    let pack = grade_engine::pack::compile_pack_with(&files, args.packs.policy())?;
    if pack.judge.is_none() {
        return Err(usage(format!(
            "rubric `{}` has no judged dimensions: there is no judge to calibrate",
            pack.id
        )));
    }
    let gates = gates(args, &pack)?;
    let mut judges = Vec::new();
    for spec in &args.results {
        judges.extend(read_results(spec, &pack)?);
    }
    for spec in &args.judgments {
        judges.push(read_judgments(spec, &pack)?);
    }
    let labels = read_labels(&args.labels, args)?;
    let options = calibrate::Options {
        resamples: args.resamples as usize,
        seed: args.seed,
        disagreements: args.top,
    };
    let calibration = calibrate::calibrate(&pack, &judges, &labels, &options);
    for w in &calibration.warnings {
        eprintln!("warning: {}", render::for_stderr(&warning_text(w)));
    }
    let failed = failures(&gates, &calibration);
    let out = match args.format {
        CompareFormat::Human => human(&calibration, &pack, &failed, use_color(args.color)),
        CompareFormat::Json => {
            let mut doc = serde_json::to_value(&calibration).map_err(CliError::Json)?;
            doc["gate"] = serde_json::json!({
                "passed": failed.is_empty(),
                "failures": failed,
            });
            let mut text = serde_json::to_string_pretty(&doc).map_err(CliError::Json)?;
            text.push('\n');
            text
        }
    };
    if let Some(path) = &args.html {
        let page = crate::calibrate_html::page(&calibration, &pack, &failed);
        std::fs::write(path, page).map_err(|e| {
            usage(format!(
                "cannot write the HTML report `{}`: {e}",
                path.display()
            ))
        })?;
    }
    match &args.output {
        Some(path) if path.as_os_str() != "-" => std::fs::write(path, out)
            .map_err(|e| usage(format!("cannot write `{}`: {e}", path.display())))?,
        _ => crate::write_stdout(out.as_bytes())?,
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::CheckFailed(format!(
            "calibration below the gate: {}",
            failed.join("; ")
        )))
    }
}

fn warning_text(w: &calibrate::Warning) -> String {
    format!(
        "{} ({}): {}",
        w.message,
        w.count,
        warning_names(w, |n| format!("`{n}`"))
    )
}

/// The names a warning shows, each as `quote` writes it, and how many more it counts.
pub(crate) fn warning_names(w: &calibrate::Warning, quote: impl Fn(&str) -> String) -> String {
    let shown = w
        .names
        .iter()
        .map(|n| quote(n))
        .collect::<Vec<_>>()
        .join(", ");
    if w.count > w.names.len() {
        format!("{shown} and {} more", w.count - w.names.len())
    } else {
        shown
    }
}

/// A figure on three decimals, `-0.000` written as `0.000`.
fn fixed(v: f64) -> String {
    let text = format!("{v:.3}");
    if text == "-0.000" {
        "0.000".to_owned()
    } else {
        text
    }
}

fn figure(f: &Figure) -> String {
    match (f.value, &f.reason, &f.interval) {
        (Some(v), _, Some(i)) => format!("{} [{}, {}]", fixed(v), fixed(i.low), fixed(i.high)),
        (Some(v), _, None) => format!("{} (no interval)", fixed(v)),
        (None, Some(reason), _) => format!("undefined: {reason}"),
        (None, None, _) => "undefined".to_owned(),
    }
}

fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

/// A score as shown: a category's value with its label.
pub(crate) fn shown_score(pack: &CompiledPack, dimension: &str, score: f64) -> String {
    let number = grade_engine::entry::js_number((score * 1000.0).round() / 1000.0);
    match pack
        .judged_dimensions()
        .find(|d| d.id == dimension)
        .map(|d| &d.kind)
    {
        Some(DimensionKind::Categorical { categories }) => {
            match categories.iter().find(|c| c.1 == score) {
                Some((label, _)) => format!("{number} ({label})"),
                None => number,
            }
        }
        _ => number,
    }
}

fn human(c: &Calibration, pack: &CompiledPack, failed: &[String], color: bool) -> String {
    let paint = Paint(color);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} {} against {} label{} by {} annotator{} ({}); {} session{} with results",
        paint.bold("calibration of"),
        render::escape_controls(&pack.id),
        render::escape_controls(&pack.version),
        c.labels,
        if c.labels == 1 { "" } else { "s" },
        c.annotators.len(),
        if c.annotators.len() == 1 { "" } else { "s" },
        render::escape_controls(&c.annotators.join(", ")),
        c.results,
        if c.results == 1 { "" } else { "s" },
    );
    let _ = writeln!(
        out,
        "95% intervals: bootstrap over sessions, {} resamples, seed {}",
        c.resamples, c.seed
    );
    for judge in &c.judges {
        let _ = writeln!(
            out,
            "\n{} `{}`",
            paint.bold("judge"),
            render::escape_controls(&judge.judge)
        );
        for d in &judge.dimensions {
            dimension_text(&mut out, d, &paint);
        }
    }
    if !c.disagreements.is_empty() {
        let _ = writeln!(
            out,
            "\n{} (judge `{}` against the annotators' mean):",
            paint.bold("where the judge disagrees most"),
            render::escape_controls(c.judges.first().map_or("", |j| j.judge.as_str()))
        );
        for d in &c.disagreements {
            let people = d
                .human_scores
                .iter()
                .map(|h| {
                    format!(
                        "{} {}",
                        h.annotator,
                        shown_score(pack, &d.dimension, h.score)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                out,
                "  {} {}: judge {}, people {} ({}); gap {:.0}% of the scale",
                render::escape_controls(&d.session_id),
                render::escape_controls(&d.dimension),
                shown_score(pack, &d.dimension, d.judge_score),
                grade_engine::entry::js_number((d.human_mean * 1000.0).round() / 1000.0),
                render::escape_controls(&people),
                d.gap * 100.0
            );
            if !d.rationale.is_empty() {
                let _ = writeln!(
                    out,
                    "    rationale: {}",
                    render::escape_controls(&d.rationale)
                );
            }
            for e in &d.evidence {
                let _ = writeln!(out, "    evidence: {}", render::escape_controls(e));
            }
        }
    }
    if !failed.is_empty() {
        let _ = writeln!(out, "\n{}", paint.red("below the gate:"));
        for f in failed {
            let _ = writeln!(out, "  {}", render::escape_controls(f));
        }
    }
    out
}

fn dimension_text(out: &mut String, d: &DimensionCalibration, paint: &Paint) {
    let _ = writeln!(
        out,
        "  {} ({}, {} pair{} over {} session{})",
        paint.bold(&render::escape_controls(&d.dimension)),
        d.kind,
        d.pairs,
        if d.pairs == 1 { "" } else { "s" },
        d.sessions,
        if d.sessions == 1 { "" } else { "s" },
    );
    if let Some(cat) = &d.categorical {
        let _ = writeln!(out, "    κ quadratic     {}", figure(&cat.kappa_quadratic));
        let _ = writeln!(out, "    κ unweighted    {}", figure(&cat.kappa));
        let _ = writeln!(
            out,
            "    agreement       exact {}, within one category {}",
            percent(cat.exact),
            percent(cat.within_one)
        );
    }
    if let Some(num) = &d.numeric {
        let _ = writeln!(out, "    Pearson r       {}", figure(&num.pearson));
        let _ = writeln!(out, "    Spearman ρ      {}", figure(&num.spearman));
    }
    let signed = |v: Option<f64>| {
        v.map_or_else(
            || "-".to_owned(),
            |v| {
                let t = fixed(v);
                if v > 0.0 && t != "0.000" {
                    format!("+{t}")
                } else {
                    t
                }
            },
        )
    };
    let _ = writeln!(
        out,
        "    difference      mean absolute {}, mean judge − people {}",
        d.mae.map_or_else(|| "-".to_owned(), fixed),
        signed(d.bias)
    );
    let _ = writeln!(out, "    α judge+people  {}", figure(&d.alpha));
    let _ = writeln!(out, "    α people alone  {}", figure(&d.alpha_annotators));
    if let Some(cat) = &d.categorical {
        if d.pairs > 0 {
            let labels: Vec<String> = cat
                .confusion
                .categories
                .iter()
                .map(|l| render::escape_controls(l).into_owned())
                .collect();
            let width = labels
                .iter()
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(1)
                .max(5);
            let _ = writeln!(out, "    confusion (rows people, columns judge):");
            let mut head = format!("      {:width$}", "");
            for l in &labels {
                let _ = write!(head, " {l:>width$}");
            }
            let _ = writeln!(out, "{}", head.trim_end());
            for (l, row) in labels.iter().zip(&cat.confusion.matrix) {
                let mut line = format!("      {l:width$}");
                for n in row {
                    let _ = write!(line, " {n:>width$}");
                }
                let _ = writeln!(out, "{line}");
            }
        }
    }
}
