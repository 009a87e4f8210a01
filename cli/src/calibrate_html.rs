//! `grade calibrate --html`: one self-contained page, drawn here (SVG and tables, no
//! script, no network). Every text that comes from the input (ids, labels, names,
//! rationales, evidence) is escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use grade_engine::calibrate::{Calibration, DimensionCalibration, Figure};
use grade_engine::CompiledPack;

use crate::page::html_escape as esc;

const STYLE: &str = "
:root { --fg:#1d2330; --muted:#667085; --line:#e3e7ee; --bg:#f7f8fa; --card:#fff; --accent:#3b6fd8; --bad:#c2352b; --good:#1a7f4b; }
* { box-sizing:border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif; color:var(--fg); background:var(--bg); }
main { max-width:1180px; margin:0 auto; padding:24px 28px 60px; }
h1 { font-size:22px; margin:0 0 4px; } h2 { font-size:17px; margin:26px 0 10px; } h3 { font-size:15px; margin:0 0 8px; }
.sub, .note { color:var(--muted); } .note { font-size:12px; }
.grid { display:grid; grid-template-columns:repeat(auto-fit,minmax(520px,1fr)); gap:16px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 16px; }
.row { display:flex; gap:16px; flex-wrap:wrap; align-items:flex-start; }
table { border-collapse:collapse; }
th, td { padding:4px 8px; border-bottom:1px solid var(--line); text-align:right; white-space:nowrap; }
th:first-child, td:first-child { text-align:left; }
th { font-weight:600; color:var(--muted); font-size:12px; }
.matrix td { text-align:center; min-width:40px; }
.fail { color:var(--bad); font-weight:600; } .pass { color:var(--good); font-weight:600; }
.dis td { text-align:left; white-space:normal; vertical-align:top; }
.warn { background:#fff7e6; border-color:#f3d9a4; }
svg text { font-size:11px; fill:#556; }
";

/// The page for a calibration.
pub fn page(c: &Calibration, pack: &CompiledPack, failed: &[String]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>grade calibrate: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        esc(&pack.id)
    );
    let _ = writeln!(
        out,
        "<h1>Calibration of {} {}</h1>",
        esc(&pack.id),
        esc(&pack.version)
    );
    let _ = writeln!(
        out,
        "<div class=\"sub\">{} labels by {} annotator{} ({}) &middot; {} sessions with results &middot; 95% intervals from {} bootstrap resamples of the sessions, seed {}</div>",
        c.labels,
        c.annotators.len(),
        if c.annotators.len() == 1 { "" } else { "s" },
        esc(&c.annotators.join(", ")),
        c.results,
        c.resamples,
        c.seed
    );
    if !failed.is_empty() {
        let _ = writeln!(
            out,
            "<div class=\"card warn\"><span class=\"fail\">Below the gate</span><ul>"
        );
        for f in failed {
            let _ = writeln!(out, "<li>{}</li>", esc(f));
        }
        let _ = writeln!(out, "</ul></div>");
    }
    if !c.warnings.is_empty() {
        let _ = writeln!(
            out,
            "<div class=\"card warn\"><h3>Labels that did not pair</h3><ul>"
        );
        for w in &c.warnings {
            let names = crate::calibrate::warning_names(w, |n| format!("<code>{}</code>", esc(n)));
            let _ = writeln!(out, "<li>{} ({}): {names}</li>", esc(&w.message), w.count);
        }
        let _ = writeln!(out, "</ul></div>");
    }
    for judge in &c.judges {
        let _ = writeln!(out, "<h2>Judge <code>{}</code></h2>", esc(&judge.judge));
        let _ = writeln!(out, "<div class=\"grid\">");
        for d in &judge.dimensions {
            dimension_card(&mut out, d, pack);
        }
        let _ = writeln!(out, "</div>");
    }
    if !c.disagreements.is_empty() {
        let _ = writeln!(
            out,
            "<h2>Where the judge disagrees most</h2>\n<div class=\"card\"><table class=\"dis\"><tr><th>Session</th><th>Dimension</th><th>Judge</th><th>People</th><th>Gap</th><th>The judge's rationale and evidence</th></tr>"
        );
        for d in &c.disagreements {
            let people = d
                .human_scores
                .iter()
                .map(|h| {
                    format!(
                        "{}: {}",
                        esc(&h.annotator),
                        esc(&crate::calibrate::shown_score(pack, &d.dimension, h.score))
                    )
                })
                .collect::<Vec<_>>()
                .join("<br>");
            let evidence = d
                .evidence
                .iter()
                .map(|e| format!("<li>{}</li>", esc(e)))
                .collect::<String>();
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{people}</td><td>{:.0}%</td><td>{}<ul>{evidence}</ul></td></tr>",
                esc(&d.session_id),
                esc(&d.dimension),
                esc(&crate::calibrate::shown_score(pack, &d.dimension, d.judge_score)),
                d.gap * 100.0,
                esc(&d.rationale)
            );
        }
        let _ = writeln!(out, "</table></div>");
    }
    let _ = writeln!(
        out,
        "<p class=\"note\">κ: Cohen's kappa over every pair of the judge's score and one person's (quadratic weights count a disagreement by the squared distance between categories). α: Krippendorff's alpha per session, with the judge and every annotator as coders, and with the annotators alone (the ceiling). 1 is perfect agreement, 0 no better than chance.</p>\n</main>\n</body>\n</html>"
    );
    out
}

fn figure(f: &Figure) -> String {
    match (f.value, &f.interval, &f.reason) {
        (Some(v), Some(i), _) => format!(
            "{v:.3} <span class=\"note\">[{:.3}, {:.3}]</span>",
            i.low, i.high
        ),
        (Some(v), None, _) => format!("{v:.3}"),
        (None, _, Some(r)) => format!("<span class=\"note\" title=\"{}\">undefined</span>", esc(r)),
        (None, _, None) => "<span class=\"note\">undefined</span>".to_owned(),
    }
}

fn dimension_card(out: &mut String, d: &DimensionCalibration, pack: &CompiledPack) {
    let _ = writeln!(
        out,
        "<div class=\"card\"><h3>{} <span class=\"note\">{}, {} pairs over {} sessions</span></h3><div class=\"row\"><div><table>",
        esc(&d.dimension),
        d.kind,
        d.pairs,
        d.sessions
    );
    let mut rows: Vec<(&str, String)> = Vec::new();
    if let Some(c) = &d.categorical {
        rows.push(("κ quadratic", figure(&c.kappa_quadratic)));
        rows.push(("κ unweighted", figure(&c.kappa)));
        let pct =
            |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", v * 100.0));
        rows.push(("exact agreement", pct(c.exact)));
        rows.push(("within one", pct(c.within_one)));
    }
    if let Some(n) = &d.numeric {
        rows.push(("Pearson r", figure(&n.pearson)));
        rows.push(("Spearman ρ", figure(&n.spearman)));
    }
    let num = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:+.3}"));
    rows.push((
        "mean |judge − person|",
        d.mae.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}")),
    ));
    rows.push(("mean judge − person", num(d.bias)));
    rows.push(("α judge + people", figure(&d.alpha)));
    rows.push(("α people alone", figure(&d.alpha_annotators)));
    for (name, value) in rows {
        let _ = writeln!(out, "<tr><th>{name}</th><td>{value}</td></tr>");
    }
    let _ = writeln!(out, "</table>");
    if let Some(c) = &d.categorical {
        let max = c
            .confusion
            .matrix
            .iter()
            .flatten()
            .copied()
            .max()
            .unwrap_or(0)
            .max(1);
        let _ = writeln!(
            out,
            "<p class=\"note\">Confusion: rows people, columns judge</p><table class=\"matrix\"><tr><th></th>"
        );
        for l in &c.confusion.categories {
            let _ = write!(out, "<th>{}</th>", esc(l));
        }
        let _ = writeln!(out, "</tr>");
        for (i, (l, row)) in c
            .confusion
            .categories
            .iter()
            .zip(&c.confusion.matrix)
            .enumerate()
        {
            let _ = write!(out, "<tr><th>{}</th>", esc(l));
            for (j, n) in row.iter().enumerate() {
                let strength = *n as f64 / max as f64;
                let (r, g, b) = if i == j { (26, 127, 75) } else { (194, 53, 43) };
                let _ = write!(
                    out,
                    "<td style=\"background:rgba({r},{g},{b},{:.2})\">{n}</td>",
                    0.08 + 0.6 * strength
                );
            }
            let _ = writeln!(out, "</tr>");
        }
        let _ = writeln!(out, "</table>");
    }
    let _ = writeln!(out, "</div>");
    scatter(out, d, pack);
    let _ = writeln!(out, "</div></div>");
}

/// The judge's score (x) against a person's (y), one dot per distinct pair, its area the
/// number of pairs there, with the diagonal of agreement.
fn scatter(out: &mut String, d: &DimensionCalibration, pack: &CompiledPack) {
    let (size, pad) = (240.0, 34.0);
    let (low, high) = range(d, pack);
    let span = if high > low { high - low } else { 1.0 };
    let at = |v: f64| pad + (v - low) / span * (size - 2.0 * pad);
    let mut counts: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for (j, h) in &d.points {
        *counts.entry((j.to_bits(), h.to_bits())).or_default() += 1;
    }
    let _ = writeln!(
        out,
        "<svg width=\"{size}\" height=\"{size}\" viewBox=\"0 0 {size} {size}\" role=\"img\" aria-label=\"judge against people\">"
    );
    let _ = writeln!(
        out,
        "<rect x=\"{pad}\" y=\"{pad}\" width=\"{w}\" height=\"{w}\" fill=\"#fbfcfe\" stroke=\"#e3e7ee\"/><line x1=\"{a}\" y1=\"{b}\" x2=\"{b}\" y2=\"{a}\" stroke=\"#b8c2d6\" stroke-dasharray=\"4 3\"/>",
        w = size - 2.0 * pad,
        a = pad,
        b = size - pad
    );
    let y = |v: f64| size - at(v);
    for ((j, h), n) in &counts {
        let (j, h) = (f64::from_bits(*j), f64::from_bits(*h));
        let r = 2.5 + (*n as f64).sqrt() * 2.0;
        let _ = writeln!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r:.1}\" fill=\"#3b6fd8\" fill-opacity=\"0.55\"><title>judge {} · person {} · {n} pair{}</title></circle>",
            at(j),
            y(h),
            esc(&crate::calibrate::shown_score(pack, &d.dimension, j)),
            esc(&crate::calibrate::shown_score(pack, &d.dimension, h)),
            if *n == 1 { "" } else { "s" }
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">judge</text><text x=\"12\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {:.1})\">people</text>",
        size / 2.0,
        size - 8.0,
        size / 2.0,
        size / 2.0
    );
    for (v, anchor) in [(low, "start"), (high, "end")] {
        let shown = grade_engine::entry::js_number(v);
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            at(v),
            size - pad + 14.0,
            esc(&shown),
            pad - 4.0,
            y(v) + 4.0,
            esc(&shown)
        );
    }
    let _ = writeln!(out, "</svg>");
}

/// The dimension's scale, for the axes.
fn range(d: &DimensionCalibration, pack: &CompiledPack) -> (f64, f64) {
    use grade_engine::pack::DimensionKind;
    match pack.judged_dimensions().find(|x| x.id == d.dimension) {
        Some(x) => match &x.kind {
            DimensionKind::Categorical { categories } => (
                categories.iter().map(|c| c.1).fold(f64::INFINITY, f64::min),
                categories
                    .iter()
                    .map(|c| c.1)
                    .fold(f64::NEG_INFINITY, f64::max),
            ),
            DimensionKind::Numeric { min } => (*min, x.max),
            DimensionKind::Points => (x.floor, x.max),
        },
        // The aggregate: its points' own range, at least 0–1.
        None => d.points.iter().fold((0.0f64, 1.0f64), |(lo, hi), (j, h)| {
            (lo.min(j.min(*h)), hi.max(j.max(*h)))
        }),
    }
}
