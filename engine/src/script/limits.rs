//! What stops a run: an operation budget, and a cap on how deep values nest.
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

use std::cell::Cell;

use rhai::{Array, Dynamic, Engine, EvalAltResult, Map, Position};

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
const SCAN_SHARE: u64 = 8;
/// The fewest operations between two looks, so small scopes are not looked at all the time.
const MIN_GAP: u64 = 256;
/// The stack a run gets. A value may nest one level per operation between two looks, and
/// the deepest recursion Rhai does on it (`to_string`) takes under a kilobyte per level; the
/// stack is reserved, not touched, unless a run goes that deep.
pub(super) const RUN_STACK: usize = 64 << 20;
/// The most operations between two looks, so that nesting past the cap is found before the
/// run's stack ([`RUN_STACK`]) can run out, and before cloning the value on every step (which
/// costs its depth each time, unseen by the operation count) takes long.
const MAX_GAP: u64 = 1 << 14;

const MAX_CALL_LEVELS: usize = 32;
const MAX_STRING_SIZE: usize = 1 << 20;
const MAX_ARRAY_SIZE: usize = 1 << 20;
/// As large as an array: a map keyed by file or target holds one key per call of a session.
const MAX_MAP_SIZE: usize = 1 << 20;

/// The token a run stopped for nesting ends with (a stop for operations carries `()`).
const NESTING: &str = "nesting";

#[derive(Clone, Copy)]
struct Meter {
    budget: u64,
    spent: u64,
    /// Operations since the scope was last looked at, and how many to wait.
    since_look: u64,
    gap: u64,
}

thread_local! {
    /// The meter of the run on this thread (runs do not nest).
    static METER: Cell<Meter> = const {
        Cell::new(Meter { budget: MAX_OPERATIONS, spent: 0, since_look: 0, gap: MIN_GAP })
    };
}

/// Why a run was stopped by its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Operations,
    Nesting,
}

/// Sets the bounds on `engine` and installs the callbacks that keep them.
pub(super) fn install(engine: &mut Engine) {
    // The budget depends on the session, so it is checked here rather than with
    // `set_max_operations`, which is one number for every run and misses closures.
    engine.on_progress(|_| {
        let over = METER.with(|m| {
            let mut meter = m.get();
            meter.spent += 1;
            meter.since_look += 1;
            m.set(meter);
            meter.spent > meter.budget
        });
        over.then_some(Dynamic::UNIT)
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
            return Err(EvalAltResult::ErrorTerminated(NESTING.into(), Position::NONE).into());
        }
        Ok(None)
    });
    engine.set_max_call_levels(MAX_CALL_LEVELS);
    engine.set_max_expr_depths(64, 32);
    engine.set_max_string_size(MAX_STRING_SIZE);
    engine.set_max_array_size(MAX_ARRAY_SIZE);
    engine.set_max_map_size(MAX_MAP_SIZE);
}

/// Starts the meter for a run on this thread with `budget` operations.
pub(super) fn start(budget: u64) {
    METER.with(|m| {
        m.set(Meter {
            budget,
            spent: 0,
            since_look: 0,
            gap: MIN_GAP,
        })
    });
}

/// Which limit stopped a run that failed with `err`, and where, if one did: the stop may come
/// inside a function or a closure called by a built-in (`all`, `map`…), which wrap it.
pub(super) fn stopped(err: &EvalAltResult) -> Option<(Stop, Position)> {
    match err {
        EvalAltResult::ErrorTerminated(token, at) => {
            let stop = match token.read_lock::<rhai::ImmutableString>() {
                Some(s) if s.as_str() == NESTING => Stop::Nesting,
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
    // looked at on a later read.
    if value.is_locked() {
        return level;
    }
    if let Some(items) = value.read_lock::<Array>() {
        return deepest(items.iter(), level, seen);
    }
    if let Some(map) = value.read_lock::<Map>() {
        return deepest(map.values(), level, seen);
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
