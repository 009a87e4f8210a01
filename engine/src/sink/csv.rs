//! Results as CSV (`grade --format csv`): a header, then one row per session with a column
//! per dimension, quoted as RFC 4180 says (a field holding a comma, a quote or a line break
//! is quoted, its quotes doubled; lines end with CRLF). Values are the data's, unchanged: a
//! spreadsheet that reads a cell starting with `=` as a formula is the reader's to guard.

use super::rows::{passes, Columns, RowFormat, RowFormatKind, Tally};
use crate::pack::CompiledPack;
use crate::GradeResult;

/// The fixed columns, named as the JSON result names its keys; each dimension's column is
/// `dimensions.ID` (its score, empty when it did not apply) and the flags come last.
const FIXED: [&str; 12] = [
    "sessionId",
    "taskId",
    "source",
    "rubric",
    "rubricVersion",
    "totalScore",
    "maxScore",
    "percent",
    "grade",
    "passed",
    "entryCount",
    "skippedLines",
];

/// `--format csv`: Csv rows, made for a pack.
pub(super) const FORMAT: RowFormatKind = RowFormatKind {
    name: "csv",
    help: "A row per session and a column per dimension (RFC 4180)",
    make: |pack, pass_at| Box::new(Csv::new(pack, pass_at)),
};

/// CSV rows of a pack's results.
#[derive(Debug, Clone)]
pub struct Csv {
    columns: Columns,
    pass_at: f64,
}

impl Csv {
    /// CSV of `pack`'s results; `passed` says whether each reached `pass_at` percent.
    pub fn new(pack: &CompiledPack, pass_at: f64) -> Csv {
        Csv {
            columns: Columns::of(pack),
            pass_at,
        }
    }
}

/// Appends `value` as one CSV field: quoted when it holds a comma, a quote or a line
/// break, or starts or ends with a space (which some readers trim).
fn field(out: &mut Vec<u8>, value: &str) {
    let quoted =
        value.contains([',', '"', '\n', '\r']) || value.starts_with(' ') || value.ends_with(' ');
    if !quoted {
        out.extend_from_slice(value.as_bytes());
        return;
    }
    out.push(b'"');
    for part in value.split_inclusive('"') {
        out.extend_from_slice(part.as_bytes());
        if part.ends_with('"') {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

fn record<'a>(out: &mut Vec<u8>, fields: impl IntoIterator<Item = std::borrow::Cow<'a, str>>) {
    for (i, value) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        field(out, &value);
    }
    out.extend_from_slice(b"\r\n");
}

impl RowFormat for Csv {
    fn pass_at(&self) -> f64 {
        self.pass_at
    }

    fn row(&self, r: &GradeResult, out: &mut Vec<u8>) {
        use std::borrow::Cow;
        let percent = r.graded_percent();
        let graded = percent.is_some();
        let fixed = [
            Cow::Borrowed(r.session_id.as_str()),
            Cow::Borrowed(r.task_id.as_deref().unwrap_or_default()),
            Cow::Borrowed(r.source.as_deref().unwrap_or_default()),
            Cow::Borrowed(r.rubric.id.as_str()),
            Cow::Borrowed(r.rubric.version.as_str()),
            Cow::Owned(r.total_score.to_string()),
            Cow::Owned(r.max_score.to_string()),
            percent.map_or(Cow::Borrowed(""), |p| {
                Cow::Owned(crate::entry::js_number(p))
            }),
            Cow::Borrowed(r.grade.as_deref().filter(|_| graded).unwrap_or_default()),
            Cow::Borrowed(match passes(r, self.pass_at) {
                Some(true) => "true",
                Some(false) => "false",
                None => "",
            }),
            Cow::Owned(r.entry_count.to_string()),
            Cow::Owned(r.skipped_lines.to_string()),
        ];
        let dimensions = self.columns.dimensions.iter().map(|(id, _)| {
            match r.dimensions.get(id).filter(|d| !d.not_applicable) {
                Some(d) => Cow::Owned(d.score.to_string()),
                None => Cow::Borrowed(""),
            }
        });
        let flags = Cow::Owned(r.flags.join("\n"));
        record(
            out,
            fixed
                .into_iter()
                .chain(dimensions)
                .chain(std::iter::once(flags)),
        );
    }

    fn head(&self, _: &Tally, out: &mut Vec<u8>) {
        use std::borrow::Cow;
        let dimensions =
            (self.columns.dimensions.iter()).map(|(id, _)| Cow::Owned(format!("dimensions.{id}")));
        record(
            out,
            FIXED
                .iter()
                .map(|&name| Cow::Borrowed(name))
                .chain(dimensions)
                .chain(std::iter::once(Cow::Borrowed("flags"))),
        );
    }

    fn tail(&self, _: &Tally, _: &mut Vec<u8>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(value: &str) -> String {
        let mut out = Vec::new();
        field(&mut out, value);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn fields_are_quoted_as_rfc_4180_says() {
        assert_eq!(one("plain"), "plain");
        assert_eq!(one(""), "");
        assert_eq!(one("a,b"), "\"a,b\"");
        assert_eq!(one("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(one("\""), "\"\"\"\"");
        assert_eq!(one("two\nlines"), "\"two\nlines\"");
        assert_eq!(one("cr\r"), "\"cr\r\"");
        assert_eq!(one(" padded"), "\" padded\"");
    }
}
