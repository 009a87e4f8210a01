//! The matching of an agent's tool calls with a reference's: when two calls match, a maximum
//! one-to-one matching (Hopcroft–Karp), the longest common subsequence, and the scores the
//! metric kinds take from them.
//!
//! A call of the agent matches a call of the reference when their names are equal and their
//! arguments match by the [`Matcher`]: `exact` (deep equality), `ignore` (names only),
//! `contains` (the agent's arguments hold every argument of the reference with an equal
//! value), or, for one tool, by the keys it lists. The relation need not be symmetric or
//! transitive (`contains` is neither), so no pairing is found greedily: first-fit can pair
//! a call with a partner another call needed, and miss a matching that exists.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::reference::ToolCall;

/// How the arguments of two calls of the same tool are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgsMode {
    /// Deep equality of the arguments.
    Exact,
    /// Names only.
    Ignore,
    /// Every argument of the reference is in the agent's call, with an equal value.
    Contains,
}

/// How one listed key of a tool's arguments is compared.
#[derive(Debug, Clone)]
pub(crate) enum KeyTest {
    /// Equal values (missing on both sides counts as equal, as in agentevals).
    Equal,
    /// The agent's value is a text this expression finds a match in; the reference's value
    /// is not read.
    Regex(regex::Regex),
    /// Both values are numbers at most this far apart.
    Within(f64),
}

/// How the calls of one tool are compared, overriding the metric's `args`.
#[derive(Debug, Clone)]
pub(crate) enum ToolArgs {
    Mode(ArgsMode),
    /// Only these keys (dotted paths into nested objects), each by its test.
    Keys(Vec<(Vec<String>, KeyTest)>),
}

/// When an agent's call matches a reference call.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    pub args: ArgsMode,
    pub tools: HashMap<String, ToolArgs>,
}

impl Matcher {
    pub(crate) fn new(args: ArgsMode) -> Matcher {
        Matcher {
            args,
            tools: HashMap::new(),
        }
    }

    /// Whether the agent's call matches the reference's.
    pub(crate) fn matches(&self, agent: &ToolCall, reference: &ToolCall) -> bool {
        if agent.name != reference.name {
            return false;
        }
        match self.tools.get(&agent.name) {
            None => args_match(self.args, &agent.args, &reference.args),
            Some(ToolArgs::Mode(mode)) => args_match(*mode, &agent.args, &reference.args),
            Some(ToolArgs::Keys(keys)) => keys.iter().all(|(path, test)| {
                let (a, r) = (at_path(&agent.args, path), at_path(&reference.args, path));
                match test {
                    KeyTest::Equal => match (a, r) {
                        (Some(a), Some(r)) => json_equal(a, r),
                        (None, None) => true,
                        _ => false,
                    },
                    KeyTest::Regex(re) => a.and_then(Value::as_str).is_some_and(|s| re.is_match(s)),
                    KeyTest::Within(tolerance) => {
                        match (a.and_then(Value::as_f64), r.and_then(Value::as_f64)) {
                            (Some(a), Some(r)) => (a - r).abs() <= *tolerance,
                            _ => false,
                        }
                    }
                }
            }),
        }
    }
}

/// The value at a dotted path; a `null` on the way counts as missing, as in agentevals.
fn at_path<'v>(args: &'v Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let mut value = args.get(first)?;
    for key in rest {
        value = value.as_object()?.get(key)?;
    }
    (!value.is_null()).then_some(value)
}

fn args_match(mode: ArgsMode, agent: &Map<String, Value>, reference: &Map<String, Value>) -> bool {
    match mode {
        ArgsMode::Ignore => true,
        ArgsMode::Exact => {
            agent.len() == reference.len()
                && reference
                    .iter()
                    .all(|(k, r)| agent.get(k).is_some_and(|a| json_equal(a, r)))
        }
        ArgsMode::Contains => reference
            .iter()
            .all(|(k, r)| agent.get(k).is_some_and(|a| json_equal(a, r))),
    }
}

/// Deep equality of JSON values, numbers by value (`2` equals `2.0`, as JSON means them and
/// Python compares them); object keys in any order.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// Which reference calls each agent call matches: row `i` lists, ascending, the reference
/// calls agent call `i` matches. Only calls of the same name are compared.
pub(crate) fn candidates(agent: &[ToolCall], reference: &[ToolCall], m: &Matcher) -> Vec<Vec<u32>> {
    let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
    for (j, r) in reference.iter().enumerate() {
        by_name.entry(r.name.as_str()).or_default().push(j as u32);
    }
    agent
        .iter()
        .map(|a| {
            by_name.get(a.name.as_str()).map_or_else(Vec::new, |js| {
                js.iter()
                    .copied()
                    .filter(|&j| m.matches(a, &reference[j as usize]))
                    .collect()
            })
        })
        .collect()
}

const FREE: u32 = u32::MAX;

/// A maximum matching of the bipartite graph whose left vertex `i` is joined to the right
/// vertices `edges[i]` (each below `right`), by Hopcroft and Karp (1973): each phase finds,
/// by one breadth-first search, the shortest augmenting paths and augments along a maximal
/// set of disjoint ones by depth-first search; there are O(√V) phases of O(E) each, so
/// O(E √V) in all. The pairs `(left, right)` come ascending by left.
pub(crate) fn maximum_matching(edges: &[Vec<u32>], right: usize) -> Vec<(u32, u32)> {
    let left = edges.len();
    let mut pair_left = vec![FREE; left];
    let mut pair_right = vec![FREE; right];
    let mut dist = vec![u32::MAX; left];
    let mut queue = Vec::with_capacity(left);
    let mut next_edge = vec![0usize; left];
    let mut stack: Vec<u32> = Vec::new();
    let mut via: Vec<u32> = Vec::new();
    loop {
        // Layers from the free left vertices; `found` once a free right vertex is reached.
        queue.clear();
        for u in 0..left {
            if pair_left[u] == FREE {
                dist[u] = 0;
                queue.push(u as u32);
            } else {
                dist[u] = u32::MAX;
            }
        }
        let mut found = false;
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head] as usize;
            head += 1;
            for &v in &edges[u] {
                let w = pair_right[v as usize];
                if w == FREE {
                    found = true;
                } else if dist[w as usize] == u32::MAX {
                    dist[w as usize] = dist[u] + 1;
                    queue.push(w);
                }
            }
        }
        if !found {
            break;
        }
        next_edge.fill(0);
        for start in 0..left {
            if pair_left[start] != FREE {
                continue;
            }
            // Depth-first along the layers, without recursion: `stack` holds the left
            // vertices of the path, `via[k]` the right vertex from `stack[k]` to `stack[k+1]`.
            stack.clear();
            via.clear();
            stack.push(start as u32);
            while let Some(&u) = stack.last() {
                let u = u as usize;
                let Some(&v) = edges[u].get(next_edge[u]) else {
                    dist[u] = u32::MAX;
                    stack.pop();
                    via.pop();
                    continue;
                };
                next_edge[u] += 1;
                let w = pair_right[v as usize];
                if w == FREE {
                    via.push(v);
                    for (&u, &v) in stack.iter().zip(&via) {
                        pair_left[u as usize] = v;
                        pair_right[v as usize] = u;
                    }
                    break;
                }
                if dist[w as usize] == dist[u] + 1 {
                    via.push(v);
                    stack.push(w);
                }
            }
        }
    }
    pair_left
        .iter()
        .enumerate()
        .filter(|(_, &v)| v != FREE)
        .map(|(u, &v)| (u as u32, v))
        .collect()
}

/// A longest common subsequence of the two sides under the matching relation `edges` (as
/// [`candidates`] gives it), as pairs ascending on both sides: the textbook dynamic
/// programme, O(|agent| × |reference|) time and cells.
pub(crate) fn longest_common_subsequence(edges: &[Vec<u32>], right: usize) -> Vec<(u32, u32)> {
    let left = edges.len();
    let width = right + 1;
    let mut table = vec![0u32; (left + 1) * width];
    let mut row_matches = vec![false; right];
    for i in 0..left {
        row_matches.fill(false);
        for &j in &edges[i] {
            row_matches[j as usize] = true;
        }
        for j in 0..right {
            table[(i + 1) * width + j + 1] = if row_matches[j] {
                table[i * width + j] + 1
            } else {
                table[i * width + j + 1].max(table[(i + 1) * width + j])
            };
        }
    }
    let mut pairs = Vec::with_capacity(table[left * width + right] as usize);
    let (mut i, mut j) = (left, right);
    while i > 0 && j > 0 {
        let here = table[i * width + j];
        if here == table[(i - 1) * width + j] {
            i -= 1;
        } else if here == table[i * width + j - 1] {
            j -= 1;
        } else {
            pairs.push(((i - 1) as u32, (j - 1) as u32));
            i -= 1;
            j -= 1;
        }
    }
    pairs.reverse();
    pairs
}

/// Which trajectory metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Measure {
    /// 1 when the trajectories match in this mode, else 0.
    Match(Mode),
    Precision,
    Recall,
    F1,
    /// The longest common subsequence over the longer side's length.
    Sequence,
}

/// The four modes of `trajectory_match`, as agentevals names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Same length, and call `i` matches reference call `i` for every `i`.
    Strict,
    /// A one-to-one matching of all calls of both sides.
    Unordered,
    /// Every agent call matches a distinct reference call.
    Subset,
    /// Every reference call matches a distinct agent call.
    Superset,
}

/// A metric's value and the pairs behind it (agent call, reference call), ascending by
/// agent call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scored {
    pub value: f64,
    pub pairs: Vec<(u32, u32)>,
}

/// The score of `measure` for the agent's calls against the reference's.
pub(crate) fn score(
    measure: Measure,
    agent: &[ToolCall],
    reference: &[ToolCall],
    matcher: &Matcher,
) -> Scored {
    let (a, r) = (agent.len(), reference.len());
    if let Measure::Match(Mode::Strict) = measure {
        let pairs: Vec<(u32, u32)> = agent
            .iter()
            .zip(reference)
            .enumerate()
            .filter(|(_, (x, y))| matcher.matches(x, y))
            .map(|(i, _)| (i as u32, i as u32))
            .collect();
        let value = if a == r && pairs.len() == a { 1.0 } else { 0.0 };
        return Scored { value, pairs };
    }
    let edges = candidates(agent, reference, matcher);
    if let Measure::Sequence = measure {
        let pairs = longest_common_subsequence(&edges, r);
        let value = if a == 0 && r == 0 {
            1.0
        } else {
            pairs.len() as f64 / a.max(r) as f64
        };
        return Scored { value, pairs };
    }
    let pairs = maximum_matching(&edges, r);
    let m = pairs.len();
    let ratio = |num: usize, den: usize| {
        if a == 0 && r == 0 {
            1.0
        } else if a == 0 || r == 0 {
            0.0
        } else {
            num as f64 / den as f64
        }
    };
    let whole = |holds: bool| if holds { 1.0 } else { 0.0 };
    let value = match measure {
        Measure::Match(Mode::Unordered) => whole(a == r && m == a),
        Measure::Match(Mode::Subset) => whole(m == a),
        Measure::Match(Mode::Superset) => whole(m == r),
        Measure::Precision => ratio(m, a),
        Measure::Recall => ratio(m, r),
        // 2PR/(P+R) = 2m/(a+r), without the rounding of the quotients.
        Measure::F1 => ratio(2 * m, a + r),
        Measure::Match(Mode::Strict) | Measure::Sequence => 0.0,
    };
    Scored { value, pairs }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    pub(crate) fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            name: name.to_owned(),
            args: args.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn greedy_first_fit_misses_the_matching_that_exists() {
        // agentevals pairs each reference call with the first free agent call that matches:
        // `{a: 1}` takes `{a: 1, b: 2}`, and `{a: 1, b: 2}` is left with nothing.
        let reference = [
            call("f", json!({"a": 1})),
            call("f", json!({"a": 1, "b": 2})),
        ];
        let agent = [
            call("f", json!({"a": 1, "b": 2})),
            call("f", json!({"a": 1})),
        ];
        let m = Matcher::new(ArgsMode::Contains);
        let superset = score(Measure::Match(Mode::Superset), &agent, &reference, &m);
        assert_eq!(superset.value, 1.0);
        assert_eq!(superset.pairs, [(0, 1), (1, 0)]);
        assert_eq!(score(Measure::F1, &agent, &reference, &m).value, 1.0);
    }

    #[test]
    fn empty_sides_score_one_together_and_zero_alone() {
        let m = Matcher::new(ArgsMode::Exact);
        let one = [call("f", json!({}))];
        for measure in [
            Measure::Precision,
            Measure::Recall,
            Measure::F1,
            Measure::Sequence,
        ] {
            assert_eq!(score(measure, &[], &[], &m).value, 1.0, "{measure:?}");
            assert_eq!(score(measure, &one, &[], &m).value, 0.0, "{measure:?}");
            assert_eq!(score(measure, &[], &one, &m).value, 0.0, "{measure:?}");
        }
        assert_eq!(
            score(Measure::Match(Mode::Subset), &[], &one, &m).value,
            1.0
        );
        assert_eq!(
            score(Measure::Match(Mode::Superset), &one, &[], &m).value,
            1.0
        );
    }

    #[test]
    fn numbers_compare_by_value_and_keys_in_any_order() {
        assert!(json_equal(
            &json!({"a": 2, "b": [1.0]}),
            &json!({"b": [1], "a": 2.0})
        ));
        assert!(!json_equal(&json!(true), &json!(1)));
        assert!(!json_equal(&json!({"a": null}), &json!({})));
    }

    #[test]
    fn listed_keys_compare_by_their_tests() {
        let mut m = Matcher::new(ArgsMode::Exact);
        m.tools.insert(
            "Bash".to_owned(),
            ToolArgs::Keys(vec![
                (
                    vec!["command".to_owned()],
                    KeyTest::Regex(regex::Regex::new("^cargo (test|build)").expect("valid")),
                ),
                (vec!["timeout".to_owned()], KeyTest::Within(500.0)),
                (vec!["env".to_owned(), "CI".to_owned()], KeyTest::Equal),
            ]),
        );
        let reference = call(
            "Bash",
            json!({"command": "ignored", "timeout": 1000, "env": {"CI": "1"}}),
        );
        let agent = |command: &str, timeout: f64, ci: Value| {
            call(
                "Bash",
                json!({"command": command, "timeout": timeout, "env": {"CI": ci}, "extra": 1}),
            )
        };
        assert!(m.matches(&agent("cargo test -p x", 1400.0, json!("1")), &reference));
        assert!(!m.matches(&agent("cargo run", 1000.0, json!("1")), &reference));
        assert!(!m.matches(&agent("cargo test", 1501.0, json!("1")), &reference));
        assert!(!m.matches(&agent("cargo test", 1000.0, json!(1)), &reference));
        // A key missing on both sides is equal; on one side it is not.
        let bare = call("Bash", json!({"command": "cargo build", "timeout": 1}));
        assert!(m.matches(&bare, &call("Bash", json!({"timeout": 2}))));
        assert!(!m.matches(&bare, &reference));
    }

    fn greedy_matched(edges: &[Vec<u32>], right: usize) -> usize {
        let mut used = vec![false; right];
        edges
            .iter()
            .filter(|row| match row.iter().find(|&&j| !used[j as usize]) {
                Some(&j) => {
                    used[j as usize] = true;
                    true
                }
                None => false,
            })
            .count()
    }

    /// Calls from few names and few argument values, so that both repeat.
    fn calls() -> impl Strategy<Value = Vec<ToolCall>> {
        let value = prop_oneof![
            Just(json!(1)),
            Just(json!(2.0)),
            Just(json!("a")),
            Just(json!([1]))
        ];
        let args = proptest::collection::btree_map(prop_oneof![Just("p"), Just("q")], value, 0..3);
        let one = (prop_oneof![Just("f"), Just("g"), Just("h")], args).prop_map(|(name, args)| {
            ToolCall {
                name: name.to_owned(),
                args: args.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            }
        });
        proptest::collection::vec(one, 0..9)
    }

    fn matcher() -> impl Strategy<Value = Matcher> {
        prop_oneof![
            Just(ArgsMode::Exact),
            Just(ArgsMode::Ignore),
            Just(ArgsMode::Contains)
        ]
        .prop_map(Matcher::new)
    }

    const ALL: [Measure; 8] = [
        Measure::Match(Mode::Strict),
        Measure::Match(Mode::Unordered),
        Measure::Match(Mode::Subset),
        Measure::Match(Mode::Superset),
        Measure::Precision,
        Measure::Recall,
        Measure::F1,
        Measure::Sequence,
    ];

    /// Every pair matches, and no call of either side is in two pairs.
    fn one_to_one(
        pairs: &[(u32, u32)],
        agent: &[ToolCall],
        reference: &[ToolCall],
        m: &Matcher,
    ) -> bool {
        let mut left: Vec<u32> = pairs.iter().map(|p| p.0).collect();
        let mut right: Vec<u32> = pairs.iter().map(|p| p.1).collect();
        left.sort_unstable();
        right.sort_unstable();
        left.dedup();
        right.dedup();
        left.len() == pairs.len()
            && right.len() == pairs.len()
            && pairs
                .iter()
                .all(|&(i, j)| m.matches(&agent[i as usize], &reference[j as usize]))
    }

    proptest! {
        #[test]
        fn every_score_is_within_0_and_1_and_its_pairs_one_to_one(
            agent in calls(), reference in calls(), m in matcher()
        ) {
            for measure in ALL {
                let s = score(measure, &agent, &reference, &m);
                prop_assert!((0.0..=1.0).contains(&s.value), "{measure:?} {}", s.value);
                prop_assert!(one_to_one(&s.pairs, &agent, &reference, &m));
            }
        }

        #[test]
        fn order_does_not_change_the_unordered_measures(
            (agent, a2) in calls().prop_flat_map(|c| (Just(c.clone()), Just(c).prop_shuffle())),
            (reference, r2) in calls().prop_flat_map(|c| (Just(c.clone()), Just(c).prop_shuffle())),
            m in matcher()
        ) {
            for measure in [
                Measure::Match(Mode::Unordered),
                Measure::Match(Mode::Subset),
                Measure::Match(Mode::Superset),
                Measure::Precision,
                Measure::Recall,
                Measure::F1,
            ] {
                prop_assert_eq!(
                    score(measure, &agent, &reference, &m).value,
                    score(measure, &a2, &r2, &m).value,
                    "{:?}", measure
                );
            }
        }

        #[test]
        fn identical_sides_score_1(calls in calls(), m in matcher()) {
            for measure in ALL {
                prop_assert_eq!(score(measure, &calls, &calls, &m).value, 1.0, "{:?}", measure);
            }
        }

        /// An extra call, one that matches no reference call, never raises precision and
        /// leaves recall as it was. (A call that does match one may: from 0 of 3 to 1 of 4.)
        #[test]
        fn an_extra_agent_call_never_raises_precision(
            agent in calls(), reference in calls(), extra in calls(), m in matcher(), at in any::<usize>()
        ) {
            for call in extra.iter().take(1) {
                let mut call = call.clone();
                if reference.iter().any(|r| m.matches(&call, r)) {
                    call.name = "unlisted".to_owned();
                }
                let mut more = agent.clone();
                more.insert(at % (agent.len() + 1), call);
                let precision = |calls: &[ToolCall]| score(Measure::Precision, calls, &reference, &m).value;
                let recall = |calls: &[ToolCall]| score(Measure::Recall, calls, &reference, &m).value;
                // From no call to one, precision goes from 1 (both sides empty) to 0.
                if !agent.is_empty() || !reference.is_empty() {
                    prop_assert!(precision(&more) <= precision(&agent));
                }
                if !agent.is_empty() {
                    prop_assert_eq!(recall(&more), recall(&agent));
                }
            }
        }

        #[test]
        fn a_duplicate_agent_call_matches_at_most_one_reference_call(
            agent in calls(), reference in calls(), m in matcher(), which in any::<usize>()
        ) {
            if agent.is_empty() {
                return Ok(());
            }
            let mut doubled = agent.clone();
            let twin = agent[which % agent.len()].clone();
            doubled.push(twin);
            let before = score(Measure::F1, &agent, &reference, &m).pairs.len();
            let after = score(Measure::F1, &doubled, &reference, &m);
            prop_assert!(after.pairs.len() <= before + 1);
            prop_assert!(one_to_one(&after.pairs, &doubled, &reference, &m));
        }

        #[test]
        fn f1_is_never_below_the_greedy_pairings(
            agent in calls(), reference in calls(), m in matcher()
        ) {
            let edges = candidates(&agent, &reference, &m);
            let greedy = greedy_matched(&edges, reference.len());
            let maximum = maximum_matching(&edges, reference.len()).len();
            prop_assert!(maximum >= greedy);
            let (a, r) = (agent.len(), reference.len());
            if a + r > 0 && a > 0 && r > 0 {
                let f1 = score(Measure::F1, &agent, &reference, &m).value;
                prop_assert!(f1 >= 2.0 * greedy as f64 / (a + r) as f64);
            }
        }

        /// The matching is maximum: no matching of the same graph is larger, checked by
        /// trying every subset of pairs on small graphs (Kőnig: a maximum matching leaves
        /// no augmenting path, which brute force confirms).
        #[test]
        fn the_matching_is_maximum(edges in proptest::collection::vec(proptest::collection::btree_set(0u32..6, 0..4), 0..6)) {
            let edges: Vec<Vec<u32>> = edges.into_iter().map(|s| s.into_iter().collect()).collect();
            let found = maximum_matching(&edges, 6).len();
            fn best(edges: &[Vec<u32>], used: &mut [bool; 6]) -> usize {
                let Some((row, rest)) = edges.split_first() else { return 0 };
                let mut b = best(rest, used);
                for &j in row {
                    if !used[j as usize] {
                        used[j as usize] = true;
                        b = b.max(1 + best(rest, used));
                        used[j as usize] = false;
                    }
                }
                b
            }
            prop_assert_eq!(found, best(&edges, &mut [false; 6]));
        }
    }
}
