//! `grade explain CODE` (and its first spelling, `grade rubric explain CODE`): what a
//! diagnostic code means, of a pack, a session, a source or the command.

use clap::Args;
use grade_engine::pack::codes::{Code, Scope, ALL};
use grade_engine::pack::Severity;

use crate::error::CliError;
use crate::write_stdout;

#[derive(Debug, Args)]
pub struct RubricExplainArgs {
    /// A code (`E012`, `E101`, `W103`) or its name (`unknown-selector`); without one, every code is listed
    #[arg(value_name = "CODE")]
    pub code: Option<String>,
}

pub fn run(args: &RubricExplainArgs) -> Result<(), CliError> {
    let Some(text) = &args.code else {
        let mut out = String::new();
        for code in ALL {
            let info = code.info();
            out.push_str(&format!("{} {:<22} {}\n", info.id, info.name, info.summary));
        }
        return write_stdout(out.as_bytes());
    };
    let Some(code) = Code::parse(text) else {
        let close: Vec<String> = Code::close_to(text)
            .iter()
            .map(|c| format!("`{}` ({})", c.info().id, c.info().name))
            .collect();
        let hint = if close.is_empty() {
            "`grade explain` lists every code".to_owned()
        } else {
            format!("did you mean {}?", close.join(", "))
        };
        return Err(CliError::Usage(format!(
            "unknown diagnostic code `{text}`: {hint}"
        )));
    };
    write_stdout(explain(code).as_bytes())
}

/// The text `grade explain` prints for a code.
pub fn explain(code: Code) -> String {
    let info = code.info();
    let (kind, consequence) = match (info.severity, code.scope()) {
        (Severity::Warning, _) => (
            "warning",
            "A pack that means it silences this warning with `allow: [CODE]` in `rubric.yaml`.",
        ),
        (Severity::Error, Scope::Pack) => (
            "error",
            "An error makes the pack invalid; it cannot be allowed.",
        ),
        (Severity::Error, Scope::Session) => (
            "error",
            "It is an error of one session, not of the pack: the pack stays valid, and the other \
sessions of a run are graded.",
        ),
        (Severity::Error, Scope::Source) => (
            "error",
            "It is an error of the source: nothing is graded from it, and `grade` exits 2.",
        ),
        (Severity::Error, Scope::Command) if code == Code::CheckFailed => (
            "error",
            "It is the verdict of a check, not a broken input: `grade` exits 1.",
        ),
        (Severity::Error, Scope::Command) => (
            "error",
            "It is an error of the command: `grade` stops and exits 2.",
        ),
    };
    format!(
        "{} {} ({kind}): {}\n\n{}\n\n{}\n",
        info.id,
        info.name,
        info.summary,
        wrap(info.doc, 88),
        wrap(&consequence.replace("CODE", info.id), 88)
    )
}

/// `text` broken at spaces into lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if line > 0 && line + 1 + len > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += len;
    }
    out
}
