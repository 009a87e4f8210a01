//! Results as JUnit XML (`grade --format junit`), the report CI systems show as tests: one
//! test suite for the pack, a test case per session, failed when the session scored below
//! the pass mark and skipped when it had nothing to grade. Every text is escaped; the
//! characters XML 1.0 cannot hold at all (most control characters) are written as visible
//! escapes (`\u{1b}`), so the file always parses.

use super::rows::{is_hidden, passes, push_visible, Columns, RowFormat, RowFormatKind, Tally};
use crate::pack::CompiledPack;
use crate::GradeResult;

/// `--format junit`: JUnit rows, made for a pack.
pub(super) const FORMAT: RowFormatKind = RowFormatKind {
    name: "junit",
    help: "JUnit XML: a test case per session, failed below `--fail-under` or the pack's pass mark",
    make: |pack, pass_at| Box::new(JUnit::new(pack, pass_at)),
};

/// JUnit XML of a pack's results.
#[derive(Debug, Clone)]
pub struct JUnit {
    columns: Columns,
    pass_at: f64,
}

impl JUnit {
    /// JUnit XML of `pack`'s results; a session below `pass_at` percent fails.
    pub fn new(pack: &CompiledPack, pass_at: f64) -> JUnit {
        JUnit {
            columns: Columns::of(pack),
            pass_at,
        }
    }
}

/// Appends `text` escaped for XML: in an attribute (`"` escaped, and line ends and tabs as
/// character references, which attribute normalisation would turn into spaces) or in
/// content.
fn escaped(out: &mut Vec<u8>, text: &str, attribute: bool) {
    let mut buf = [0u8; 4];
    for c in text.chars() {
        match c {
            '&' => out.extend_from_slice(b"&amp;"),
            '<' => out.extend_from_slice(b"&lt;"),
            '>' => out.extend_from_slice(b"&gt;"),
            '"' if attribute => out.extend_from_slice(b"&quot;"),
            '\n' if attribute => out.extend_from_slice(b"&#10;"),
            '\r' => out.extend_from_slice(b"&#13;"),
            '\t' if attribute => out.extend_from_slice(b"&#9;"),
            c if is_hidden(c) => push_visible(out, c),
            c => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
}

fn attribute(out: &mut Vec<u8>, name: &str, value: &str) {
    out.push(b' ');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"=\"");
    escaped(out, value, true);
    out.push(b'"');
}

impl JUnit {
    /// The session's dimensions and flags, as the failure's text says them.
    fn details(&self, r: &GradeResult) -> String {
        use std::fmt::Write as _;
        let mut text = String::new();
        for (id, name) in &self.columns.dimensions {
            let Some(d) = r.dimensions.get(id) else {
                continue;
            };
            if d.not_applicable {
                let _ = writeln!(text, "{name}: n/a");
            } else {
                let _ = writeln!(text, "{name}: {}/{}", d.score, d.max);
            }
            for e in &d.evidence {
                let _ = writeln!(text, "  - {e}");
            }
        }
        if !r.flags.is_empty() {
            let _ = writeln!(text, "flags:");
            for f in &r.flags {
                let _ = writeln!(text, "  ! {f}");
            }
        }
        text
    }

    fn suite_counts(&self, tally: &Tally, out: &mut Vec<u8>) {
        attribute(out, "tests", &tally.results.to_string());
        attribute(out, "failures", &tally.failed.to_string());
        attribute(out, "errors", "0");
        attribute(out, "skipped", &tally.nothing_to_grade.to_string());
    }
}

impl RowFormat for JUnit {
    fn pass_at(&self) -> f64 {
        self.pass_at
    }

    fn row(&self, r: &GradeResult, out: &mut Vec<u8>) {
        out.extend_from_slice(b"    <testcase");
        attribute(out, "name", &r.session_id);
        attribute(out, "classname", &self.columns.rubric);
        let letter = r
            .grade
            .as_deref()
            .map(|g| format!(" · grade {g}"))
            .unwrap_or_default();
        let on = r
            .applied_note()
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        match passes(r, self.pass_at) {
            Some(true) => {
                out.extend_from_slice(b">\n      <system-out>");
                let score = format!(
                    "{}/{} ({}%){letter}{on}\n{}",
                    r.total_score,
                    r.max_score,
                    crate::entry::js_number(r.graded_percent().unwrap_or_default()),
                    self.details(r)
                );
                escaped(out, &score, false);
                out.extend_from_slice(b"</system-out>\n    </testcase>\n");
            }
            Some(false) => {
                out.extend_from_slice(b">\n      <failure");
                let message = format!(
                    "{}/{} ({}%){letter}{on}: below {}%",
                    r.total_score,
                    r.max_score,
                    crate::entry::js_number(r.graded_percent().unwrap_or_default()),
                    crate::entry::js_number(self.pass_at)
                );
                attribute(out, "message", &message);
                attribute(out, "type", "below-pass-mark");
                out.push(b'>');
                escaped(out, &self.details(r), false);
                out.extend_from_slice(b"</failure>\n    </testcase>\n");
            }
            None => {
                out.extend_from_slice(b">\n      <skipped");
                attribute(out, "message", "nothing to grade: no dimension applies");
                out.extend_from_slice(b"/>\n    </testcase>\n");
            }
        }
    }

    fn head(&self, tally: &Tally, out: &mut Vec<u8>) {
        out.extend_from_slice(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
        attribute(out, "name", "grade");
        self.suite_counts(tally, out);
        out.extend_from_slice(b">\n  <testsuite");
        let suite = format!("{} {}", self.columns.rubric, self.columns.version);
        attribute(out, "name", &suite);
        self.suite_counts(tally, out);
        out.extend_from_slice(b">\n    <properties>\n      <property");
        attribute(out, "name", "passAt");
        attribute(out, "value", &crate::entry::js_number(self.pass_at));
        out.extend_from_slice(b"/>\n    </properties>\n");
    }

    fn tail(&self, _: &Tally, out: &mut Vec<u8>) {
        out.extend_from_slice(b"  </testsuite>\n</testsuites>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str, attr: bool) -> String {
        let mut out = Vec::new();
        escaped(&mut out, value, attr);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn xml_special_and_forbidden_characters_are_escaped() {
        assert_eq!(text("a<b>&\"c\"", false), "a&lt;b&gt;&amp;\"c\"");
        assert_eq!(text("a<b>&\"c\"", true), "a&lt;b&gt;&amp;&quot;c&quot;");
        assert_eq!(text("x\ny\tz", true), "x&#10;y&#9;z");
        assert_eq!(text("x\ny\tz", false), "x\ny\tz");
        assert_eq!(
            text("esc\u{1b}[31m nul\u{0}", false),
            "esc\\u{1b}[31m nul\\u{0}"
        );
        assert_eq!(text("\u{fffe}", true), "\\u{fffe}");
        assert_eq!(text("]]>", false), "]]&gt;");
    }
}
