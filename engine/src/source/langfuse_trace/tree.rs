//! The tree of a trace's observations (`parentObservationId`), numbered once so that depth
//! and ancestry are answered without walking up the chain: a walk per observation made a
//! trace of n nested observations n² steps (minutes for 50,000, as long as for a cycle).

use std::collections::HashMap;

/// Observations and the parents they name (ids of no observation included), with each
/// one's depth and the span of its subtree in a depth-first numbering.
pub(super) struct Tree<'a> {
    node_of: HashMap<&'a str, usize>,
    depth: Vec<usize>,
    /// The node's number in the depth-first order, and one past its last descendant's.
    span: Vec<(usize, usize)>,
}

impl<'a> Tree<'a> {
    /// The tree of `links` (each observation's id and the parent it names, in file order).
    /// A cycle of parents has no root: each is cut at its observation that comes first in
    /// `links`, which is read as having no parent, and whose index in `links` is returned.
    pub(super) fn new(links: &[(Option<&'a str>, Option<&'a str>)]) -> (Tree<'a>, Vec<usize>) {
        let mut node_of: HashMap<&'a str, usize> = HashMap::new();
        let mut names: Vec<&'a str> = Vec::new();
        let mut node = |id: &'a str, names: &mut Vec<&'a str>| {
            *node_of.entry(id).or_insert_with(|| {
                names.push(id);
                names.len() - 1
            })
        };
        let mut parent: Vec<Option<usize>> = Vec::new();
        // The first link that names each node as an observation (ids named only as a
        // parent have none, and are never on a cycle).
        let mut first_link: Vec<usize> = Vec::new();
        for (i, &(id, up)) in links.iter().enumerate() {
            let child = id.map(|id| node(id, &mut names));
            let up = up.map(|p| node(p, &mut names));
            parent.resize(names.len(), None);
            first_link.resize(names.len(), usize::MAX);
            if let Some(child) = child {
                first_link[child] = first_link[child].min(i);
                // A repeated id keeps the parent it was given last, as a map of them would.
                parent[child] = up;
            }
        }
        let n = names.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (child, up) in parent.iter().enumerate() {
            if let Some(up) = up {
                children[*up].push(child);
            }
        }
        let mut walk = Walk {
            children,
            depth: vec![0; n],
            span: vec![(usize::MAX, 0); n],
            next: 0,
        };
        for (root, up) in parent.iter().enumerate() {
            if up.is_none() {
                walk.from(root);
            }
        }
        // What is left hangs from a cycle: going up from it reaches a node twice.
        let mut cut = Vec::new();
        let mut seen_at = vec![usize::MAX; n];
        for start in 0..n {
            if walk.visited(start) {
                continue;
            }
            let mut at = start;
            while seen_at[at] != start {
                seen_at[at] = start;
                match parent[at] {
                    Some(up) => at = up,
                    None => break,
                }
            }
            // `at` is on the cycle: go round it to its first observation in the file.
            let mut first = at;
            let mut round = parent[at];
            while let Some(node) = round.filter(|&node| node != at) {
                if first_link[node] < first_link[first] {
                    first = node;
                }
                round = parent[node];
            }
            walk.cut(first);
            cut.push(first_link[first]);
        }
        (
            Tree {
                node_of,
                depth: walk.depth,
                span: walk.span,
            },
            cut,
        )
    }

    /// How many ancestors the observation `id` has (0 for none or an unknown id).
    pub(super) fn depth(&self, id: Option<&str>) -> usize {
        id.and_then(|id| self.node_of.get(id))
            .map_or(0, |&n| self.depth[n])
    }

    /// The observation's place in the depth-first order, and one past its last
    /// descendant's: `b` is `a` or under it when `a.0 <= b.0 < a.1`.
    pub(super) fn span(&self, id: &str) -> Option<(usize, usize)> {
        self.node_of.get(id).map(|&n| self.span[n])
    }

    /// How many places the depth-first order has.
    pub(super) fn len(&self) -> usize {
        self.span.len()
    }
}

/// The largest key given to a range of places covering each place, keys raised over
/// ranges and read at a place in logarithmic time (a segment tree without propagation).
pub(super) struct Highest {
    keys: Vec<Option<usize>>,
    len: usize,
}

impl Highest {
    pub(super) fn new(len: usize) -> Self {
        Highest {
            keys: vec![None; 2 * len],
            len,
        }
    }

    /// Every place in `from..to` is covered by `key`.
    pub(super) fn raise(&mut self, (from, to): (usize, usize), key: usize) {
        let (mut lo, mut hi) = (from + self.len, to.min(self.len) + self.len);
        while lo < hi {
            if lo % 2 == 1 {
                self.keys[lo] = self.keys[lo].max(Some(key));
                lo += 1;
            }
            if hi % 2 == 1 {
                hi -= 1;
                self.keys[hi] = self.keys[hi].max(Some(key));
            }
            lo /= 2;
            hi /= 2;
        }
    }

    /// The largest key covering `place`.
    pub(super) fn at(&self, place: usize) -> Option<usize> {
        let mut i = place + self.len;
        let mut best = None;
        while i > 0 && i < self.keys.len() {
            best = best.max(self.keys[i]);
            i /= 2;
        }
        best
    }
}

struct Walk {
    children: Vec<Vec<usize>>,
    depth: Vec<usize>,
    span: Vec<(usize, usize)>,
    next: usize,
}

impl Walk {
    fn visited(&self, node: usize) -> bool {
        self.span[node].0 != usize::MAX
    }

    /// Numbers the subtree of `node` with its parent link cut (the first node of a cycle).
    fn cut(&mut self, node: usize) {
        self.depth[node] = 0;
        self.from(node);
    }

    /// Numbers the subtree of `root`, depth first, without recursion (a chain may be as
    /// deep as the trace is long); visited nodes are not entered again.
    fn from(&mut self, root: usize) {
        let mut stack = vec![(root, 0usize)];
        self.span[root].0 = self.next;
        self.next += 1;
        while let Some((node, i)) = stack.pop() {
            match self.children[node].get(i).copied() {
                Some(child) => {
                    stack.push((node, i + 1));
                    if !self.visited(child) {
                        self.span[child].0 = self.next;
                        self.next += 1;
                        self.depth[child] = self.depth[node] + 1;
                        stack.push((child, 0));
                    }
                }
                None => self.span[node].1 = self.next,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_and_ancestry_follow_the_parents() {
        let (tree, cut) = Tree::new(&[
            (Some("c"), Some("b")),
            (Some("b"), Some("a")),
            (Some("a"), None),
            (Some("x"), Some("missing")),
            (None, Some("nameless")),
        ]);
        assert!(cut.is_empty());
        assert_eq!(
            [Some("a"), Some("b"), Some("c"), Some("x"), None].map(|id| tree.depth(id)),
            [0, 1, 2, 1, 0]
        );
        let holds = |a: &str, b: &str| {
            let (a, b) = (tree.span(a).unwrap(), tree.span(b).unwrap());
            a.0 <= b.0 && b.0 < a.1
        };
        assert!(holds("a", "c") && holds("b", "c") && holds("c", "c"));
        assert!(!holds("c", "a") && !holds("a", "x"));
        assert!(holds("missing", "x"));
        assert!(tree.span("nameless").is_some());
    }

    #[test]
    fn a_cycle_of_parents_is_cut_at_its_first_observation_in_file_order() {
        let (tree, cut) = Tree::new(&[
            (Some("hang"), Some("b")),
            (Some("a"), Some("b")),
            (Some("b"), Some("a")),
            (Some("self"), Some("self")),
        ]);
        assert_eq!(cut, [1, 3], "`a` and `self`");
        assert_eq!(tree.depth(Some("a")), 0);
        assert_eq!(tree.depth(Some("b")), 1);
        assert_eq!(tree.depth(Some("hang")), 2);
        let (a, b) = (tree.span("a").unwrap(), tree.span("b").unwrap());
        assert!(a.0 < b.0 && b.0 < a.1, "`b` is under `a`");
        assert_eq!(tree.depth(Some("self")), 0);
    }

    #[test]
    fn a_chain_as_long_as_a_large_trace_is_numbered_whole() {
        let ids: Vec<String> = (0..200_000).map(|i| format!("o{i}")).collect();
        let links: Vec<(Option<&str>, Option<&str>)> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (Some(id.as_str()), i.checked_sub(1).map(|p| ids[p].as_str())))
            .collect();
        let (tree, cut) = Tree::new(&links);
        assert!(cut.is_empty());
        assert_eq!(tree.depth(Some("o199999")), 199_999);
        let (first, last) = (tree.span("o0").unwrap(), tree.span("o199999").unwrap());
        assert!(first.0 <= last.0 && last.0 < first.1);
    }

    #[test]
    fn the_highest_key_covering_a_place_is_the_largest_raised_over_it() {
        let mut highest = Highest::new(10);
        highest.raise((0, 10), 1);
        highest.raise((3, 5), 4);
        highest.raise((4, 9), 2);
        assert_eq!(
            (0..10).map(|p| highest.at(p)).collect::<Vec<_>>(),
            [1, 1, 1, 4, 4, 2, 2, 2, 2, 1].map(Some)
        );
        assert_eq!(Highest::new(3).at(1), None);
    }
}
