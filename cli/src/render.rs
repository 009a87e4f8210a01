//! Human-readable output: a report a person reads at a glance.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::IsTerminal;

use grade_engine::result::Score;
use grade_engine::{CompiledPack, GradeResult};
use serde_json::Value;

use crate::args::ColorChoice;

pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
        }
    }
}

pub(crate) struct Paint(pub(crate) bool);

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    pub(crate) fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }
    pub(crate) fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }
    pub(crate) fn red(&self, text: &str) -> String {
        self.wrap("31", text)
    }
    pub(crate) fn green(&self, text: &str) -> String {
        self.wrap("32", text)
    }
    pub(crate) fn yellow(&self, text: &str) -> String {
        self.wrap("33", text)
    }
}

fn signed(points: Score) -> String {
    if points.0 > 0.0 {
        format!("+{points}")
    } else {
        points.to_string()
    }
}

/// What a grade none of whose dimensions applies says instead of its score (0/0).
pub(crate) const NOTHING_TO_GRADE: &str = "nothing to grade: no dimension applies";

/// How many of a grade's dimensions did not apply to the session; all of them means there
/// was nothing to grade.
pub(crate) fn not_applicable(r: &GradeResult) -> usize {
    r.dimensions.values().filter(|d| d.not_applicable).count()
}

/// One session's grade: score, percent and letter, each dimension with its evidence, the flags.
pub fn report(r: &GradeResult, pack: &CompiledPack, color: bool) -> String {
    let p = Paint(color);
    let mut out = String::new();
    head(&mut out, r, &p);
    let width = pack
        .dimensions
        .iter()
        .map(|d| d.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(12);
    for (id, dim) in &r.dimensions {
        dimension(
            &mut out,
            r,
            pack,
            (id, dim),
            width + if color { 8 } else { 0 },
            &p,
        );
    }
    // Flags shown under their dimension are not repeated; those of no dimension (a session
    // with no entries) are the session's own.
    let own: Vec<&String> = r.flags_of_no_dimension().collect();
    if !own.is_empty() {
        let _ = writeln!(out, "\n  {}", p.bold(&format!("Flags ({})", own.len())));
        for f in own {
            let _ = writeln!(out, "    {} {}", p.red("!"), escape_controls(f));
        }
    }
    out
}

/// A report's first lines: the session's score (or that it had nothing to grade), the
/// rubric, where the session came from, the panel that judged it, the lines skipped.
fn head(out: &mut String, r: &GradeResult, p: &Paint) {
    let letter = r
        .grade
        .as_deref()
        .map(|g| format!(" · grade {g}"))
        .unwrap_or_default();
    let skipped = not_applicable(r);
    if skipped > 0 && skipped == r.dimensions.len() {
        let _ = writeln!(
            out,
            "{}  {NOTHING_TO_GRADE}",
            p.bold(&escape_controls(&r.session_id))
        );
    } else {
        // Beside the letter: what it stands on, when some dimensions did not apply.
        let on = r
            .applied_note()
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}  {}/{} ({}%){letter}{on}",
            p.bold(&escape_controls(&r.session_id)),
            r.total_score,
            r.max_score,
            r.percent.unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "{}",
        p.dim(&format!(
            "rubric {} {} · {} entr{} · graded {}",
            escape_controls(&r.rubric.id),
            escape_controls(&r.rubric.version),
            r.entry_count,
            if r.entry_count == 1 { "y" } else { "ies" },
            escape_controls(&r.timestamp)
        ))
    );
    if let Some(source) = &r.source {
        let _ = writeln!(
            out,
            "{}",
            p.dim(&format!("from {}", escape_controls(source)))
        );
    }
    if let Some(panel) = &r.panel {
        let judges: Vec<String> = panel
            .judges
            .iter()
            .map(|j| format!("`{}`", escape_controls(&j.model)))
            .collect();
        let _ = writeln!(
            out,
            "{}",
            p.dim(&format!(
                "judged by a panel of {} ({} of their scores): {}",
                judges.len(),
                panel.combine.name(),
                judges.join(", ")
            ))
        );
    }
    if r.skipped_lines > 0 {
        let plural = if r.skipped_lines == 1 { "" } else { "s" };
        let _ = writeln!(
            out,
            "{}",
            p.yellow(&format!(
                "! {} malformed line{plural} of the source skipped: this grade may miss entries",
                r.skipped_lines
            ))
        );
    }
}

/// A dimension's part of a report: its score, evidence and flags, a judge's rationale and
/// the panel's scores; with `--explain`, the rules that scored it.
fn dimension(
    out: &mut String,
    r: &GradeResult,
    pack: &CompiledPack,
    (id, dim): (&String, &grade_engine::result::DimensionScore),
    width: usize,
    p: &Paint,
) {
    let name = pack
        .dimensions
        .iter()
        .find(|d| &d.id == id)
        .map_or(id.as_str(), |d| d.name.as_str());
    let score = format!("{:>3}/{}", dim.score.to_string(), dim.max);
    let score = if dim.not_applicable {
        p.dim(&format!("{:>w$}", "n/a", w = 4 + dim.max.to_string().len()))
    } else if dim.score.0 >= dim.max.0 {
        p.green(&score)
    } else if dim.score.0 <= 0.0 {
        p.red(&score)
    } else {
        p.yellow(&score)
    };
    let mut extra = String::new();
    if let Some(label) = &dim.label {
        let _ = write!(extra, "  {}", escape_controls(label));
    }
    if let Some(weight) = dim.weight {
        let _ = write!(
            extra,
            "  {}",
            p.dim(&format!(
                "× weight {}",
                grade_engine::entry::js_number(weight)
            ))
        );
    }
    let _ = writeln!(
        out,
        "\n  {:<width$}  {score}{extra}",
        p.bold(&escape_controls(name)),
        width = width
    );
    for e in &dim.evidence {
        let _ = writeln!(out, "    • {}", escape_controls(e));
    }
    // The reasons a dimension lost points, under it (issue 48, friction 5); with
    // `--explain` each shows under the rule that raised it instead.
    if r.explain.is_none() {
        for f in r.flags_of(id) {
            let _ = writeln!(out, "    {} {}", p.red("!"), escape_controls(f));
        }
    }
    if let Some(rationale) = dim.rationale.as_deref().filter(|r| !r.is_empty()) {
        let _ = writeln!(
            out,
            "    {} {}",
            p.dim("rationale:"),
            escape_controls(rationale)
        );
    }
    panel_line(out, pack, id, dim, p);
    let rules_scored = pack
        .dimensions
        .iter()
        .find(|d| &d.id == id)
        .filter(|d| !d.kind.is_judged() && !dim.not_applicable);
    if let (Some(d), true) = (rules_scored, r.explain.is_some()) {
        let _ = writeln!(
            out,
            "    {} {:<28} {:>4}",
            p.dim("from"),
            "start",
            grade_engine::entry::js_number(d.start)
        );
    }
    if let Some(traces) = r.explain.as_ref().and_then(|x| x.get(id)) {
        rule_traces(out, traces, p);
    }
}

/// Each judge's own score of a dimension judged by a panel, so a split panel shows as one.
fn panel_line(
    out: &mut String,
    pack: &CompiledPack,
    id: &str,
    dim: &grade_engine::result::DimensionScore,
    p: &Paint,
) {
    if dim.panel.is_empty() {
        return;
    }
    // Each judge's own score, so a split panel shows as one.
    let scores: Vec<String> = dim
        .panel
        .iter()
        .map(|m| {
            format!(
                "{} {}",
                escape_controls(&m.judge),
                crate::calibrate::shown_score(pack, id, m.score.0)
            )
        })
        .collect();
    let spread = dim
        .spread
        .filter(|s| s.min != s.max)
        .map(|s| {
            let shown = |v: f64| grade_engine::entry::js_number((v * 1000.0).round() / 1000.0);
            format!(
                "  {}",
                p.dim(&format!("(spread {} to {})", shown(s.min), shown(s.max)))
            )
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "    {} {}{spread}",
        p.dim("panel:"),
        scores.join(" · ")
    );
}

/// The rules that scored a dimension (`--explain`), each with the entries it read.
fn rule_traces(out: &mut String, traces: &[grade_engine::result::RuleTrace], p: &Paint) {
    // Rules that neither scored nor said anything would only hide the ones that did.
    for t in traces
        .iter()
        .filter(|t| t.points.0 != 0.0 || !t.evidence.is_empty() || !t.flags.is_empty())
    {
        let places = t
            .entries
            .iter()
            .take(8)
            .map(|e| {
                let place = e.place.as_deref().map_or_else(
                    || format!("#{}", e.position),
                    |p| escape_controls(p).into_owned(),
                );
                format!(
                    "{place} {} {}",
                    escape_controls(&e.operation),
                    escape_controls(&e.timestamp)
                )
            })
            .collect::<Vec<_>>();
        let more = t.entries.len().saturating_sub(places.len());
        let mut line = format!(
            "    {} {:<28} {:>4}",
            p.dim("rule"),
            escape_controls(&t.rule),
            signed(t.points)
        );
        if !places.is_empty() {
            let _ = write!(line, "  {}", p.dim(&places.join(", ")));
            if more > 0 {
                let _ = write!(line, "{}", p.dim(&format!(" and {more} more")));
            }
        }
        let _ = writeln!(out, "{line}");
        for f in &t.flags {
            let _ = writeln!(out, "      {} {}", p.red("!"), p.dim(&escape_controls(f)));
        }
        for tr in &t.trajectories {
            trajectory_lines(out, tr, p);
        }
    }
}

/// What a trajectory metric paired, under the rule that reads it: each agent call (by its
/// place) with the reference call (by its position and name) it matched, then the reference
/// calls missed and the agent calls left over.
fn trajectory_lines(out: &mut String, t: &grade_engine::result::TrajectoryTrace, p: &Paint) {
    let call = |e: &grade_engine::result::EntryRef| {
        let place = e.place.as_deref().map_or_else(
            || format!("#{}", e.position),
            |p| escape_controls(p).into_owned(),
        );
        format!("{place} {}", escape_controls(&e.operation))
    };
    let reference = |r: &grade_engine::result::ReferenceCall| {
        format!("reference {} {}", r.position, escape_controls(&r.name))
    };
    let _ = writeln!(
        out,
        "      {} {} = {}",
        p.dim("metric"),
        escape_controls(&t.metric),
        grade_engine::entry::js_number(t.value.0)
    );
    for m in &t.matched {
        let _ = writeln!(
            out,
            "        {} {} = {}",
            p.dim("matched"),
            call(&m.agent),
            reference(&m.reference)
        );
    }
    for r in &t.missed {
        let _ = writeln!(out, "        {} {}", p.dim("missed "), reference(r));
    }
    for e in &t.extra {
        let _ = writeln!(out, "        {} {}", p.dim("extra  "), call(e));
    }
}

/// `grade --list`: one line per recorded grade.
pub fn grade_table(grades: &[Value]) -> String {
    grade_table_of(&grades.iter().map(grade_row).collect::<Vec<_>>())
}

/// A recorded grade's cells in [`grade_table`].
pub fn grade_row(g: &Value) -> [String; 6] {
    let text = |k: &str| g.get(k).map(value_text).unwrap_or_default();
    let percent = match (
        g.get("totalScore").and_then(Value::as_f64),
        g.get("maxScore").and_then(Value::as_f64),
    ) {
        (Some(t), Some(m)) if m > 0.0 => format!(
            "{}%",
            grade_engine::entry::js_number(grade_engine::result::percent_of(t, m))
        ),
        // Recorded with no dimension applying: nothing was graded.
        (Some(_), Some(_)) => "n/a".to_owned(),
        _ => String::new(),
    };
    let rubric = g.get("rubric").map_or_else(String::new, |r| {
        let part = |k: &str| r.get(k).map(value_text).unwrap_or_default();
        format!("{} {}", part("id"), part("version"))
            .trim()
            .to_owned()
    });
    let flags = g.get("flags").and_then(Value::as_array).map_or(0, Vec::len);
    [
        text("sessionId"),
        rubric,
        format!("{}/{}", text("totalScore"), text("maxScore")),
        percent,
        text("timestamp"),
        format!("{flags} flag{}", if flags == 1 { "" } else { "s" }),
    ]
}

/// The table of [`grade_row`]s, its columns as wide as their widest cell.
pub fn grade_table_of(rows: &[[String; 6]]) -> String {
    if rows.is_empty() {
        return "no grades recorded\n".to_owned();
    }
    let headers = [
        "SESSION",
        "RUBRIC",
        "SCORE",
        "PERCENT",
        "TIMESTAMP",
        "FLAGS",
    ];
    let mut widths = headers.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: [&str; 6]| {
        let text = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ");
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(headers);
    for row in rows {
        line([&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]]);
    }
    out
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => escape_controls(s).into_owned(),
        // A value JavaScript cannot print is shown as its JSON.
        other => escape_controls(
            &grade_engine::entry::js_string(other).unwrap_or_else(|| other.to_string()),
        )
        .into_owned(),
    }
}

/// Whether a character would act on a terminal instead of being shown, or would not be
/// seen: control characters (escape sequences start with one), Unicode's format characters
/// (direction marks and overrides that reorder a line, zero-width spaces and joiners, the
/// byte order mark, tag characters), the line and paragraph separators, and the fillers that
/// print as nothing. Two session ids that differ only by one of these would look the same.
fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // Format characters (general category Cf), Unicode 15.
            '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{890}'..='\u{891}'
                | '\u{8e2}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0000}'..='\u{e007f}'
                // Line and paragraph separators.
                | '\u{2028}'
                | '\u{2029}'
                // Hangul fillers, letters that print as nothing.
                | '\u{115f}'
                | '\u{1160}'
                | '\u{3164}'
                | '\u{ffa0}'
        )
}

/// Text from the data made safe to print on a terminal: each control character is shown as
/// an escape (`\u{1b}`) instead of being sent, so a session id or a judge's rationale cannot
/// move the cursor, recolour the screen or rewrite what was printed before it.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape_controls_but(text, false)
}

/// [`escape_controls`] for messages of several lines: line breaks stay.
pub fn escape_controls_keep_lines(text: &str) -> Cow<'_, str> {
    escape_controls_but(text, true)
}

/// A message for stderr: controls escaped (lines kept), a source read from a pipe or
/// standard input named as the user gave it, not by its private copy, and the system's error
/// texts in the words of the rest of the message.
pub fn for_stderr(text: &str) -> String {
    let given = crate::input::as_given(text);
    escape_controls_keep_lines(&system_errors_in_words(&given)).into_owned()
}

/// The system's error texts as our messages word theirs: `Is a directory (os error 21)`, as
/// the standard library prints an OS error, becomes `is a directory`. A message that reaches
/// the system's text through several layers cannot word it itself.
fn system_errors_in_words(text: &str) -> Cow<'_, str> {
    const MARK: &str = " (os error ";
    if !text.contains(MARK) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || after.as_bytes().get(digits) != Some(&b')') {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
            continue;
        }
        // The system's phrase: letters, spaces, `-` and `/` (`Input/output error`).
        let before = &rest[..at];
        let phrase = before
            .rfind(|c: char| !(c.is_ascii_alphabetic() || matches!(c, ' ' | '-' | '/')))
            .map_or(0, |i| i + 1);
        let phrase = phrase + (before[phrase..].len() - before[phrase..].trim_start().len());
        out.push_str(&before[..phrase]);
        let mut words = before[phrase..].chars();
        if let Some(first) = words.next() {
            out.push(first.to_ascii_lowercase());
            out.push_str(words.as_str());
        }
        rest = &after[digits + 1..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

fn escape_controls_but(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let escaped = |c: char| acts_on_terminal(c) && !(keep_lines && c == '\n');
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            // A line break in a command or a message reads as the `\n` people write (a
            // shell example's evidence showed `\u{a}`, issue 48, friction 13).
            '\n' if escaped(c) => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escaped(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Items each printed by `serde_json::to_string_pretty`, as that prints the array of them:
/// a list is printed a grade at a time without holding a JSON tree of all of them.
pub(crate) fn pretty_array(items: &[String]) -> String {
    let mut text = String::from("[");
    for (i, item) in items.iter().enumerate() {
        text.push_str(if i == 0 { "\n" } else { ",\n" });
        for (j, line) in item.lines().enumerate() {
            if j > 0 {
                text.push('\n');
            }
            text.push_str("  ");
            text.push_str(line);
        }
    }
    text.push_str(if items.is_empty() { "]" } else { "\n]" });
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cannot write grades file `g`: Is a directory (os error 21)` broke the rule that
    /// messages are lowercase, with an error number no user needs.
    /// Line breaks and tabs in evidence read as people write them, other controls as their
    /// code point (issue 48, friction 13: the shell example's evidence showed `\u{a}`).
    #[test]
    fn line_breaks_and_tabs_are_escaped_as_people_write_them() {
        assert_eq!(
            escape_controls("cat <<EOF\nx\ty\r\nEOF\u{1b}[2J"),
            "cat <<EOF\\nx\\ty\\r\\nEOF\\u{1b}[2J"
        );
        assert_eq!(escape_controls_keep_lines("two\nlines\t"), "two\nlines\\t");
    }

    #[test]
    fn system_error_texts_are_worded_as_the_message_around_them() {
        assert_eq!(
            for_stderr("cannot write grades file `blocker`: Is a directory (os error 21)"),
            "cannot write grades file `blocker`: is a directory"
        );
        assert_eq!(
            for_stderr(
                "cannot read `a`: Input/output error (os error 5); cannot read `b`: Permission denied (os error 13)"
            ),
            "cannot read `a`: input/output error; cannot read `b`: permission denied"
        );
        for kept in ["`x (os error 2` is not a pack", "no system error here"] {
            assert_eq!(for_stderr(kept), kept);
        }
    }
}
