//! `grade compare --html`: one self-contained page. The comparison's JSON is embedded in the
//! page and drawn by an inline script (SVG charts, a sortable table): no network, no CDN.

use grade_engine::compare::Comparison;

use crate::page::html_escape;

const TEMPLATE: &str = include_str!("../assets/compare.html");

/// The page for a comparison.
pub fn page(c: &Comparison) -> Result<String, serde_json::Error> {
    let json = serde_json::to_string(c)?;
    let title = html_escape(&format!(
        "grade compare: {} → {}",
        c.baseline.label, c.candidate.label
    ));
    // Unpaired arms are resampled each on its own: the footer must not call that paired.
    let intervals = if c.paired {
        "paired bootstrap of the mean change"
    } else {
        "bootstrap of the difference of the means, each arm resampled on its own"
    };
    let resamples = c.resamples.to_string();
    let seed = c.seed.to_string();
    Ok(crate::page::fill(
        TEMPLATE,
        &[
            ("TITLE", &title),
            ("INTERVALS", intervals),
            ("RESAMPLES", &resamples),
            ("SEED", &seed),
        ],
        &json,
    ))
}
