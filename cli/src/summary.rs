//! What a run of many sessions adds up to: the summary after `--all` in human format, and
//! the `--fail-under` gate.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use grade_engine::GradeResult;

use crate::error::CliError;

/// How many of the most frequent flags the summary lists.
const TOP_FLAGS: usize = 5;

/// The summary after `--all`: sessions graded, their mean percentage, how many got each
/// letter, and the flags raised most often (positions and counts in a flag are read as one:
/// "at #N"). What it counts, taken one result at a time, so that a streamed run keeps the
/// counts rather than the results.
#[derive(Debug)]
pub struct Summary {
    results: usize,
    graded: usize,
    /// The percentages of the graded results, summed in order (from `-0.0`, as `Sum`).
    percents: f64,
    letters: BTreeMap<String, usize>,
    /// Per flag shape: how often, the first flag of that shape as a rule wrote it, and
    /// how many of the others were written otherwise (another task id, another count).
    flags: BTreeMap<String, Seen>,
}

/// A flag shape's count in a [`Summary`].
#[derive(Debug)]
struct Seen {
    count: usize,
    first: Box<str>,
    others: usize,
}

impl Default for Summary {
    fn default() -> Self {
        Summary {
            results: 0,
            graded: 0,
            percents: -0.0,
            letters: BTreeMap::new(),
            flags: BTreeMap::new(),
        }
    }
}

impl Summary {
    /// Counts the next result, as [`Tally::of`] took it.
    pub fn count(&mut self, tally: Tally) {
        self.results += 1;
        if let Some((percent, grade)) = tally.graded {
            self.graded += 1;
            self.percents += percent;
            if let Some(g) = grade {
                match self.letters.get_mut(&*g) {
                    Some(n) => *n += 1,
                    None => {
                        self.letters.insert(g.into(), 1);
                    }
                }
            }
        }
        for (shape, text) in tally.flags {
            match self.flags.get_mut(&*shape) {
                Some(seen) => {
                    seen.count += 1;
                    seen.others += usize::from(seen.first != text);
                }
                None => {
                    let first = Seen {
                        count: 1,
                        first: text,
                        others: 0,
                    };
                    self.flags.insert(shape.into(), first);
                }
            }
        }
    }

    /// Whether no result was counted.
    pub fn is_empty(&self) -> bool {
        self.results == 0
    }

    /// The summary's text; `bands` are the pack's letters, best first.
    pub fn render(self, bands: &[String]) -> String {
        let Summary {
            results,
            graded,
            percents,
            mut letters,
            flags,
        } = self;
        let mut out = String::new();
        let nothing = results - graded;
        let plural = if results == 1 { "" } else { "s" };
        if nothing == 0 {
            let _ = write!(out, "{results} session{plural} graded");
        } else {
            let _ = write!(out, "{results} session{plural} · {graded} graded");
        }
        if graded > 0 {
            let mean = percents / graded as f64;
            let mean = grade_engine::result::percent_of(mean, 100.0);
            let _ = write!(out, ", mean {}%", grade_engine::entry::js_number(mean));
        }
        if nothing > 0 {
            let _ = write!(out, " · {nothing} with nothing to grade");
        }
        out.push('\n');

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

        let mut frequent: Vec<(String, Seen)> = flags.into_iter().collect();
        frequent.sort_by(|a, b| b.1.count.cmp(&a.1.count).then_with(|| a.0.cmp(&b.0)));
        if !frequent.is_empty() {
            let _ = writeln!(out, "most frequent flags:");
            for (_, seen) in frequent.iter().take(TOP_FLAGS) {
                // A flag is shown as a rule wrote it, not as its shape ("taskId: TN" is no
                // text anybody wrote), with how many others of the shape said it otherwise.
                // It quotes the source's text (a domain, a command): escaped, as the reports
                // above print it, so a line break in a log cannot forge a line here.
                let flag = crate::render::escape_controls(&seen.first);
                let like = match seen.others {
                    0 => String::new(),
                    n => format!(" · and {n} like it"),
                };
                let _ = writeln!(out, "  {:>4}× {flag}{like}", seen.count);
            }
        }
        out
    }
}

/// What the summary counts of one result: taken by the thread that graded it (a flag's
/// shape is a new string), so that the one thread that takes results in order only adds.
#[derive(Debug)]
pub struct Tally {
    /// The percentage and letter of a result that was graded out of more than 0.
    graded: Option<(f64, Option<Box<str>>)>,
    /// Its flags' shapes, each with the flag as written.
    flags: Vec<(Box<str>, Box<str>)>,
}

impl Tally {
    /// What `r` adds to a summary.
    pub fn of(r: &GradeResult) -> Tally {
        Tally {
            graded: r
                .graded_percent()
                .map(|p| (p, r.grade.as_deref().map(Box::from))),
            flags: r
                .flags
                .iter()
                .map(|f| (shape_of(f).into_boxed_str(), Box::from(f.as_str())))
                .collect(),
        }
    }
}

/// A flag with its numbers read as `N` and the source places after a position left out
/// (`#15 (a.jsonl:25, toolu_…)` is `#N`), so the same finding elsewhere counts as one.
pub(crate) fn shape_of(flag: &str) -> String {
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

/// How many sessions to name when the gate fails.
const SHOWN_BELOW: usize = 10;

/// The `--fail-under` gate, taken one result at a time: it fails when a graded session
/// scored below `threshold` percent. A session with nothing to grade (no dimension applies)
/// neither passes nor fails the gate.
#[derive(Debug)]
pub struct Floor {
    threshold: f64,
    total: usize,
    below: usize,
    /// The first sessions below, as the message names them.
    shown: Vec<String>,
}

impl Floor {
    pub fn new(threshold: f64) -> Self {
        Floor {
            threshold,
            total: 0,
            below: 0,
            shown: Vec::new(),
        }
    }

    /// How a result that is below `threshold` is named, or `None` for one that is not:
    /// what [`Floor::count`] takes, found by the thread that graded the result.
    pub fn below(threshold: f64, r: &GradeResult) -> Option<Box<str>> {
        let percent = r.graded_percent().filter(|&p| p < threshold)?;
        Some(
            format!(
                "`{}` ({}%)",
                r.session_id,
                grade_engine::entry::js_number(percent)
            )
            .into_boxed_str(),
        )
    }

    /// Counts the next result, as [`Floor::below`] named it.
    pub fn count(&mut self, below: Option<Box<str>>) {
        self.total += 1;
        if let Some(named) = below {
            self.below += 1;
            if self.shown.len() < SHOWN_BELOW {
                self.shown.push(named.into());
            }
        }
    }

    /// The threshold results are counted against.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Fails when a result counted was below the threshold.
    pub fn check(self) -> Result<(), CliError> {
        if self.below == 0 {
            return Ok(());
        }
        let more = self.below - self.shown.len();
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let threshold = grade_engine::entry::js_number(self.threshold);
        let total = self.total;
        let plural = if total == 1 { "" } else { "s" };
        Err(CliError::CheckFailed(format!(
            "{} of {total} session{plural} scored below {threshold}% (`--fail-under`): {}{more}",
            self.below,
            self.shown.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary printed "tasks.add without description (taskId: TN)" and "1× N
    /// potentially duplicate task create(s)": shapes, texts no rule wrote (issue 48,
    /// friction 8). Flags of one shape still count as one, shown as the first was written.
    #[test]
    fn the_summary_shows_flags_as_written_and_counts_their_shape() {
        let mut summary = Summary::default();
        for flags in [
            vec!["tasks.add without description (taskId: T40)"],
            vec![
                "tasks.add without description (taskId: T41)",
                "1 potentially duplicate task create(s) detected",
            ],
            vec!["tasks.add without description (taskId: T40)"],
        ] {
            summary.count(Tally {
                graded: Some((50.0, None)),
                flags: flags
                    .into_iter()
                    .map(|f| (shape_of(f).into_boxed_str(), Box::from(f)))
                    .collect(),
            });
        }
        let text = summary.render(&[]);
        assert!(
            text.ends_with("most frequent flags:\n     3× tasks.add without description (taskId: T40) · and 1 like it\n     1× 1 potentially duplicate task create(s) detected\n"),
            "{text}"
        );
    }

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
