//! Results as a Markdown summary (`grade --format markdown`), for a CI job's page (GitHub's
//! `$GITHUB_STEP_SUMMARY`): a heading with the pack, a line of counts, the letters, then a
//! table with a row per session and a column per dimension. Text from the data is escaped
//! (Markdown's punctuation, HTML's `<`, line breaks), so a session id cannot break the table
//! or inject markup.

use super::rows::{is_hidden, passes, push_visible, Columns, RowFormat, RowFormatKind, Tally};
use crate::pack::CompiledPack;
use crate::GradeResult;

/// `--format markdown`: Markdown rows, made for a pack.
pub(super) const FORMAT: RowFormatKind = RowFormatKind {
    name: "markdown",
    help: "A Markdown summary and table, for `$GITHUB_STEP_SUMMARY`",
    make: |pack, pass_at| Box::new(Markdown::new(pack, pass_at)),
};

/// A Markdown summary of a pack's results.
#[derive(Debug, Clone)]
pub struct Markdown {
    columns: Columns,
    pass_at: f64,
}

impl Markdown {
    /// A Markdown summary of `pack`'s results; a session below `pass_at` percent fails.
    pub fn new(pack: &CompiledPack, pass_at: f64) -> Markdown {
        Markdown {
            columns: Columns::of(pack),
            pass_at,
        }
    }
}

/// Appends `text` as literal Markdown inside a table cell or a heading: the punctuation
/// that marks up text there is backslash-escaped (`|` would end the cell; `*`, `_`, `~`,
/// a backtick, `[` and GitHub's `$` for math), `<`, `>` and `&` written as HTML references
/// (GitHub renders HTML), line breaks as spaces, controls as visible escapes.
fn escaped(out: &mut Vec<u8>, text: &str) {
    let mut buf = [0u8; 4];
    for c in text.chars() {
        match c {
            '<' => out.extend_from_slice(b"&lt;"),
            '>' => out.extend_from_slice(b"&gt;"),
            '&' => out.extend_from_slice(b"&amp;"),
            '\n' | '\r' | '\t' => out.push(b' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '$' => {
                out.push(b'\\');
                out.push(c as u8);
            }
            c if is_hidden(c) => push_visible(out, c),
            c => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
}

fn cell(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(b" ");
    escaped(out, text);
    out.extend_from_slice(b" |");
}

impl RowFormat for Markdown {
    fn pass_at(&self) -> f64 {
        self.pass_at
    }

    fn row(&self, r: &GradeResult, out: &mut Vec<u8>) {
        out.push(b'|');
        cell(out, &r.session_id);
        let percent = r.graded_percent();
        let graded = percent.is_some();
        if let Some(percent) = percent {
            cell(out, &format!("{}/{}", r.total_score, r.max_score));
            cell(out, &format!("{}%", crate::entry::js_number(percent)));
        } else {
            cell(out, "n/a");
            cell(out, "n/a");
        }
        let letter = match (r.grade.as_deref().filter(|_| graded), r.applied_note()) {
            (Some(g), Some(note)) => format!("{g} {note}"),
            (Some(g), None) => g.to_owned(),
            (None, _) => String::new(),
        };
        cell(out, &letter);
        out.extend_from_slice(match passes(r, self.pass_at) {
            Some(true) => " pass |".as_bytes(),
            Some(false) => " **fail** |".as_bytes(),
            None => " nothing to grade |".as_bytes(),
        });
        for (id, _) in &self.columns.dimensions {
            match r.dimensions.get(id) {
                Some(d) if !d.not_applicable => cell(out, &format!("{}/{}", d.score, d.max)),
                Some(_) => cell(out, "n/a"),
                None => cell(out, ""),
            }
        }
        cell(out, &r.flags.len().to_string());
        out.push(b'\n');
    }

    fn head(&self, tally: &Tally, out: &mut Vec<u8>) {
        use std::fmt::Write as _;
        out.extend_from_slice(b"### ");
        escaped(
            out,
            &format!("{} {}", self.columns.rubric, self.columns.version),
        );
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut line = format!(
            "\n\n**{} session{} graded**",
            tally.graded(),
            plural(tally.graded())
        );
        if let Some(mean) = tally.mean() {
            let _ = write!(line, ", mean {}%", crate::entry::js_number(mean));
        }
        let _ = write!(
            line,
            " · {} below the pass mark of {}%",
            tally.failed,
            crate::entry::js_number(tally.pass_at())
        );
        if tally.nothing_to_grade > 0 {
            let _ = write!(
                line,
                " · {} with nothing to grade (left out of the mean)",
                tally.nothing_to_grade
            );
        }
        line.push_str("\n\n");
        out.extend_from_slice(line.as_bytes());
        let letters = tally.letters(&self.columns.bands);
        if !letters.is_empty() {
            out.extend_from_slice(b"Grades:");
            for (i, (letter, n)) in letters.into_iter().enumerate() {
                out.extend_from_slice(if i == 0 { b" " } else { " · ".as_bytes() });
                escaped(out, letter);
                out.extend_from_slice(format!(" {n}").as_bytes());
            }
            out.extend_from_slice(b"\n\n");
        }
        out.extend_from_slice(b"| Session | Score | Percent | Grade | Result |");
        for (_, name) in &self.columns.dimensions {
            cell(out, name);
        }
        out.extend_from_slice(b" Flags |\n| --- | ---: | ---: | :---: | :---: |");
        for _ in &self.columns.dimensions {
            out.extend_from_slice(b" ---: |");
        }
        out.extend_from_slice(b" ---: |\n");
    }

    fn tail(&self, _: &Tally, _: &mut Vec<u8>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_markup_and_line_breaks_cannot_break_a_cell() {
        let mut out = Vec::new();
        escaped(
            &mut out,
            "a|b <img src=x> **bold**\n[link](x) `c` &amp;\u{1b}",
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a\\|b &lt;img src=x&gt; \\*\\*bold\\*\\* \\[link\\](x) \\`c\\` &amp;amp;\\u{1b}"
        );
    }
}
