//! What stops a run: an operation budget, a cap on how deep values nest, and caps on the
//! memory its values take and on what it allocates in all.
//!
//! Rhai counts the operations of a closure called by a built-in (`all`, `filter`, `map`,
//! `reduce`…) on a copy of its state and forgets them when the call returns, so 100 passes
//! of `a.all(|x| …)` over 100,000 items cost 100 operations. The budget here is counted by
//! the progress callback, which Rhai calls once for every operation wherever it happens.
//!
//! Rhai clones, drops, prints, compares and measures arrays and maps by recursion, one call
//! per level, so a value nested a hundred thousand levels deep (`a = [a]` in a loop)
//! overflowed the stack and aborted the process. A run is stopped once a value in its scope
//! nests deeper than [`MAX_NESTING`]: the scope is looked at when a variable is read (every
//! value a script builds on comes from one), at most once per so many operations that looking
//! costs a fixed share of the run, and the run has a stack deep enough for what can grow
//! between two looks.
//!
//! A built-in over a huge value counts as one operation (`contains` on a 20-million-character
//! string, `reverse` of a million items), so operations alone let a run last minutes. A run
//! is also stopped once it has taken more processor time than [`MAX_SECONDS`] (a pack may set
//! its own, `limits.script_seconds`) plus [`SECONDS_PER_ENTRY`] per entry. Processor time,
//! not wall time, so that a machine busy with other work (or `--jobs` above its cores) does
//! not fail runs that would pass alone. The clock is read every so many operations, so that
//! reading it costs a fixed share of a run however long its operations take (see
//! [`CLOCK_EVERY`]).
//!
//! Memory is counted by the global allocator ([`crate::CountingAllocator`]), read at every
//! operation: a run is stopped once its values hold more than [`MAX_MEMORY`] (plus
//! [`MEMORY_PER_ENTRY`] per entry of its session), or once it has allocated more than
//! [`MAX_ALLOCATED`] (plus [`ALLOCATED_PER_ENTRY`] per entry) in all: copying an array
//! (`let b = a`) is one operation whatever its length, so copies are bounded by the bytes
//! they take. One operation at most doubles what a run holds (`s += s`), except for the
//! built-ins whose result can be far larger than their arguments (`pad`, `replace`, `split`…),
//! which check the room first (`guards.rs`). Rhai's own size limits are not set: Rhai checks
//! them by measuring the whole value after every call that may have changed it, so building
//! an array of n items cost n²/2 steps. Without the counting allocator installed they are,
//! and the built-ins check themselves.

use std::cell::Cell;
use std::sync::{Condvar, Mutex};

use rhai::{Array, Dynamic, Engine, EvalAltResult, Map, Position};

use crate::alloc;

/// Bounds that stop a script within about a second on a slow machine: a run may take
/// this many operations, plus [`OPERATIONS_PER_ENTRY`] for each entry of its session, so
/// a script that walks a long session once is not stopped while one that loops is.
pub const MAX_OPERATIONS: u64 = 2_000_000;
/// The operations a run may spend per entry of its session, beyond [`MAX_OPERATIONS`].
pub const OPERATIONS_PER_ENTRY: u64 = 400;
/// How deep arrays and maps may nest. Twice JSON's 128 (serde_json's limit), so an entry's
/// `params` or `metadata` held in a map or two always fits.
pub const MAX_NESTING: usize = 256;
/// A look at the scope that visited `n` values waits `n / SCAN_SHARE` operations before the
/// next one: looking costs at most this many value visits per operation.
const SCAN_SHARE: u64 = 2;
/// The fewest operations between two looks, so small scopes are not looked at all the time.
const MIN_GAP: u64 = 256;
/// The stack a run gets. A value may nest one level per operation between two looks, and
/// the deepest recursion Rhai does on it (`to_string`, `==`) took about 5 KiB a level in a
/// debug build (`a = [take(a)]`, no copy per level, overflowed 64 MiB between 8,000 and
/// 16,000 levels); the stack is reserved, not touched, unless a run goes that deep.
pub(crate) const RUN_STACK: usize = 256 << 20;
/// The most operations between two looks, so that nesting past the cap is found before the
/// run's stack ([`RUN_STACK`]) can run out. A look visits every value in scope, so with
/// 1 << 14, as it was, looking was half the time of `claude-code-v1` on 100,000 tool calls,
/// whose scripts hold a few hundred thousand values; copies are bounded by what they allocate.
const MAX_GAP: u64 = 1 << 16;

/// The processor time a run may take by default, in seconds, beyond [`SECONDS_PER_ENTRY`]
/// for each entry of its session; a pack sets its own with `limits.script_seconds`. Ten times
/// what the operation budget lets a script loop for on a slow machine.
pub const MAX_SECONDS: f64 = 10.0;
/// The processor time a run may take per entry of its session: a script that walks the
/// session once takes far less.
pub const SECONDS_PER_ENTRY: f64 = 0.001;
/// The most seconds a pack may give its runs (an hour).
pub const MAX_PACK_SECONDS: f64 = 3600.0;
/// The clock is read again after this many operations at most, and after every operation
/// while operations take more than [`CLOCK_SLOW`]: a run's overshoot past its time is one
/// slow operation, or about a millisecond.
const CLOCK_EVERY: u32 = 1024;
/// Operations slower than this (between two reads of the clock) make the next read come
/// after one operation.
const CLOCK_SLOW_NANOS: u64 = 1_000_000;

/// What the runs under way in the process may hold together: each run reserves what it may
/// hold (its share of [`MAX_MEMORY`]) before it starts and waits until that much is free, so
/// `--jobs 48` cannot hold 48 runs' worth at once. A run that may hold more than this alone
/// waits until no other run is under way.
pub const MAX_TOTAL_MEMORY: u64 = 2 << 30;

/// The memory a run's values may take, beyond what its session is given per entry
/// ([`MEMORY_PER_ENTRY`]).
pub const MAX_MEMORY: u64 = 128 << 20;
/// The memory a run may take for each entry of its session: a script may build a few maps
/// and arrays with an item or two per entry.
pub const MEMORY_PER_ENTRY: u64 = 2 << 10;
/// What a run may allocate in all, beyond [`ALLOCATED_PER_ENTRY`] per entry: each copy of a
/// value counts again, so this bounds the time copying takes (a few seconds at most).
pub const MAX_ALLOCATED: u64 = 4 << 30;
/// What a run may allocate in all for each entry of its session.
pub const ALLOCATED_PER_ENTRY: u64 = 64 << 10;

const MAX_CALL_LEVELS: usize = 32;
const MAX_STRING_SIZE: usize = 1 << 20;
const MAX_ARRAY_SIZE: usize = 1 << 20;
/// As large as an array: a map keyed by file or target holds one key per call of a session.
const MAX_MAP_SIZE: usize = 1 << 20;

/// The tokens a run stopped for nesting, memory or allocation ends with (a stop for
/// operations carries `()`).
const NESTING: &str = "nesting";
const TIME: &str = "time";
const MEMORY: &str = "memory";
const ALLOCATION: &str = "allocation";

#[derive(Clone, Copy)]
struct Meter {
    budget: u64,
    spent: u64,
    /// Operations since the scope was last looked at, and how many to wait.
    since_look: u64,
    gap: u64,
    /// Whether allocations are counted, the counts when the run started, and the caps.
    counting: bool,
    allocated_at_start: u64,
    freed_at_start: u64,
    max_memory: u64,
    max_allocated: u64,
    /// The processor time of the thread when the run started, what the run may take, when
    /// the clock was last read, and the operations until it is read again and between reads.
    cpu_at_start: u64,
    max_cpu: u64,
    cpu_at_read: u64,
    until_clock: u32,
    clock_gap: u32,
}

const IDLE: Meter = Meter {
    budget: MAX_OPERATIONS,
    spent: 0,
    since_look: 0,
    gap: MIN_GAP,
    counting: false,
    allocated_at_start: 0,
    freed_at_start: 0,
    max_memory: MAX_MEMORY,
    max_allocated: MAX_ALLOCATED,
    cpu_at_start: 0,
    max_cpu: u64::MAX,
    cpu_at_read: 0,
    until_clock: 1,
    clock_gap: 1,
};

impl Meter {
    /// The limit the run's allocations are past, if any, counting `more` bytes it is about to
    /// allocate.
    fn over(&self, more: u64) -> Option<Stop> {
        if !self.counting {
            return None;
        }
        let (allocated, freed) = alloc::thread_counts();
        let allocated = allocated.wrapping_sub(self.allocated_at_start);
        let held = allocated.saturating_sub(freed.wrapping_sub(self.freed_at_start));
        if held.saturating_add(more) > self.max_memory {
            Some(Stop::Memory)
        } else if allocated.saturating_add(more) > self.max_allocated {
            Some(Stop::Allocation)
        } else {
            None
        }
    }
}

impl Meter {
    /// Counts an operation against the run's time: whether it has taken more than it may.
    fn out_of_time(&mut self) -> bool {
        self.until_clock -= 1;
        if self.until_clock > 0 {
            return false;
        }
        let now = thread_cpu_nanos();
        let since = now.saturating_sub(self.cpu_at_read);
        self.clock_gap = if since > CLOCK_SLOW_NANOS {
            1
        } else {
            (self.clock_gap * 2).min(CLOCK_EVERY)
        };
        self.until_clock = self.clock_gap;
        self.cpu_at_read = now;
        now.saturating_sub(self.cpu_at_start) > self.max_cpu
    }
}

/// The processor time this thread has taken, in nanoseconds.
#[cfg(unix)]
fn thread_cpu_nanos() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// Where no thread clock is at hand, the time since the process first asked.
#[cfg(not(unix))]
fn thread_cpu_nanos() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos()
        .try_into()
        .unwrap_or(u64::MAX)
}

thread_local! {

    /// The meter of the run on this thread (runs do not nest).
    static METER: Cell<Meter> = const { Cell::new(IDLE) };
}

/// Why a run was stopped by its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Operations,
    /// The run took more processor time than it may.
    Time,
    Nesting,
    /// The run's values take more memory than it may hold.
    Memory,
    /// The run allocated more than it may in all.
    Allocation,
}

impl Stop {
    fn token(self) -> Dynamic {
        match self {
            Stop::Operations => Dynamic::UNIT,
            Stop::Time => TIME.into(),
            Stop::Nesting => NESTING.into(),
            Stop::Memory => MEMORY.into(),
            Stop::Allocation => ALLOCATION.into(),
        }
    }

    fn error(self) -> Box<EvalAltResult> {
        EvalAltResult::ErrorTerminated(self.token(), Position::NONE).into()
    }
}

/// Stops the run unless `bytes` more fit in what it may hold and allocate: for a built-in
/// about to build a value far larger than its arguments.
pub(super) fn ensure_room(bytes: u64) -> Result<(), Box<EvalAltResult>> {
    match METER.with(|m| m.get().over(bytes)) {
        Some(stop) => Err(stop.error()),
        None => Ok(()),
    }
}

/// Sets the bounds on `engine` and installs the callbacks that keep them. With `counting`
/// (allocations are counted) memory is bounded by the counts; without, by Rhai's size limits.
pub(super) fn install(engine: &mut Engine, counting: bool) {
    // The budget depends on the session, so it is checked here rather than with
    // `set_max_operations`, which is one number for every run and misses closures.
    engine.on_progress(|_| {
        let stop = METER.with(|m| {
            let mut meter = m.get();
            meter.spent += 1;
            meter.since_look += 1;
            let late = meter.out_of_time();
            m.set(meter);
            if meter.spent > meter.budget {
                Some(Stop::Operations)
            } else if late {
                Some(Stop::Time)
            } else {
                meter.over(0)
            }
        });
        stop.map(Stop::token)
    });
    #[allow(deprecated, reason = "`on_var` is marked volatile, not deprecated")]
    engine.on_var(|_, _, context| {
        let due = METER.with(|m| {
            let meter = m.get();
            meter.since_look >= meter.gap
        });
        if !due {
            return Ok(None);
        }
        let mut seen = 0;
        let deep = context
            .scope()
            .iter_raw()
            .any(|(_, _, value)| nesting(value, 0, &mut seen) > MAX_NESTING);
        METER.with(|m| {
            let mut meter = m.get();
            meter.since_look = 0;
            meter.gap = (seen / SCAN_SHARE).clamp(MIN_GAP, MAX_GAP);
            m.set(meter);
        });
        if deep {
            return Err(Stop::Nesting.error());
        }
        Ok(None)
    });
    engine.set_max_call_levels(MAX_CALL_LEVELS);
    engine.set_max_expr_depths(64, 32);
    if !counting {
        engine.set_max_string_size(MAX_STRING_SIZE);
        engine.set_max_array_size(MAX_ARRAY_SIZE);
        engine.set_max_map_size(MAX_MAP_SIZE);
    }
}

/// What a run may spend.
pub(super) struct Budget {
    pub(super) operations: u64,
    /// The processor time it may take, in seconds.
    pub(super) seconds: f64,
    /// The memory its values may take, and what it may allocate in all (when counted).
    pub(super) memory: Option<(u64, u64)>,
}

impl Budget {
    /// The budget of a run over a session of `entries` entries, with `operations` as the
    /// fixed part of its operations and `memory` as the fixed parts of what it may hold and
    /// allocate ([`MAX_MEMORY`], [`MAX_ALLOCATED`]) when allocations are counted.
    pub(super) fn for_session(
        operations: u64,
        seconds: f64,
        memory: Option<(u64, u64)>,
        entries: usize,
    ) -> Budget {
        let seconds = seconds + SECONDS_PER_ENTRY * entries as f64;
        let entries = entries as u64;
        let per_entry = |fixed: u64, each: u64| fixed.saturating_add(each.saturating_mul(entries));
        Budget {
            operations: per_entry(operations, OPERATIONS_PER_ENTRY),
            seconds,
            memory: memory.map(|(held, all)| {
                (
                    per_entry(held, MEMORY_PER_ENTRY),
                    per_entry(all, ALLOCATED_PER_ENTRY),
                )
            }),
        }
    }
}

/// Starts the meter for a run on this thread with `budget`.
pub(super) fn start(budget: &Budget) {
    let (allocated_at_start, freed_at_start) = alloc::thread_counts();
    let (max_memory, max_allocated) = budget.memory.unwrap_or((u64::MAX, u64::MAX));
    let cpu_at_start = thread_cpu_nanos();
    METER.with(|m| {
        m.set(Meter {
            budget: budget.operations,
            cpu_at_start,
            cpu_at_read: cpu_at_start,
            // A float past u64 saturates: no limit a run could reach.
            max_cpu: (budget.seconds * 1e9) as u64,
            counting: budget.memory.is_some(),
            allocated_at_start,
            freed_at_start,
            max_memory,
            max_allocated,
            ..IDLE
        })
    });
}

/// Which limit stopped a run that failed with `err`, and where, if one did: the stop may come
/// inside a function or a closure called by a built-in (`all`, `map`…), which wrap it.
pub(super) fn stopped(err: &EvalAltResult) -> Option<(Stop, Position)> {
    match err {
        EvalAltResult::ErrorTerminated(token, at) => {
            let stop = match token.read_lock::<rhai::ImmutableString>().as_deref() {
                Some(s) if s.as_str() == NESTING => Stop::Nesting,
                Some(s) if s.as_str() == TIME => Stop::Time,
                Some(s) if s.as_str() == MEMORY => Stop::Memory,
                Some(s) if s.as_str() == ALLOCATION => Stop::Allocation,
                _ => Stop::Operations,
            };
            Some((stop, *at))
        }
        EvalAltResult::ErrorInFunctionCall(_, _, inner, at) => {
            stopped(inner).map(|(stop, inner_at)| (stop, if at.is_none() { inner_at } else { *at }))
        }
        _ => None,
    }
}

/// The memory the runs under way have reserved, shared by every thread.
pub(super) struct Pool {
    cap: u64,
    reserved: Mutex<u64>,
    freed: Condvar,
}

/// What one run reserved of a [`Pool`], given back when dropped.
pub(super) struct Reservation<'p> {
    pool: &'p Pool,
    bytes: u64,
}

impl Pool {
    pub(super) const fn new(cap: u64) -> Pool {
        Pool {
            cap,
            reserved: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Reserves `bytes` (at most the whole pool), waiting until they are free. A run never
    /// waits while it holds a reservation, so waiting always ends.
    pub(super) fn reserve(&self, bytes: u64) -> Reservation<'_> {
        let bytes = bytes.min(self.cap);
        let mut reserved = self.reserved.lock().unwrap_or_else(|p| p.into_inner());
        while *reserved + bytes > self.cap {
            reserved = self.freed.wait(reserved).unwrap_or_else(|p| p.into_inner());
        }
        *reserved += bytes;
        Reservation { pool: self, bytes }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut reserved = self.pool.reserved.lock().unwrap_or_else(|p| p.into_inner());
        *reserved -= self.bytes;
        self.pool.freed.notify_all();
    }
}

/// The pool of every run of the process ([`MAX_TOTAL_MEMORY`]).
pub(super) static MEMORY_POOL: Pool = Pool::new(MAX_TOTAL_MEMORY);

/// How deep `value` nests (a scalar is 0, `[]` is 1), counted to just past the cap, adding
/// the values looked at to `seen`. The recursion stops past the cap, so it stays shallow.
fn nesting(value: &Dynamic, level: usize, seen: &mut u64) -> usize {
    *seen += 1;
    if level > MAX_NESTING {
        return level;
    }
    // A value shared with a closure may be locked by the operation under way; it is
    // looked at on a later read. (`is_locked` walks a whole array or map that is not shared.)
    if value.is_shared() && value.is_locked() {
        return level;
    }
    // The kind is read off the value before anything is locked: most values are neither.
    if value.is_array() {
        if let Some(items) = value.read_lock::<Array>() {
            return deepest(items.iter(), level, seen);
        }
    } else if value.is_map() {
        if let Some(map) = value.read_lock::<Map>() {
            return deepest(map.values(), level, seen);
        }
    }
    level
}

/// The deepest nesting of a container at `level` holding `items`, stopping past the cap.
fn deepest<'v>(items: impl Iterator<Item = &'v Dynamic>, level: usize, seen: &mut u64) -> usize {
    let mut deepest = level + 1;
    for item in items {
        deepest = deepest.max(nesting(item, level + 1, seen));
        if deepest > MAX_NESTING {
            break;
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--jobs 48` held 48 runs' memory caps at once (8 GB): runs now reserve their cap from
    /// one pool, and a run waits while the others hold it.
    #[test]
    fn runs_together_never_reserve_more_than_the_pool() {
        static POOL: Pool = Pool::new(100);
        let held = std::sync::atomic::AtomicU64::new(0);
        let most = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        let _reserved = POOL.reserve(40);
                        let now = held.fetch_add(40, std::sync::atomic::Ordering::SeqCst) + 40;
                        most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                        std::thread::yield_now();
                        held.fetch_sub(40, std::sync::atomic::Ordering::SeqCst);
                    }
                });
            }
        });
        let most = most.into_inner();
        assert!(
            (40..=80).contains(&most),
            "two runs of 40 fit in 100, three never: {most}"
        );
        // A run larger than the pool runs alone rather than never.
        let alone = POOL.reserve(1000);
        assert_eq!(alone.bytes, 100);
    }
}
