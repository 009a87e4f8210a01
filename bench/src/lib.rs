//! A seeded generator of realistic CLEO audit traffic.
//!
//! It writes N sessions as CLEO `AuditEntry` JSON lines (the spelling of the conformance
//! corpus: Python's `json.dumps` separators, keys in CLEO's order) and as a CLEO-layout
//! `tasks.db` (the 17-column `audit_log` table, mapped exactly as the corpus's
//! `jsonl_to_cleo_db.py` maps entries to rows).
//!
//! The traffic follows the corpus's mix: the same domains and operations (including the
//! `Session` / `Find` spellings CLEO's grader does not count), params by operation, the
//! four gateways and a missing one, CLI and MCP sources, lead/worker roles, failures with
//! exit codes 1, 2, 4 and 6 (E_NOT_FOUND often but not always followed by a lookup), and the
//! three timestamp spellings (`Z`, `+02:00`, SQLite's `YYYY-MM-DD HH:MM:SS`). Session lengths
//! are heavy-tailed (most a few dozen entries, 1% in the hundreds or thousands), and sessions
//! overlap in time, so the file interleaves them the way a busy project's log does.
//!
//! Within a session instants strictly increase (a SQLite-spelled timestamp carries no
//! milliseconds and is generated on a whole second), so a session's order is the same in the
//! JSONL file and in the database, and both sources grade alike.

// No unwrap, expect or panic outside tests: input must never crash the grader, and a failure
// must say what failed (clippy.toml allows them in `#[cfg(test)]` code).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::Path;

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct GenConfig {
    pub sessions: usize,
    /// Total entries, spread over the sessions (each session has at least one).
    pub entries: usize,
    pub seed: u64,
    /// About how many sessions are running at any moment (how much the log interleaves).
    pub concurrency: usize,
    /// How sessions are laid out over the log.
    pub layout: Layout,
}

/// How sessions are laid out over the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Sessions overlap about `concurrency` at a time, as in a busy project's log.
    #[default]
    Realistic,
    /// Every session spans the whole log: its entries are spread uniformly at random over
    /// the file (a random interleaving of all sessions), so nearly every session is open
    /// from the start to the end. The worst case for a streamed read.
    Spread,
    /// Every session has exactly one entry (`entries` is ignored): a streamed read meets
    /// millions of sessions, each complete as soon as it is seen.
    OneEntry,
}

impl GenConfig {
    pub fn new(sessions: usize, entries: usize, seed: u64) -> Self {
        GenConfig {
            sessions,
            entries,
            seed,
            concurrency: 32,
            layout: Layout::Realistic,
        }
    }
}

/// SplitMix64: small, fast, and the same on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
    pub fn range(&mut self, lo: u64, hi_inclusive: u64) -> u64 {
        lo + self.below(hi_inclusive - lo + 1)
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
    /// An index chosen with the given weights.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < u64::from(w) {
                return i;
            }
            x -= u64::from(w);
        }
        weights.len() - 1
    }
}

/// Params of an entry, in CLEO's key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    None,
    TaskId(u32),
    Add {
        title: Option<String>,
        description: Option<&'static str>,
        parent: Option<&'static str>,
    },
}

/// How a timestamp is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    Zulu,
    Offset,
    Sqlite,
}

/// One generated audit entry.
#[derive(Debug, Clone)]
pub struct GenEntry {
    /// Milliseconds since the epoch, UTC.
    pub instant: i64,
    pub spelling: Spelling,
    pub session: u32,
    pub domain: &'static str,
    pub operation: &'static str,
    pub params: Params,
    pub success: bool,
    pub exit_code: i64,
    pub duration: u32,
    pub source: &'static str,
    pub gateway: Option<&'static str>,
    pub task_id: Option<u32>,
    pub role: Option<&'static str>,
    pub error: Option<&'static str>,
}

/// The generated traffic: entries in file order (by instant; sessions interleaved).
pub struct Traffic {
    pub session_ids: Vec<String>,
    pub entries: Vec<GenEntry>,
}

/// Operations of a session's body with their weights (the corpus's counts, without the
/// session bookkeeping that frames a session).
const BODY_OPS: &[(&str, &str, u32)] = &[
    ("tasks", "add", 450),
    ("tasks", "find", 393),
    ("tasks", "show", 337),
    ("tasks", "exists", 308),
    ("tasks", "complete", 284),
    ("admin", "help", 275),
    ("tasks", "update", 264),
    ("skills", "show", 264),
    ("tasks", "Find", 40),
    ("session", "show", 246),
    ("admin", "dash", 246),
    ("orchestrate", "spawn", 240),
    ("tools", "skill.show", 238),
    ("tasks", "list", 235),
    ("tools", "skill.list", 225),
    ("agent", "delegate_task", 215),
    ("skills", "list", 212),
    ("session", "list", 60),
    ("Session", "list", 30),
    ("memory", "find", 164),
];

const TITLES: &[&str] = &[
    "fix login ",
    "Refactor db",
    "Fix login",
    "  FIX LOGIN",
    "Write docs",
    "write docs",
    "Add tests",
    "",
];
const DESCRIPTIONS: &[&str] = &[
    "Do it",
    "Do it",
    "A real description",
    "desc",
    "",
    "   ",
    "\t\n",
];
const PARENTS: &[&str] = &["T1", "T100", "T200", ""];
const NOT_FOUND_ERRORS: &[&str] = &["E_NOT_FOUND: task not found", "E_NOT_FOUND"];
/// Operations that name a task, so they can fail with E_NOT_FOUND.
const NAMES_TASK: &[&str] = &["show", "update", "complete", "exists"];

fn is_query(domain: &str, operation: &str) -> bool {
    matches!(
        operation,
        "find"
            | "Find"
            | "list"
            | "show"
            | "exists"
            | "help"
            | "dash"
            | "skill.show"
            | "skill.list"
    ) || domain == "memory"
}

/// Session lengths: heavy-tailed, scaled so they add up to `total` exactly.
fn session_lengths(rng: &mut Rng, sessions: usize, total: usize) -> Vec<usize> {
    let raw: Vec<f64> = (0..sessions)
        .map(|_| {
            let r = rng.below(1000);
            (if r < 900 {
                rng.range(4, 36)
            } else if r < 990 {
                rng.range(40, 240)
            } else {
                rng.range(300, 3000)
            }) as f64
        })
        .collect();
    let sum: f64 = raw.iter().sum();
    let scale = total as f64 / sum;
    let mut lengths: Vec<usize> = raw.iter().map(|&l| ((l * scale) as usize).max(1)).collect();
    // Fix rounding: add to or take from the sessions in turn until the total is exact.
    let mut have: usize = lengths.iter().sum();
    let mut i = 0;
    while have != total && sessions > 0 {
        let k = i % sessions;
        if have < total {
            lengths[k] += 1;
            have += 1;
        } else if lengths[k] > 1 {
            lengths[k] -= 1;
            have -= 1;
        }
        i += 1;
        if i > sessions * 64 && have > total {
            break; // more sessions than entries: every session keeps one
        }
    }
    lengths
}

/// 2026-03-01T00:00:00Z.
const EPOCH_MS: i64 = 1_772_323_200_000;

/// Generates the traffic of `config`.
pub fn generate(config: &GenConfig) -> Traffic {
    let mut rng = Rng::new(config.seed);
    let lengths = if config.layout == Layout::OneEntry {
        vec![1; config.sessions]
    } else {
        session_lengths(
            &mut rng,
            config.sessions,
            config.entries.max(config.sessions),
        )
    };
    // Mean gap between a session's entries, so sessions overlap about `concurrency` at a time.
    let mean_gap_ms: u64 = 20_000;
    let total_entries: usize = lengths.iter().sum();
    let span_ms = (total_entries as u64 * mean_gap_ms) / config.concurrency.max(1) as u64;

    let mut session_ids = Vec::with_capacity(config.sessions);
    let mut entries: Vec<GenEntry> = Vec::with_capacity(total_entries);
    for (s, &len) in lengths.iter().enumerate() {
        let start = EPOCH_MS + rng.below(span_ms.max(1)) as i64;
        let era_v2 = rng.chance(0.45); // `query`/`mutate` gateways rather than `cleo_*`
        let cli = rng.chance(0.43);
        let role = match rng.below(100) {
            0..=71 => None,
            72..=89 => Some("lead"),
            _ => Some("worker"),
        };
        let session_task = rng.chance(0.5).then(|| rng.range(1, 900) as u32);
        let mut id = format!("ses_{}_{:06x}", start / 1000, rng.next_u64() & 0xFF_FFFF);
        if config.layout == Layout::OneEntry {
            // Millions of sessions: random ids alone would collide.
            let _ = write!(id, "_{s}");
        }
        session_ids.push(id);

        let ends = len >= 3 && rng.chance(0.85);
        let weights: Vec<u32> = BODY_OPS.iter().map(|o| o.2).collect();
        let mut pending_recovery: Option<u64> = None;
        let mut at = start;
        for k in 0..len {
            let (domain, operation) = if k == 0 && len >= 2 {
                match rng.below(10) {
                    0..=5 => ("session", "list"),
                    6..=8 => ("session", "start"),
                    _ => ("tasks", "find"),
                }
            } else if ends && k == len - 1 {
                ("session", "end")
            } else if pending_recovery == Some(0) {
                pending_recovery = None;
                ("tasks", if rng.chance(0.6) { "find" } else { "exists" })
            } else {
                if let Some(n) = pending_recovery.as_mut() {
                    *n -= 1;
                }
                let (d, o, _) = BODY_OPS[rng.weighted(&weights)];
                (d, o)
            };
            let spelling = match rng.below(100) {
                0..=62 => Spelling::Zulu,
                63..=81 => Spelling::Sqlite,
                _ => Spelling::Offset,
            };
            if k > 0 {
                at += 1_000 + rng.below(2 * mean_gap_ms - 2_000) as i64;
            }
            if spelling == Spelling::Sqlite {
                at -= at.rem_euclid(1_000);
            }
            let params = match (domain, operation) {
                ("tasks", "add") => {
                    let unique = rng.chance(0.5);
                    Params::Add {
                        title: if unique {
                            Some(format!("Task {} {k}", session_ids[s]))
                        } else if rng.chance(0.95) {
                            Some((*rng.pick(TITLES)).to_owned())
                        } else {
                            None
                        },
                        description: rng.chance(0.9).then(|| *rng.pick(DESCRIPTIONS)),
                        parent: rng.chance(0.4).then(|| *rng.pick(PARENTS)),
                    }
                }
                ("tasks", "show" | "update" | "complete" | "exists")
                | ("session" | "Session", "list")
                    if rng.chance(0.75) =>
                {
                    Params::TaskId(rng.range(1, 900) as u32)
                }
                _ => Params::None,
            };
            let (success, exit_code, error) =
                if domain == "tasks" && NAMES_TASK.contains(&operation) && rng.chance(0.2) {
                    // Recovered with a lookup within the next few entries about half the time.
                    if rng.chance(0.5) && pending_recovery.is_none() {
                        pending_recovery = Some(rng.below(3));
                    }
                    (false, 4, Some(*rng.pick(NOT_FOUND_ERRORS)))
                } else if rng.chance(0.1) {
                    (false, *rng.pick(&[1, 2, 6]), Some("E_GENERAL"))
                } else {
                    (true, 0, None)
                };
            let source = if cli { "cli" } else { "mcp" };
            let gateway = if cli && rng.chance(0.4) {
                None
            } else if is_query(domain, operation) {
                Some(if era_v2 { "query" } else { "cleo_query" })
            } else {
                Some(if era_v2 { "mutate" } else { "cleo_mutate" })
            };
            let task_id = match session_task {
                Some(t) if rng.chance(0.8) => Some(t),
                _ => rng.chance(0.25).then(|| rng.range(1, 900) as u32),
            };
            entries.push(GenEntry {
                instant: at,
                spelling,
                session: s as u32,
                domain,
                operation,
                params,
                success,
                exit_code,
                duration: rng.range(5, 480) as u32,
                source,
                gateway,
                task_id,
                role,
                error,
            });
        }
    }
    if config.layout == Layout::Spread {
        spread(&mut rng, &mut entries, &lengths);
    } else {
        // File order: by instant; a session's own entries keep their order (stable sort).
        entries.sort_by_key(|e| (e.instant, e.session));
    }
    Traffic {
        session_ids,
        entries,
    }
}

/// Lays `entries` (grouped by session, each session's in order) out in a uniformly random
/// interleaving, and gives them instants that increase through the file: one second a line,
/// so a session's entries keep strictly increasing instants in every timestamp spelling.
fn spread(rng: &mut Rng, entries: &mut Vec<GenEntry>, lengths: &[usize]) {
    let mut order: Vec<u32> = lengths
        .iter()
        .enumerate()
        .flat_map(|(s, &len)| std::iter::repeat_n(s as u32, len))
        .collect();
    // Fisher-Yates: every interleaving equally likely.
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    // Where each session's entries start in `entries`.
    let mut next: Vec<usize> = Vec::with_capacity(lengths.len());
    let mut at = 0;
    for &len in lengths {
        next.push(at);
        at += len;
    }
    let mut slots: Vec<Option<GenEntry>> = std::mem::take(entries).into_iter().map(Some).collect();
    for (position, &s) in order.iter().enumerate() {
        let k = &mut next[s as usize];
        let Some(mut e) = slots[*k].take() else {
            continue;
        };
        *k += 1;
        e.instant = EPOCH_MS + position as i64 * 1_000;
        if e.spelling != Spelling::Sqlite {
            e.instant += rng.below(1_000) as i64;
        }
        entries.push(e);
    }
}

fn json_str(out: &mut String, s: &str) {
    // serde_json escapes the way Python's json.dumps does for ASCII text.
    // A JSON string's Display is its serialization, which cannot fail.
    out.push_str(&serde_json::Value::from(s).to_string());
}

/// `{"taskId": "T12"}` with Python's separators, as CLEO's corpus spells params.
pub fn params_json(p: &Params, out: &mut String) {
    match p {
        Params::None => out.push_str("{}"),
        Params::TaskId(t) => {
            let _ = write!(out, "{{\"taskId\": \"T{t}\"}}");
        }
        Params::Add {
            title,
            description,
            parent,
        } => {
            out.push('{');
            let mut first = true;
            let mut key = |out: &mut String, k: &str| {
                if !first {
                    out.push_str(", ");
                }
                first = false;
                let _ = write!(out, "\"{k}\": ");
            };
            if let Some(t) = title {
                key(out, "title");
                json_str(out, t);
            }
            if let Some(d) = description {
                key(out, "description");
                json_str(out, d);
            }
            if let Some(p) = parent {
                key(out, "parent");
                json_str(out, p);
            }
            out.push('}');
        }
    }
}

/// The timestamp as the entry spells it.
pub fn timestamp_text(instant: i64, spelling: Spelling) -> String {
    let shifted = match spelling {
        Spelling::Offset => instant + 2 * 3_600_000,
        _ => instant,
    };
    let ms = shifted.rem_euclid(1_000);
    let secs = shifted.div_euclid(1_000);
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    let (h, mi, s) = (sod / 3_600, sod % 3_600 / 60, sod % 60);
    match spelling {
        Spelling::Zulu => format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z"),
        Spelling::Offset => format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}+02:00"),
        Spelling::Sqlite => format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}"),
    }
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// One entry as a JSON line (without the newline).
pub fn entry_json(e: &GenEntry, session_id: &str, out: &mut String) {
    out.push_str("{\"timestamp\": \"");
    out.push_str(&timestamp_text(e.instant, e.spelling));
    out.push_str("\", \"sessionId\": ");
    json_str(out, session_id);
    let _ = write!(
        out,
        ", \"domain\": \"{}\", \"operation\": \"{}\", \"params\": ",
        e.domain, e.operation
    );
    params_json(&e.params, out);
    let _ = write!(
        out,
        ", \"result\": {{\"success\": {}, \"exitCode\": {}, \"duration\": {}}}, \"metadata\": {{\"source\": \"{}\"",
        e.success, e.exit_code, e.duration, e.source
    );
    if let Some(g) = e.gateway {
        let _ = write!(out, ", \"gateway\": \"{g}\"");
    }
    if let Some(t) = e.task_id {
        let _ = write!(out, ", \"taskId\": \"T{t}\"");
    }
    if let Some(r) = e.role {
        let _ = write!(out, ", \"role\": \"{r}\"");
    }
    out.push('}');
    if let Some(err) = e.error {
        out.push_str(", \"error\": ");
        json_str(out, err);
    }
    out.push('}');
}

impl Traffic {
    /// The whole log as JSONL text.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::with_capacity(self.entries.len() * 280);
        for e in &self.entries {
            entry_json(e, &self.session_ids[e.session as usize], &mut out);
            out.push('\n');
        }
        out
    }

    pub fn write_jsonl(&self, path: &Path) -> std::io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
        let mut line = String::with_capacity(512);
        for e in &self.entries {
            line.clear();
            entry_json(e, &self.session_ids[e.session as usize], &mut line);
            line.push('\n');
            w.write_all(line.as_bytes())?;
        }
        w.flush()
    }

    /// Writes a CLEO-layout `tasks.db` (replacing `path`), row for row as
    /// `jsonl_to_cleo_db.py` writes the same entries.
    pub fn write_cleo_db(&self, path: &Path) -> rusqlite::Result<()> {
        let _ = std::fs::remove_file(path);
        let mut db = rusqlite::Connection::open(path)?;
        db.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
        db.execute_batch(TABLE_DDL)?;
        let tx = db.transaction()?;
        {
            let mut insert =
                tx.prepare("INSERT INTO audit_log VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")?;
            let mut details = String::with_capacity(256);
            for (n, e) in self.entries.iter().enumerate() {
                details.clear();
                params_json(&e.params, &mut details);
                let task_id = e
                    .task_id
                    .map_or_else(|| "system".to_owned(), |t| format!("T{t}"));
                insert.execute(rusqlite::params![
                    uuid_of(n as u128 + 1),
                    timestamp_text(e.instant, e.spelling),
                    e.operation,
                    task_id,
                    "agent",
                    details,
                    None::<String>,
                    None::<String>,
                    e.domain,
                    e.operation,
                    self.session_ids[e.session as usize],
                    None::<String>,
                    e.duration,
                    i64::from(e.success),
                    e.source,
                    e.gateway,
                    e.error,
                ])?;
            }
        }
        tx.commit()?;
        db.execute_batch(INDEX_DDL)?;
        Ok(())
    }
}

/// `str(uuid.UUID(int=n))`.
fn uuid_of(n: u128) -> String {
    let hex = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// CLEO's `audit_log` (the 2026-02-27 dispatch-columns migration), as in `jsonl_to_cleo_db.py`.
pub const TABLE_DDL: &str = "
CREATE TABLE audit_log (
  id text PRIMARY KEY, timestamp text DEFAULT (datetime('now')) NOT NULL, action text NOT NULL,
  task_id text NOT NULL, actor text DEFAULT 'system' NOT NULL, details_json text DEFAULT '{}',
  before_json text, after_json text, domain text, operation text, session_id text, request_id text,
  duration_ms integer, success integer, source text, gateway text, error_message text);";

pub const INDEX_DDL: &str = "
CREATE INDEX idx_audit_log_task_id ON audit_log (task_id);
CREATE INDEX idx_audit_log_action ON audit_log (action);
CREATE INDEX idx_audit_log_timestamp ON audit_log (timestamp);
CREATE INDEX idx_audit_log_domain ON audit_log (domain);
CREATE INDEX idx_audit_log_request_id ON audit_log (request_id);";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_traffic() {
        let a = generate(&GenConfig::new(50, 1_000, 7)).to_jsonl();
        let b = generate(&GenConfig::new(50, 1_000, 7)).to_jsonl();
        assert_eq!(a, b);
        assert_eq!(a.lines().count(), 1_000);
        assert_ne!(a, generate(&GenConfig::new(50, 1_000, 8)).to_jsonl());
    }

    #[test]
    fn lines_are_json_with_cleo_keys_and_sessions_keep_increasing_instants() {
        let t = generate(&GenConfig::new(40, 2_000, 1));
        let mut last: std::collections::HashMap<u32, i64> = Default::default();
        for e in &t.entries {
            if let Some(prev) = last.insert(e.session, e.instant) {
                assert!(e.instant > prev, "a session's instants must increase");
            }
        }
        for line in t.to_jsonl().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            for k in [
                "timestamp",
                "sessionId",
                "domain",
                "operation",
                "params",
                "result",
                "metadata",
            ] {
                assert!(v.get(k).is_some(), "{k} missing in {line}");
            }
        }
    }

    #[test]
    fn spread_sessions_span_the_log_and_keep_increasing_instants() {
        let config = GenConfig {
            layout: Layout::Spread,
            ..GenConfig::new(200, 20_000, 3)
        };
        let t = generate(&config);
        assert_eq!(t.entries.len(), 20_000);
        let n = t.entries.len();
        let mut first = vec![usize::MAX; 200];
        let mut last = vec![0; 200];
        for (i, pair) in t.entries.windows(2).enumerate() {
            assert!(
                pair[1].instant > pair[0].instant,
                "instants increase through the file"
            );
            let s = pair[0].session as usize;
            first[s] = first[s].min(i);
            last[s] = i;
        }
        // Sessions of a few dozen entries or more open in the first tenth and close in the last.
        let long: Vec<usize> = (0..200).filter(|&s| last[s] > first[s] + n / 2).collect();
        assert!(
            long.len() > 150,
            "{} of 200 sessions span half the log",
            long.len()
        );
        assert_eq!(t.to_jsonl(), generate(&config).to_jsonl(), "seeded");
    }

    #[test]
    fn one_entry_sessions_have_one_entry_each_and_distinct_ids() {
        let config = GenConfig {
            layout: Layout::OneEntry,
            ..GenConfig::new(5_000, 1, 4)
        };
        let t = generate(&config);
        assert_eq!(t.entries.len(), 5_000);
        let ids: std::collections::HashSet<&String> = t.session_ids.iter().collect();
        assert_eq!(ids.len(), 5_000);
    }

    #[test]
    fn uuids_match_python() {
        assert_eq!(uuid_of(1), "00000000-0000-0000-0000-000000000001");
        assert_eq!(
            uuid_of(0x1_0000_0000_0000),
            "00000000-0000-0000-0001-000000000000"
        );
    }

    #[test]
    fn spellings_denote_the_instant() {
        let ms = EPOCH_MS + 3_723_456;
        assert_eq!(
            timestamp_text(ms, Spelling::Zulu),
            "2026-03-01T01:02:03.456Z"
        );
        assert_eq!(
            timestamp_text(ms, Spelling::Offset),
            "2026-03-01T03:02:03.456+02:00"
        );
        assert_eq!(timestamp_text(ms, Spelling::Sqlite), "2026-03-01 01:02:03");
    }
}
