//! Reading what a [`GradesFile`](super::GradesFile) wrote: the text of a grades file (or of
//! any file of results, a result a line), its lines parsed on every core and each value
//! handed to the caller as it is parsed. Only what the caller keeps is held: a grades file
//! gains a line per session graded and never shrinks, and a JSON tree of every line took 8
//! times the file's size. Where the text comes from (a file, standard input, a size cap) is
//! the caller's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use serde_json::Value;

/// A line of a grades file that is not JSON, or not a grade.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}:{line}: not a grade result: {message}", path.display())]
pub struct GradesLineError {
    /// The file.
    pub path: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// What `read` makes of each JSON value of `text`, the JSON lines of the file at `path`,
/// given its line number, in order. Blank lines are skipped; a line that is not JSON is an
/// error naming it. Lines read with U+FFFD for a lone UTF-16 surrogate are told of once,
/// through `warn`.
pub fn read_json_lines_as<T: Send>(
    path: &Path,
    text: &str,
    read: impl Fn(usize, Value) -> T + Sync,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<T>, GradesLineError> {
    map_lines(path, text, |line, value| Ok(Some(read(line, value))), warn)
}

/// What `keep` makes of each grade of `text`, the grades file at `path`, given its line
/// number (from 1), for the grades it keeps, in the file's order: a caller that pages
/// through the file picks grades by line in a second reading without holding the first
/// reading's grades. A line that is not a grade ([`not_a_grade`](super::not_a_grade)) is
/// an error. A last line without a line end that is not JSON is a write that never
/// finished: it is skipped, told through `warn`, and the whole lines before it are read.
pub fn read_kept_at<T: Send>(
    path: &Path,
    mut text: String,
    keep: impl Fn(usize, Value) -> Option<T> + Sync,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<T>, GradesLineError> {
    if !text.is_empty() && !text.ends_with('\n') {
        let start = text.rfind('\n').map_or(0, |at| at + 1);
        let last = &text[start..];
        // Read as the lines before it are: a whole line with a lone surrogate is no torn one.
        if !last.trim().is_empty() && crate::result::read_json_line(last).is_err() {
            warn(format!(
                "{}:{}: the last line is torn ({} bytes without a line end, a write that never finished); it is skipped",
                path.display(),
                text.lines().count(),
                last.len()
            ));
            text.truncate(start);
        }
    }
    map_lines(
        path,
        &text,
        |line, value| match super::not_a_grade(&value) {
            Some(message) => Err(line_error(path, line, message)),
            None => Ok(keep(line, value)),
        },
        warn,
    )
}

/// `keep`'s yield of each line of `text` on every core: a line that is not JSON is an error
/// naming it, and lines read with U+FFFD for a lone surrogate are told of once.
fn map_lines<T: Send>(
    path: &Path,
    text: &str,
    keep: impl Fn(usize, Value) -> Result<Option<T>, GradesLineError> + Sync,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<T>, GradesLineError> {
    let lone = LoneLines::default();
    let kept = crate::result::map_json_lines(
        text,
        |line, value, replaced| {
            lone.saw(line, replaced);
            keep(line, value)
        },
        |line, e| line_error(path, line, e.to_string()),
    )?;
    let count = lone.count.load(Ordering::Relaxed);
    if count > 0 {
        warn(format!(
            "{}:{}: {}",
            path.display(),
            lone.first.load(Ordering::Relaxed),
            crate::result::lone_surrogates_warning(count)
        ));
    }
    Ok(kept)
}

/// The lines read with U+FFFD for a lone surrogate, counted on every core; told once for the
/// file, as a source tells of them.
struct LoneLines {
    count: AtomicU64,
    first: AtomicUsize,
}

impl Default for LoneLines {
    fn default() -> Self {
        LoneLines {
            count: AtomicU64::new(0),
            first: AtomicUsize::new(usize::MAX),
        }
    }
}

impl LoneLines {
    fn saw(&self, line: usize, replaced: bool) {
        if replaced {
            self.count.fetch_add(1, Ordering::Relaxed);
            self.first.fetch_min(line, Ordering::Relaxed);
        }
    }
}

fn line_error(path: &Path, line: usize, message: String) -> GradesLineError {
    GradesLineError {
        path: path.to_owned(),
        line,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grades kept (line and session), or why the file is refused.
    type Kept = Result<Vec<(usize, String)>, GradesLineError>;

    fn kept(text: &str) -> (Kept, Vec<String>) {
        let mut warned = Vec::new();
        let read = read_kept_at(
            Path::new("g.jsonl"),
            text.to_owned(),
            |line, v| Some((line, v["sessionId"].as_str().unwrap_or_default().to_owned())),
            &mut |w| warned.push(w),
        );
        (read, warned)
    }

    const A: &str = r#"{"sessionId":"a","totalScore":1,"maxScore":2}"#;
    const B: &str = r#"{"sessionId":"b","totalScore":1,"maxScore":2}"#;

    #[test]
    fn grades_are_kept_with_their_lines_and_blank_lines_skipped() {
        let (read, warned) = kept(&format!("{A}\n\n{B}\n"));
        assert_eq!(read.unwrap(), [(1, "a".to_owned()), (3, "b".to_owned())]);
        assert!(warned.is_empty());
    }

    #[test]
    fn a_torn_last_line_is_skipped_with_a_warning_and_a_whole_one_is_not() {
        let (read, warned) = kept(&format!("{A}\n{{\"sessionId\":\"b\",\"tot"));
        assert_eq!(read.unwrap(), [(1, "a".to_owned())]);
        assert_eq!(
            warned,
            ["g.jsonl:2: the last line is torn (21 bytes without a line end, a write that never finished); it is skipped"]
        );
        let (read, warned) = kept(&format!("{A}\n{B}"));
        assert_eq!(read.unwrap().len(), 2);
        assert!(warned.is_empty());
    }

    #[test]
    fn a_line_that_is_not_a_grade_or_not_json_names_its_line() {
        let (read, _) = kept(&format!("{A}\n{{\"sessionId\":\"b\"}}\n"));
        assert_eq!(
            read.unwrap_err().to_string(),
            "g.jsonl:2: not a grade result: missing fields `totalScore`, `maxScore`"
        );
        let (read, _) = kept(&format!("{A}\nnot json\n{B}\n"));
        assert_eq!(read.unwrap_err().line, 2);
    }

    #[test]
    fn lines_with_a_lone_surrogate_are_told_of_once_from_the_first() {
        let lone = r#"{"sessionId":"\ud83d","totalScore":1,"maxScore":2}"#;
        let mut warned = Vec::new();
        let read = read_json_lines_as(
            Path::new("g.jsonl"),
            &format!("{A}\n{lone}\n{lone}\n"),
            |line, _| line,
            &mut |w| warned.push(w),
        );
        assert_eq!(read.unwrap(), [1, 2, 3]);
        assert_eq!(warned.len(), 1);
        assert!(warned[0].starts_with("g.jsonl:2: "), "{}", warned[0]);
    }
}
