//! `gen`: writes seeded, realistic CLEO audit traffic as JSONL and/or a CLEO-layout tasks.db.
//!
//! ```text
//! gen --sessions 50000 --entries 1000000 --seed 1 --jsonl big.jsonl --db big.db
//! ```

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use grade_bench::{generate, GenConfig, Layout};

#[derive(Parser)]
#[command(about = "Generate seeded, realistic CLEO audit traffic (JSONL and/or tasks.db)")]
struct Args {
    /// Number of sessions
    #[arg(long, default_value_t = 50_000)]
    sessions: usize,
    /// Total number of audit entries
    #[arg(long, default_value_t = 1_000_000)]
    entries: usize,
    /// Seed: the same seed and sizes give byte-identical output
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// About how many sessions run at once (how much the log interleaves)
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// How sessions are laid out: `realistic` (about --concurrency open at once), `spread`
    /// (every session spans the whole log, the worst case for streaming), `one-entry` (one
    /// entry a session; --entries is ignored)
    #[arg(long, value_enum, default_value_t = LayoutArg::Realistic)]
    layout: LayoutArg,
    /// Write the entries as a JSONL audit log here
    #[arg(long)]
    jsonl: Option<PathBuf>,
    /// Write the entries as a CLEO-layout tasks.db here (replaced if it exists)
    #[arg(long)]
    db: Option<PathBuf>,
    /// Also write the session ids, one a line, here
    #[arg(long)]
    sessions_out: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LayoutArg {
    Realistic,
    Spread,
    OneEntry,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.jsonl.is_none() && args.db.is_none() {
        return Err("give --jsonl PATH and/or --db PATH".into());
    }
    let started = Instant::now();
    let config = GenConfig {
        concurrency: args.concurrency,
        layout: match args.layout {
            LayoutArg::Realistic => Layout::Realistic,
            LayoutArg::Spread => Layout::Spread,
            LayoutArg::OneEntry => Layout::OneEntry,
        },
        ..GenConfig::new(args.sessions, args.entries, args.seed)
    };
    let traffic = generate(&config);
    if let Some(path) = &args.jsonl {
        traffic.write_jsonl(path)?;
        eprintln!(
            "wrote {} entries of {} sessions to {}",
            traffic.entries.len(),
            traffic.session_ids.len(),
            path.display()
        );
    }
    if let Some(path) = &args.db {
        traffic.write_cleo_db(path)?;
        eprintln!(
            "wrote {} audit_log rows to {}",
            traffic.entries.len(),
            path.display()
        );
    }
    if let Some(path) = &args.sessions_out {
        let mut text = traffic.session_ids.join("\n");
        text.push('\n');
        std::fs::write(path, text)?;
    }
    eprintln!("in {:.1?}", started.elapsed());
    Ok(())
}
