//! The binary's errors and their exit codes.

use grade_engine::pack::codes::Code;
use grade_engine::{EvalError, PackError, SourceError};

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    /// An input error that sums up problems the output already showed, each with its code
    /// (exit 2), as a compiler's last line does.
    #[error("{0}")]
    Summary(String),
    /// A check failed, and the output already said how (exit 1, nothing more on stderr).
    #[error("the check failed, as the output says")]
    Reported,
    #[error(transparent)]
    Pack(#[from] PackError),
    #[error("{}", source_message(.0))]
    Source(#[from] SourceError),
    #[error("{}", eval_message(.0))]
    Eval(#[from] EvalError),
    /// A pack's tests could not be run.
    #[error(transparent)]
    PackTest(grade_engine::pack_test::TestError),
    /// A sink of the engine (the grades file, a JSON writer) failed.
    #[error(transparent)]
    Sink(#[from] grade_engine::sink::SinkError),
    #[error("cannot read grades file `{}`: {source}", path.display())]
    GradesRead {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: not a grade result: {message}", path.display())]
    GradesLine {
        path: std::path::PathBuf,
        line: usize,
        message: String,
    },
    #[error("cannot access `{}`: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Judgment(#[from] grade_engine::judgment::JudgmentError),
    #[error(transparent)]
    Reference(#[from] grade_engine::reference::ReferenceError),
    #[error("{0}")]
    Judge(String),
    #[error("{0}")]
    Push(String),
    /// The MCP server could not start or lost its connection.
    #[error("mcp: {0}")]
    Mcp(String),
    /// A source read over the network could not be read.
    #[error("{0}")]
    Remote(String),
    #[error("cannot write output file `{}`: {source}", path.display())]
    Output {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write to standard output: {0}")]
    Stdout(#[source] std::io::Error),
    /// Results held until the source read cleanly could not be kept in a temporary file.
    #[error(
        "cannot hold the results in a temporary file in `{}`: {source} (set TMPDIR to a folder with room)",
        dir.display()
    )]
    Held {
        dir: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot serialise a result: {0}")]
    Json(#[source] serde_json::Error),
    /// A check the user asked for failed; its report is already printed.
    #[error("{0}")]
    CheckFailed(String),
}

impl CliError {
    /// Standard output was closed by its reader (`grade … | head`): like ripgrep and cargo,
    /// the run ends quietly and successfully, since nobody is left to read the rest.
    pub fn is_closed_output(&self) -> bool {
        matches!(self, CliError::Stdout(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The error's diagnostic code (`grade explain CODE` says what it means), shown as
    /// `error[CODE]: …`. `None` where nothing more is printed ([`CliError::Reported`]), and
    /// where the problems shown carry their own (an invalid pack, [`CliError::Summary`]).
    pub fn code(&self) -> Option<Code> {
        Some(match self {
            CliError::Reported | CliError::Summary(_) => return None,
            CliError::Pack(e) => return e.code(),
            CliError::Source(e) => Code::of_source_error(e),
            CliError::Eval(e) => return e.code(),
            CliError::Usage(_) => Code::Usage,
            CliError::CheckFailed(_) => Code::CheckFailed,
            CliError::PackTest(_) => Code::PackTest,
            CliError::Sink(e) => e.code(),
            CliError::Output { .. } => Code::OutputWrite,
            CliError::Json(_) => Code::Serialise,
            CliError::GradesRead { .. } => Code::GradesUnreadable,
            CliError::GradesLine { .. } => Code::GradesLine,
            CliError::Io { .. } => Code::FileAccess,
            CliError::Judgment(_) => Code::JudgmentInvalid,
            CliError::Reference(_) => Code::ReferenceInvalid,
            CliError::Judge(_) => Code::JudgeFailed,
            CliError::Push(_) => Code::PushFailed,
            CliError::Mcp(_) => Code::Mcp,
            CliError::Remote(_) => Code::RemoteSource,
            CliError::Stdout(_) => Code::StdoutWrite,
            CliError::Held { .. } => Code::Held,
        })
    }

    /// The line that reports the error on standard error.
    pub fn line(&self) -> String {
        error_line(self.code(), &self.to_string())
    }

    /// 1 when a check failed (an invalid pack), 2 for usage and input errors.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Pack(PackError::Invalid { .. })
            | CliError::CheckFailed(_)
            | CliError::Reported => 1,
            _ => 2,
        }
    }
}

/// `error[CODE]: message` (`error: message` for an error without a code), as pack
/// diagnostics show theirs, escaped for a terminal. A message that ends in its own code (the
/// engine's words for E005 and E040 carry it, for embedders) does not repeat it.
pub fn error_line(code: Option<Code>, message: &str) -> String {
    let text = crate::render::for_stderr(message);
    match code {
        Some(code) => {
            let id = code.info().id;
            let text = text.strip_suffix(&format!(" [{id}]")).unwrap_or(&text);
            // A usage error of several problems says each on a line of its own.
            format!(
                "error[{id}]: {}",
                text.replace("\nerror: ", &format!("\nerror[{id}]: "))
            )
        }
        None => format!("error: {text}"),
    }
}

/// A session that could not be graded, as the line that reports it.
pub fn eval_line(err: &EvalError) -> String {
    error_line(err.code(), &eval_message(err))
}

/// A source error in the binary's words: the engine's message, and the flag that helps.
pub fn source_message(err: &SourceError) -> String {
    grade_engine::run::source_message(err, "`--skip-bad-lines`")
}

/// A grading error in the binary's words: the engine's message, and the flags that help.
pub fn eval_message(err: &EvalError) -> String {
    match err {
        EvalError::NoJudgment { .. } => {
            format!("{err} (give `--judgment FILE`, `--judge PROVIDER:MODEL` or `--judge-cmd CMD`)")
        }
        _ => err.to_string(),
    }
}

/// A session `grade compare` could not grade, in the binary's words.
pub fn grade_error_message(err: &grade_engine::compare::GradeError) -> String {
    match err {
        grade_engine::compare::GradeError::Eval(e) => eval_message(e),
        other => other.to_string(),
    }
}

impl From<grade_engine::pack_test::TestError> for CliError {
    /// A source or judgment error of a pack test is the binary's own kind (so a malformed
    /// line gets its flag hint); the others keep the runner's words.
    fn from(err: grade_engine::pack_test::TestError) -> Self {
        use grade_engine::pack_test::TestError;
        match err {
            TestError::Source(e) => CliError::Source(e),
            TestError::Judgment(e) => CliError::Judgment(e),
            TestError::Reference(e) => CliError::Reference(e),
            other => CliError::PackTest(other),
        }
    }
}
