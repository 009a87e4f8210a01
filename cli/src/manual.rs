//! `grade completions SHELL` and `grade man`: both generated from the clap definition.

use clap::CommandFactory;

use crate::args::Cli;
use crate::error::CliError;

/// The completion script for `shell`, as that shell's completion loader expects it.
pub fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "grade", &mut out);
    crate::write_stdout(&out)
}

/// The manual page of `grade` in roff: its options and subcommands as `--help` lists them.
pub fn man() -> Result<(), CliError> {
    let command = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut out)
        .map_err(CliError::Stdout)?;
    crate::write_stdout(&out)
}
