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

thread_local! {

    /// The meter of the run on this thread (runs do not nest).
    static METER: Cell<Meter> = const { Cell::new(IDLE) };
}

/// Why a run was stopped by its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Operations,
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
            m.set(meter);
            if meter.spent > meter.budget {
                Some(Stop::Operations)
            } else {
                meter.over(0)
            }
        });
        stop.map(Stop::token)
    });
    #[allow(deprecated)] // `on_var` is marked volatile, not deprecated
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
    /// The memory its values may take, and what it may allocate in all (when counted).
    pub(super) memory: Option<(u64, u64)>,
}

impl Budget {
    /// The budget of a run over a session of `entries` entries, with `operations` as the
    /// fixed part of its operations and `memory` as the fixed parts of what it may hold and
    /// allocate ([`MAX_MEMORY`], [`MAX_ALLOCATED`]) when allocations are counted.
    pub(super) fn for_session(
        operations: u64,
        memory: Option<(u64, u64)>,
        entries: usize,
    ) -> Budget {
        let entries = entries as u64;
        let per_entry = |fixed: u64, each: u64| fixed.saturating_add(each.saturating_mul(entries));
        Budget {
            operations: per_entry(operations, OPERATIONS_PER_ENTRY),
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
    METER.with(|m| {
        m.set(Meter {
            budget: budget.operations,
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
