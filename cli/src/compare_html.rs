//! `grade compare --html`: one self-contained page. The comparison's JSON is embedded in the
//! page and drawn by an inline script (SVG charts, a sortable table): no network, no CDN.

use grade_engine::compare::Comparison;

const TEMPLATE: &str = include_str!("../assets/compare.html");

/// The page for a comparison.
pub fn page(c: &Comparison) -> Result<String, serde_json::Error> {
    let json = serde_json::to_string(c)?;
    // Inside <script>, `</` could close the element and `<!--` open a comment: escape `<`
    // (JSON allows `\u003c` wherever a string may hold it; `<` occurs only in strings).
    let json = json.replace('<', "\\u003c");
    let title = html_escape(&format!("{} → {}", c.baseline.label, c.candidate.label));
    // The data goes in last and is never searched again, so no label can be mistaken for a slot.
    // Unpaired arms are resampled each on its own: the footer must not call that paired.
    let intervals = if c.paired {
        "paired bootstrap of the mean change"
    } else {
        "bootstrap of the difference of the means, each arm resampled on its own"
    };
    let fill = |part: &str| {
        part.replace("__TITLE__", &title)
            .replace("__INTERVALS__", intervals)
            .replace("__RESAMPLES__", &c.resamples.to_string())
            .replace("__SEED__", &c.seed.to_string())
    };
    let (head, tail) = TEMPLATE.split_once("__DATA__").unwrap_or((TEMPLATE, ""));
    Ok(format!("{}{json}{}", fill(head), fill(tail)))
}

pub(crate) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
