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

#[cfg(test)]
mod tests {
    use super::Reach;

    proptest::proptest! {
        /// The binary searches find what a scan of every match would: the nearest match in
        /// reach, and `None` exactly when no match is in reach.
        #[test]
        fn find_is_the_nearest_match_within_reach(
            found in proptest::collection::btree_set(0u32..64, 0..24),
            at in 0u32..64,
            within in 1u32..70,
        ) {
            let found: Vec<u32> = found.into_iter().collect();
            let after = found.iter().copied().find(|&j| j > at && j - at <= within);
            let before = found.iter().copied().rev().find(|&j| j < at && at - j <= within);
            let here = found.contains(&at).then_some(at);
            proptest::prop_assert_eq!(Reach::After(within).find(&found, at), after);
            proptest::prop_assert_eq!(Reach::Before(within).find(&found, at), before);
            proptest::prop_assert_eq!(Reach::Here.find(&found, at), here);
        }
    }

    #[test]
    fn a_reach_past_the_largest_position_does_not_overflow() {
        let found = [0, u32::MAX];
        assert_eq!(Reach::After(u32::MAX).find(&found, 1), Some(u32::MAX));
        assert_eq!(Reach::Before(u32::MAX).find(&found, u32::MAX), Some(0));
        assert_eq!(Reach::After(1).find(&found, u32::MAX), None);
    }
}
