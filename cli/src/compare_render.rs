//! `grade compare`'s outputs: the `--html` page, the JSON report, and the report for a
//! person (headline, dimensions, rules, the most changed sessions, what changed between the
//! packs, and what was not compared).

use std::fmt::Write as _;
use std::io::Write as _;

use grade_engine::compare::{self, Comparison, Status};

use crate::args::CompareFormat;
use crate::error::CliError;
use crate::plan::CompareOutput;
use crate::render::{self, Paint};

/// Writes the `--html` page, then the report on standard output.
pub fn deliver(output: &CompareOutput, report: &mut Comparison) -> Result<(), CliError> {
    if let Some(path) = &output.html {
        let page = crate::compare_html::page(report).map_err(CliError::Json)?;
        std::fs::write(path, page).map_err(|source| CliError::Output {
            path: path.clone(),
            source,
        })?;
    }
    match output.format {
        // Written as it is serialised: with every session listed (`--all` over a large log)
        // the report runs to megabytes, which a whole string would build, regrow and copy.
        CompareFormat::Json => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let written = match compare::write_json(&mut out, report) {
                Ok(()) => out.write_all(b"\n").and_then(|()| out.flush()),
                Err(e) if e.is_io() => Err(e.into()),
                Err(e) => return Err(CliError::Json(e)),
            };
            crate::stdout_written(written)
        }
        CompareFormat::Human => {
            crate::write_stdout(human(report, output.top, output.color).as_bytes())
        }
    }
}

/// The report a person reads: headline, dimensions, rules, the most changed sessions, and
/// what changed between the packs.
pub fn human(c: &Comparison, top: usize, color: bool) -> String {
    let p = Paint(color);
    let mut out = String::new();
    headline(&mut out, c, &p);
    dimensions(&mut out, c, &p);
    rules(&mut out, c, &p);
    sessions(&mut out, c, &p, top);
    if let Some(diff) = &c.rubric_diff {
        rubric_changes(&mut out, diff, &p);
    }
    not_compared(&mut out, c, &p);
    out
}

/// Up to five session ids, escaped as `grade` prints them, and `…` for the rest.
fn preview(ids: &[String]) -> String {
    compare::preview(ids, render::escape_controls)
}

fn num(v: f64) -> String {
    format!("{v:.2}")
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".to_owned(), num)
}

/// A percentage as given: `60`, `62.5`.
fn pct(v: f64) -> String {
    grade_engine::entry::js_number(v)
}

fn signed(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    if r > 0.0 {
        format!("+{r:.2}")
    } else if r == 0.0 {
        "0.00".to_owned()
    } else {
        format!("{r:.2}")
    }
}

fn pval(p: Option<f64>) -> String {
    match p {
        None => "-".to_owned(),
        Some(p) if p < 0.0001 => "<0.0001".to_owned(),
        Some(p) => format!("{p:.4}"),
    }
}

fn ci(c: Option<[f64; 2]>) -> String {
    match c {
        Some([lo, hi]) => format!("[{}, {}]", signed(lo), signed(hi)),
        None => "-".to_owned(),
    }
}

/// A change in green when it is a gain, in red when a loss.
fn shade(p: &Paint, v: f64, text: String) -> String {
    if v > 0.0 {
        p.green(&text)
    } else if v < 0.0 {
        p.red(&text)
    } else {
        text
    }
}

/// `  (added)`, `  (changed)`…; nothing for what is the same on both sides.
fn status_suffix(s: Status) -> String {
    let mark = match s {
        Status::Added => "added",
        Status::Removed => "removed",
        Status::Changed => "changed",
        Status::Same => "",
    };
    if mark.is_empty() {
        String::new()
    } else {
        format!("  ({mark})")
    }
}

/// The sides, how sessions were paired, and the change of the totals with its tests.
fn headline(out: &mut String, c: &Comparison, p: &Paint) {
    let s = &c.summary;
    // A side is its pack (`cleo-v2 2.0.0`), or an arm or a file graded by a pack
    // (`new (cleo-v1 1.0.0)`); results that name no pack have only their file.
    let side = |i: &compare::SideInfo| {
        let pack = format!("{} {}", i.rubric.id, i.rubric.version);
        let pack = pack.trim();
        if i.label == i.rubric.id {
            pack.to_owned()
        } else if i.rubric.version.is_empty() {
            i.label.clone()
        } else {
            format!("{} ({pack})", i.label)
        }
    };
    let _ = writeln!(
        out,
        "{} {} → {}",
        p.bold("grade compare:"),
        side(&c.baseline),
        side(&c.candidate)
    );
    if c.paired {
        let _ = writeln!(
            out,
            "{} session{} paired by {} · pass at {}% · bootstrap {} resamples, seed {}",
            s.n,
            if s.n == 1 { "" } else { "s" },
            c.pair_by.as_deref().unwrap_or("sessionId"),
            pct(c.pass_at),
            c.resamples,
            c.seed
        );
    } else {
        let _ = writeln!(
            out,
            "unpaired arms: {} and {} sessions · pass at {}% · bootstrap {} resamples, seed {}",
            s.n_baseline,
            s.n_candidate,
            pct(c.pass_at),
            c.resamples,
            c.seed
        );
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "  score (mean %)   {:>8}  →  {:>8}   change {}  95% CI {}",
        opt(s.mean_baseline),
        opt(s.mean_candidate),
        shade(p, s.mean_delta, signed(s.mean_delta)),
        ci(s.ci95)
    );
    if c.paired {
        paired_tests(out, c, p);
    } else {
        let _ = writeln!(
            out,
            "  Mann–Whitney p {} · Cliff's delta {} · passing {}/{} → {}/{}",
            pval(s.mann_whitney_p),
            s.cliffs_delta
                .map_or("-".to_owned(), |d| format!("{d:+.3}")),
            s.passed.baseline,
            s.n_baseline,
            s.passed.candidate,
            s.n_candidate
        );
    }
}

/// Paired sessions: which improved and regressed, the flips of the pass mark, the letters.
fn paired_tests(out: &mut String, c: &Comparison, p: &Paint) {
    let s = &c.summary;
    let _ = writeln!(
        out,
        "  improved {} · regressed {} · unchanged {}   Wilcoxon p {} · sign test p {}",
        s.improved.unwrap_or(0),
        s.regressed.unwrap_or(0),
        s.unchanged.unwrap_or(0),
        pval(s.wilcoxon_p),
        pval(s.sign_test_p)
    );
    let f = s.flips.unwrap_or_default();
    let _ = writeln!(
        out,
        "  pass → fail {} · fail → pass {}   McNemar exact p {}   (passing {} → {})",
        if f.pass_to_fail > 0 {
            p.red(&f.pass_to_fail.to_string())
        } else {
            "0".to_owned()
        },
        f.fail_to_pass,
        pval(s.mcnemar_p),
        s.passed.baseline,
        s.passed.candidate
    );
    let Some(grades) = &s.grades else {
        return;
    };
    let moved: Vec<String> = grades
        .iter()
        .filter(|(k, _)| {
            let mut it = k.split("->");
            it.next() != it.next()
        })
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    match &s.letters_unknown {
        // "none" said of results that carry no letter hid hundreds of changes.
        Some(why) => {
            let _ = writeln!(out, "  letters: not known ({why})");
        }
        None => {
            let _ = writeln!(
                out,
                "  letters changed: {}",
                if moved.is_empty() {
                    "none".to_owned()
                } else {
                    moved.join(", ")
                }
            );
        }
    }
}

fn dimensions(out: &mut String, c: &Comparison, p: &Paint) {
    out.push('\n');
    let _ = writeln!(out, "{}", p.bold("dimensions (% of each dimension's max)"));
    for d in &c.dimensions {
        let _ = writeln!(
            out,
            "  {:<28} {:>7} → {:>7}  {:>7}  95% CI {:<18} p {}{}",
            d.dimension,
            opt(d.mean_baseline),
            opt(d.mean_candidate),
            d.mean_delta
                .map_or("-".to_owned(), |v| shade(p, v, signed(v))),
            ci(d.ci95),
            pval(d.p),
            status_suffix(d.status)
        );
    }
}

fn rules(out: &mut String, c: &Comparison, p: &Paint) {
    out.push('\n');
    let _ = writeln!(
        out,
        "{}",
        p.bold(if c.paired {
            "rules by points moved (percentage points, summed over sessions)"
        } else {
            "rules by share of the change of the mean"
        })
    );
    if c.rules.is_empty() {
        let _ = writeln!(out, "  no rule changed any session's points");
    }
    for r in &c.rules {
        let name = format!("{}/{}", r.dimension, r.rule);
        let line = match (r.sessions_changed, r.points_moved) {
            (Some(n), Some(moved)) => format!(
                "  {:<52} {:>5} session{}  {:>9}",
                name,
                n,
                if n == 1 { " " } else { "s" },
                shade(p, moved, signed(moved))
            ),
            _ => format!(
                "  {:<52} mean {:>8}",
                name,
                shade(p, r.mean_delta, signed(r.mean_delta))
            ),
        };
        let _ = writeln!(out, "{line}{}", status_suffix(r.status));
    }
}

/// The `top` most changed paired sessions, each with the rules that moved it.
fn sessions(out: &mut String, c: &Comparison, p: &Paint, top: usize) {
    if !c.paired {
        return;
    }
    let changed: Vec<_> = c.sessions.iter().filter(|s| s.delta != 0.0).collect();
    out.push('\n');
    if changed.is_empty() {
        // A heading with nothing under it reads as a list that failed to print.
        let _ = writeln!(out, "{}", p.bold("no session changed"));
        return;
    }
    let _ = writeln!(
        out,
        "{}",
        p.bold(&format!(
            "most changed sessions ({} of {} changed)",
            changed.len().min(top),
            changed.len()
        ))
    );
    for sd in changed.iter().take(top) {
        let grade = |g: &Option<String>| g.clone().unwrap_or_else(|| "-".to_owned());
        let _ = writeln!(
            out,
            "  {:<28} {:>6} → {:>6}  {:>7}  {} → {}",
            // A session id is the source's text: escaped, as `grade` prints it.
            render::escape_controls(&sd.session_id),
            num(sd.baseline),
            num(sd.candidate),
            shade(p, sd.delta, signed(sd.delta)),
            grade(&sd.baseline_grade),
            grade(&sd.candidate_grade)
        );
        let mut rules = sd.rules.clone();
        rules.sort_by(|a, b| b.delta.abs().total_cmp(&a.delta.abs()));
        for r in rules {
            let _ = writeln!(
                out,
                "      {} {}/{}",
                shade(p, r.delta, format!("{:>7}", signed(r.delta))),
                r.dimension,
                r.rule
            );
        }
    }
}

fn rubric_changes(out: &mut String, diff: &compare::RubricDiff, p: &Paint) {
    out.push('\n');
    let _ = writeln!(out, "{}", p.bold("rubric changes"));
    if diff.is_empty() {
        let _ = writeln!(out, "  none: the packs grade alike");
    }
    let changes = |changes: &[String]| {
        if changes.is_empty() {
            String::new()
        } else {
            format!(": {}", changes.join(", "))
        }
    };
    for b in &diff.bands {
        let v = |x: Option<f64>| x.map_or("none".to_owned(), num);
        let _ = writeln!(
            out,
            "  ~ band {}: {} → {}",
            b.grade,
            v(b.baseline),
            v(b.candidate)
        );
    }
    for d in &diff.dimensions {
        let sign = match d.status {
            Status::Added => "+",
            Status::Removed => "-",
            _ => "~",
        };
        let _ = writeln!(
            out,
            "  {sign} dimension {}{}",
            d.dimension,
            changes(&d.changes)
        );
    }
    for r in &diff.rules {
        let sign = match r.status {
            Status::Added => p.green("+"),
            Status::Removed => p.red("-"),
            _ => p.yellow("~"),
        };
        let _ = writeln!(
            out,
            "  {sign} rule {}/{}{}",
            r.dimension,
            r.rule,
            changes(&r.changes)
        );
    }
}

fn not_compared(out: &mut String, c: &Comparison, p: &Paint) {
    let u = &c.unmatched;
    if u.baseline.is_empty()
        && u.candidate.is_empty()
        && u.unkeyed.is_empty()
        && u.nothing_to_grade.is_empty()
    {
        return;
    }
    out.push('\n');
    let _ = writeln!(out, "{}", p.bold("not compared"));
    for (what, ids) in [
        ("only in the baseline", &u.baseline),
        ("only in the candidate", &u.candidate),
        ("without a pairing key, or sharing one", &u.unkeyed),
        ("with nothing to grade", &u.nothing_to_grade),
    ] {
        if !ids.is_empty() {
            let _ = writeln!(out, "  {} {what}: {}", ids.len(), preview(ids));
        }
    }
}
