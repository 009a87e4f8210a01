//! `grade rubric` and its subcommands' flags.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{percent, Format, PackLoad, PackSearch, ALLOW_PLUGINS_ID, RUBRIC_PATH_ID};

/// `grade rubric`: the pack flags may come before the subcommand's name, as they did while
/// they were global; `Cli::parse_args` hands them to the subcommand.
#[derive(Debug, Args)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub struct RubricArgs {
    #[command(flatten)]
    pub packs: PackLoad,

    #[command(subcommand)]
    pub command: RubricCommand,
}

impl RubricArgs {
    /// Gives the subcommand the pack flags given before its name, as clap gave global flags:
    /// a value on the command line beats one from the environment, and the subcommand's own
    /// beats the group's. A subcommand that loads no pack (or no plugin) refuses the flag
    /// it would ignore.
    pub(super) fn settle(
        &mut self,
        name: &str,
        group: &clap::ArgMatches,
        leaf: &clap::ArgMatches,
    ) -> Result<(), String> {
        let given = |m: &clap::ArgMatches, id: &str| {
            m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        };
        let path_given = given(group, RUBRIC_PATH_ID);
        let allow_given = given(group, ALLOW_PLUGINS_ID);
        let (search, allow) = match &mut self.command {
            RubricCommand::List(RubricListArgs { packs, .. })
            | RubricCommand::Show(RubricShowArgs { packs, .. })
            | RubricCommand::ScoreConfigs(RubricShowArgs { packs, .. })
            | RubricCommand::Validate(RubricValidateArgs { packs, .. })
            | RubricCommand::Test(RubricTestArgs { packs, .. })
            | RubricCommand::JudgmentSchema(RubricPackArgs { packs, .. })
            | RubricCommand::New(RubricNewArgs { packs, .. }) => {
                (Some(&mut packs.search), Some(&mut packs.allow_plugins))
            }
            RubricCommand::Pin(RubricPinArgs { search, .. }) => (Some(search), None),
            RubricCommand::Explain(_) => (None, None),
        };
        match search {
            Some(search) if path_given && !given(leaf, RUBRIC_PATH_ID) => {
                search
                    .rubric_path
                    .clone_from(&self.packs.search.rubric_path);
            }
            Some(_) => {}
            None if path_given => {
                return Err(format!(
                    "`--rubric-path` is not taken by `grade rubric {name}`, which finds no pack"
                ))
            }
            None => {}
        }
        match allow {
            Some(allow) => *allow |= self.packs.allow_plugins,
            None if allow_given => {
                return Err(format!(
                    "`--allow-plugins` is not taken by `grade rubric {name}`, which loads no plugin"
                ))
            }
            None => {}
        }
        Ok(())
    }
}

#[derive(Debug, Subcommand)]
pub enum RubricCommand {
    /// List the shipped packs and those in `--rubric-path` folders
    List(RubricListArgs),
    /// Show a pack's dimensions, points and rules in words
    Show(RubricShowArgs),
    /// Check a pack and report every problem at once
    Validate(RubricValidateArgs),
    /// Run a pack's own test fixtures and compare with their expectations
    Test(RubricTestArgs),
    /// Scaffold a new pack folder that validates and passes its own test
    New(RubricNewArgs),
    /// Print the Langfuse score-config bodies of a weighted pack (`POST /api/public/score-configs`)
    ScoreConfigs(RubricShowArgs),
    /// Print the JSON Schema a judgment for a pack must satisfy
    JudgmentSchema(RubricPackArgs),
    /// Record the sha256 of each plugin library the pack declares in its `rubric.yaml` (after you built them and trust the build)
    Pin(RubricPinArgs),
    /// Explain a diagnostic code (`E012`, `W103`), or list every code: the same as `grade explain`
    Explain(crate::explain::RubricExplainArgs),
}

#[derive(Debug, Args)]
pub struct RubricTestArgs {
    /// A pack id or folder
    #[arg(value_name = "ID|PATH", default_value = ".")]
    pub pack: String,
    /// Write the expectations from the current results instead of comparing
    #[arg(long)]
    pub update: bool,
    /// Print, for each rule, in how many fixture sessions it awarded, deducted or flagged
    #[arg(long)]
    pub coverage: bool,
    /// Fail when fewer than this percentage of rules ever fire
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    pub min_coverage: Option<f64>,
    #[command(flatten)]
    pub packs: PackLoad,
}

#[derive(Debug, Args)]
pub struct RubricNewArgs {
    /// Name of the new pack; also its folder and id
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Start from an existing pack (id or folder) instead of the template
    #[arg(long, value_name = "ID|PATH")]
    pub from: Option<String>,
    /// Folder to create the pack in
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    // A copy of a pack with plugins loads them to write its tests' expectations.
    #[command(flatten)]
    pub packs: PackLoad,
}

#[derive(Debug, Args)]
pub struct RubricListArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    #[command(flatten)]
    pub packs: PackLoad,
}

/// A command that prints one thing in one form: it takes no `--format` it would ignore.
#[derive(Debug, Args)]
pub struct RubricPackArgs {
    /// A pack id or folder
    #[arg(value_name = "ID|PATH")]
    pub pack: String,
    #[command(flatten)]
    pub packs: PackLoad,
}

/// `grade rubric pin` finds the pack but loads none of its plugins: it hashes them.
#[derive(Debug, Args)]
pub struct RubricPinArgs {
    /// A pack id or folder
    #[arg(value_name = "ID|PATH")]
    pub pack: String,
    #[command(flatten)]
    pub search: PackSearch,
}

#[derive(Debug, Args)]
pub struct RubricShowArgs {
    /// A pack id or folder
    #[arg(value_name = "ID|PATH")]
    pub pack: String,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    #[command(flatten)]
    pub packs: PackLoad,
}

#[derive(Debug, Args)]
pub struct RubricValidateArgs {
    /// A pack id or folder
    #[arg(value_name = "ID|PATH", default_value = ".")]
    pub pack: String,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    #[command(flatten)]
    pub packs: PackLoad,
}
