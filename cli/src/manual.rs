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

/// The manual page of `grade` in roff, or of one of its subcommands (`compare`, `rubric
/// validate`): its options and subcommands as `--help` lists them. A page lists its
/// subcommands as `grade-COMMAND(1)`; each of those is printed by `grade man COMMAND`.
pub fn man(path: &[String]) -> Result<(), CliError> {
    let mut command = Cli::command();
    command.build();
    let mut name = command.get_name().to_owned();
    // A subcommand has no version of its own: its page's footer names the program's.
    let version = command.get_version().unwrap_or_default().to_owned();
    for (depth, sub) in path.iter().enumerate() {
        let Some(found) = command.find_subcommand(sub).cloned() else {
            let known: Vec<String> = command
                .get_subcommands()
                .filter(|c| c.get_name() != "help")
                .map(|c| format!("`{}`", c.get_name()))
                .collect();
            let parent = if depth == 0 {
                "grade".to_owned()
            } else {
                format!("grade {}", path[..depth].join(" "))
            };
            return Err(CliError::Usage(if known.is_empty() {
                format!("`{parent}` has no subcommands, so no page `{sub}`")
            } else {
                format!(
                    "`{parent}` has no subcommand `{sub}` (its pages: {})",
                    known.join(", ")
                )
            }));
        };
        name = format!("{name}-{}", found.get_name());
        command = found;
    }
    let command = command.name(name).version(version);
    let mut out = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut out)
        .map_err(CliError::Stdout)?;
    crate::write_stdout(&out)
}
