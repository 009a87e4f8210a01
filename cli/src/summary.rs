//! What a run of many sessions adds up to: the summary after `--all` in human format, and
//! the `--fail-under` gate.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use grade_engine::GradeResult;

use crate::error::CliError;

/// How many of the most frequent flags the summary lists.
const TOP_FLAGS: usize = 5;

/// Sessions graded, their mean percentage, how many got each letter, and the flags raised
/// most often (positions and counts in a flag are read as one: "at #N").
pub fn summary(results: &[GradeResult], bands: &[String]) -> String {
    let mut out = String::new();
    let graded: Vec<&GradeResult> = results.iter().filter(|r| r.max_score.0 > 0.0).collect();
    let nothing = results.len() - graded.len();
    let plural = if results.len() == 1 { "" } else { "s" };
    if nothing == 0 {
        let _ = write!(out, "{} session{plural} graded", results.len());
    } else {
        let _ = write!(
            out,
            "{} session{plural} · {} graded",
            results.len(),
            graded.len()
        );
    }
    if !graded.is_empty() {
        let mean = graded.iter().map(|r| r.percent.0).sum::<f64>() / graded.len() as f64;
        let mean = grade_engine::result::percent_of(mean, 100.0);
        let _ = write!(out, ", mean {}%", grade_engine::entry::js_number(mean));
    }
    if nothing > 0 {
        let _ = write!(out, " · {nothing} with nothing to grade");
    }
    out.push('\n');

    let mut letters: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &graded {
        if let Some(g) = r.grade.as_deref() {
            *letters.entry(g).or_default() += 1;
        }
    }
    if !letters.is_empty() {
        // In the pack's band order (best first), then any letter the bands do not name.
        let mut parts = Vec::new();
        for band in bands {
            if let Some(n) = letters.remove(band.as_str()) {
                parts.push(format!("{band} {n}"));
            }
        }
        parts.extend(letters.iter().map(|(g, n)| format!("{g} {n}")));
        let _ = writeln!(out, "grades: {}", parts.join(" · "));
    }

    let mut flags: BTreeMap<String, usize> = BTreeMap::new();
    for r in results {
        for f in &r.flags {
            *flags.entry(shape_of(f)).or_default() += 1;
        }
    }
    let mut frequent: Vec<(String, usize)> = flags.into_iter().collect();
    frequent.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if !frequent.is_empty() {
        let _ = writeln!(out, "most frequent flags:");
        for (flag, n) in frequent.iter().take(TOP_FLAGS) {
            let _ = writeln!(out, "  {n:>4}× {flag}");
        }
    }
    out
}

/// A flag with its numbers read as `N` and the source places after a position left out
/// (`#15 (a.jsonl:25, toolu_…)` is `#N`), so the same finding elsewhere counts as one.
fn shape_of(flag: &str) -> String {
    let mut bare = String::with_capacity(flag.len());
    let mut rest = flag;
    while let Some(at) = rest.find('#') {
        let digits = rest[at + 1..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - at - 1);
        let after = at + 1 + digits;
        bare.push_str(&rest[..after]);
        rest = &rest[after..];
        if digits > 0 && rest.starts_with(" (") {
            if let Some(close) = rest.find(')') {
                rest = &rest[close + 1..];
            }
        }
    }
    bare.push_str(rest);
    let flag = bare.as_str();
    let mut out = String::with_capacity(flag.len());
    let mut in_number = false;
    for c in flag.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// `--fail-under`: fails when a graded session scored below `threshold` percent. A session
/// with nothing to grade (no dimension applies) neither passes nor fails the gate.
pub fn check_floor(results: &[GradeResult], threshold: f64) -> Result<(), CliError> {
    let below: Vec<&GradeResult> = results
        .iter()
        .filter(|r| r.max_score.0 > 0.0 && r.percent.0 < threshold)
        .collect();
    if below.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = below
        .iter()
        .take(10)
        .map(|r| format!("`{}` ({}%)", r.session_id, r.percent))
        .collect();
    let more = below.len() - shown.len();
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let threshold = grade_engine::entry::js_number(threshold);
    let total = results.len();
    let plural = if total == 1 { "" } else { "s" };
    Err(CliError::CheckFailed(format!(
        "{} of {total} session{plural} scored below {threshold}% (`--fail-under`): {}{more}",
        below.len(),
        shown.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_at_other_places_count_as_one() {
        assert_eq!(
            shape_of("Bash `ls -la` at #10 does file work"),
            "Bash `ls -la` at #N does file work"
        );
        assert_eq!(
            shape_of("failed 3 times (#1, #22)"),
            "failed N times (#N, #N)"
        );
        assert_eq!(
            shape_of("Write failed at #15 (a1.jsonl:25, toolu_01L); only #16 (a1.jsonl:27, toolu_9) followed"),
            "Write failed at #N; only #N followed"
        );
    }
}
