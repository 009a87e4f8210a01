//! Which entries around an entry a window looks at: what the `entry`, `followed_by` and
//! `preceded_by` conditions (`pack/condition/window.rs`) and a script's `e.followed_by` and
//! `e.preceded_by` (`script/api.rs`) both ask, answered in one place.

/// Which entries the window looks at, relative to the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Reach {
    /// The current entry itself.
    Here,
    /// The next `within` entries.
    After(u32),
    /// The previous `within` entries.
    Before(u32),
}

impl Reach {
    /// The entry the window finds around entry `at` among `found` (the ascending positions
    /// of a selector's matches): `at` itself, the first match after it or the last before it,
    /// if within reach. What the declarative condition and a script's `e.followed_by` and
    /// `e.preceded_by` both answer with.
    pub(crate) fn find(self, found: &[u32], at: u32) -> Option<u32> {
        match self {
            Reach::Here => found.binary_search(&at).is_ok().then_some(at),
            Reach::After(within) => {
                let next = found.get(found.partition_point(|&j| j <= at))?;
                (*next <= at.saturating_add(within)).then_some(*next)
            }
            Reach::Before(within) => {
                let before = found.partition_point(|&j| j < at).checked_sub(1)?;
                let previous = found.get(before)?;
                (*previous >= at.saturating_sub(within)).then_some(*previous)
            }
        }
    }
}
