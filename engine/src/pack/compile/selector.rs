//! Selectors: named and inline, their tests of one field, and the cycle check over names.

use crate::pack::codes::Code;
use std::collections::HashSet;

use super::Compiler;
use crate::field::Field;
use crate::pack::raw::{RawSelector, SelectorRef};
use crate::pack::Selector;

impl Compiler<'_> {
    pub(in crate::pack) fn selector_ref(&mut self, r: &SelectorRef, path: &str) -> Option<usize> {
        match r {
            SelectorRef::Name(name) => self.named_selector(name, path),
            SelectorRef::Inline(raw) => {
                let compiled = self.selector(raw, path)?;
                self.selectors.push(Some(compiled));
                let id = self.selectors.len() - 1;
                self.inline_selectors.push((id, path.to_owned()));
                Some(id)
            }
        }
    }

    fn named_selector(&mut self, name: &str, path: &str) -> Option<usize> {
        match self.selector_ids.get(name) {
            Some(&id) => Some(id),
            None => {
                let known = self
                    .selector_ids
                    .keys()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let known = if known.is_empty() {
                    "the pack declares none".to_owned()
                } else {
                    format!("declared: {known}")
                };
                self.problem(
                    Code::UnknownSelector,
                    path,
                    format!("unknown selector `{name}` ({known})"),
                );
                None
            }
        }
    }

    pub(super) fn selector(&mut self, raw: &RawSelector, path: &str) -> Option<Selector> {
        let mut parts = Vec::new();
        let mut ok = true;
        if let Some(domain) = &raw.domain {
            parts.push(Selector::Domain(self.vocabulary.domains(&domain.0)));
        }
        if let Some(operation) = &raw.operation {
            parts.push(Selector::Operation(
                self.vocabulary.operations(&operation.0),
            ));
        }
        if let Some(success) = raw.success {
            parts.push(Selector::Success(success));
        }
        if let Some(codes) = &raw.exit_code {
            parts.push(Selector::ExitCode(self.vocabulary.exit_codes(&codes.0)));
        }
        let tests: Vec<&str> = [
            ("equals", raw.equals.is_some()),
            ("one_of", raw.one_of.is_some()),
            ("truthy", raw.truthy.is_some()),
            ("blank", raw.blank.is_some()),
            ("present", raw.present.is_some()),
            ("contains", raw.contains.is_some()),
            ("type", raw.kind.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        match (&raw.field, tests.as_slice()) {
            (None, []) => {}
            (None, some) => {
                ok = false;
                self.problem(
                    Code::SelectorShape,
                    path,
                    format!("`{}` tests a field, so the selector needs `field`", some[0]),
                );
            }
            (Some(field), []) => {
                ok = false;
                self.problem(
                    Code::SelectorShape,format!("{path}.field"),
                    format!("field `{field}` is named but not tested (add `equals`, `one_of`, `truthy`, `blank`, `present`, `contains` or `type`)"),
                );
            }
            (Some(name), [_]) => match Field::parse(name) {
                Ok(field) if raw.blank.is_some() && field.never_text() => {
                    ok = false;
                    self.problem(
                        Code::SelectorShape,
                        format!("{path}.blank"),
                        format!("`blank` tests text, and `{name}` is never text: every session with a truthy `{name}` would be left not graded (test it with `equals` or `truthy`)"),
                    );
                }
                Ok(field) => parts.push(if let Some(v) = &raw.equals {
                    Selector::Equals(field, v.clone())
                } else if let Some(vs) = &raw.one_of {
                    Selector::OneOf(field, vs.clone())
                } else if let Some(b) = raw.truthy {
                    Selector::Truthy(field, b)
                } else if let Some(b) = raw.blank {
                    Selector::Blank(field, b)
                } else if let Some(b) = raw.present {
                    Selector::Present(field, b)
                } else if let Some(kind) = raw.kind {
                    Selector::Type(field, kind)
                } else {
                    Selector::Contains(field, raw.contains.clone().unwrap_or_default())
                }),
                Err(message) => {
                    ok = false;
                    self.problem(Code::UnknownFieldPath, format!("{path}.field"), message);
                }
            },
            (Some(_), many) => {
                ok = false;
                self.problem(
                    Code::SelectorShape,path,
                    format!(
                        "one `field` takes one test, but this selector has {} (split it with `all`)",
                        many.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
        if let Some(name) = &raw.is {
            match self.named_selector(name, &format!("{path}.is")) {
                Some(id) => parts.push(Selector::Ref(id)),
                None => ok = false,
            }
        }
        for (key, list) in [("all", &raw.all), ("any", &raw.any)] {
            let Some(list) = list else { continue };
            let mut items = Vec::new();
            for (i, item) in list.iter().enumerate() {
                match self.selector_item(item, &format!("{path}.{key}[{i}]")) {
                    Some(s) => items.push(s),
                    None => ok = false,
                }
            }
            parts.push(if key == "all" {
                Selector::All(items)
            } else {
                Selector::Any(items)
            });
        }
        if let Some(inner) = &raw.not {
            match self.selector_item(inner, &format!("{path}.not")) {
                Some(s) => parts.push(Selector::Not(Box::new(s))),
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        match parts.len() {
            0 => {
                self.problem(
                    Code::SelectorShape,
                    path,
                    "the selector is empty (to match every entry, write `all: []`)",
                );
                None
            }
            1 => parts.pop(),
            _ => Some(Selector::All(parts)),
        }
    }

    /// A selector inside `all`/`any`/`not`: a name becomes a reference, a map is compiled in place.
    fn selector_item(&mut self, item: &SelectorRef, path: &str) -> Option<Selector> {
        match item {
            SelectorRef::Name(name) => self.named_selector(name, path).map(Selector::Ref),
            SelectorRef::Inline(raw) => self.selector(raw, path),
        }
    }

    pub(super) fn check_selector_cycles(&mut self) {
        let named = self.selector_ids.len();
        let edges: Vec<Vec<usize>> = (0..named)
            .map(|id| {
                let mut out = Vec::new();
                if let Some(s) = &self.selectors[id] {
                    refs(s, &mut out);
                }
                out
            })
            .collect();
        // Colours: 0 unvisited, 1 on the stack, 2 done.
        let mut colour = vec![0u8; named];
        let mut reported = HashSet::new();
        for start in 0..named {
            let mut stack = vec![(start, 0usize)];
            let mut trail = vec![start];
            if colour[start] != 0 {
                continue;
            }
            colour[start] = 1;
            while let Some((node, next)) = stack.last_mut() {
                let node = *node;
                if let Some(&to) = edges[node].get(*next) {
                    *next += 1;
                    if to >= named {
                        continue;
                    }
                    match colour[to] {
                        0 => {
                            colour[to] = 1;
                            stack.push((to, 0));
                            trail.push(to);
                        }
                        1 if reported.insert(to) => {
                            let names: Vec<String> = trail
                                [trail.iter().position(|&n| n == to).unwrap_or(0)..]
                                .iter()
                                .chain(std::iter::once(&to))
                                .map(|&n| {
                                    format!(
                                        "`{}`",
                                        self.selector_ids.get_index(n).map_or("", |(k, _)| k)
                                    )
                                })
                                .collect();
                            let name = self
                                .selector_ids
                                .get_index(to)
                                .map_or("", |(k, _)| k)
                                .to_owned();
                            self.problem(
                                Code::SelectorCycle,
                                format!("selectors.{name}"),
                                format!(
                                    "selectors refer to each other in a cycle: {}",
                                    names.join(" → ")
                                ),
                            );
                        }
                        _ => {}
                    }
                } else {
                    colour[node] = 2;
                    stack.pop();
                    trail.pop();
                }
            }
        }
    }
}

/// The named selectors `selector` refers to, in the order written, added to `out`.
fn refs(selector: &Selector, out: &mut Vec<usize>) {
    match selector {
        Selector::Ref(id) => out.push(*id),
        Selector::All(items) | Selector::Any(items) => items.iter().for_each(|i| refs(i, out)),
        Selector::Not(inner) => refs(inner, out),
        _ => {}
    }
}

/// The selector ids with every referenced selector before the selectors that refer to it
/// (a reference cycle, refused by validation, is cut where it closes).
pub(super) fn evaluation_order(selectors: &[Selector]) -> Vec<usize> {
    fn visit(s: usize, selectors: &[Selector], seen: &mut [bool], order: &mut Vec<usize>) {
        if seen.get(s).copied() != Some(false) {
            return;
        }
        seen[s] = true;
        let mut targets = Vec::new();
        refs(&selectors[s], &mut targets);
        for target in targets {
            visit(target, selectors, seen, order);
        }
        order.push(s);
    }
    let mut seen = vec![false; selectors.len()];
    let mut order = Vec::with_capacity(selectors.len());
    for s in 0..selectors.len() {
        visit(s, selectors, &mut seen, &mut order);
    }
    order
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, grade_rule};

    fn with_selectors(selectors: &str) -> String {
        format!("id: t\nversion: '1'\nname: T\nselectors:\n{selectors}dimensions:\n  - id: d\n    max: 10\n    rules:\n      - id: r\n        doc: d\n        when: {{ count: s }}\n        points: 10\n")
    }

    #[test]
    fn a_cycle_is_reported_once_with_its_path() {
        let yaml = with_selectors("  s: { is: a }\n  a: { is: b }\n  b: { any: [ a ] }\n");
        assert_eq!(
            errors(&yaml),
            ["selectors.a: selectors refer to each other in a cycle: `a` → `b` → `a`"]
        );
    }

    /// `blank` on a field that is never text left every session with a nonzero exit code
    /// not graded (E040); it is refused when the pack is validated instead.
    #[test]
    fn blank_on_a_field_that_is_never_text_is_refused() {
        for field in ["result.success", "result.exitCode", "result.duration"] {
            assert_eq!(
                errors(&with_selectors(&format!("  s: {{ field: {field}, blank: true }}\n"))),
                [format!("selectors.s.blank: `blank` tests text, and `{field}` is never text: every session with a truthy `{field}` would be left not graded (test it with `equals` or `truthy`)")]
            );
        }
        for field in ["error", "params.x", "metadata.gateway", "domain"] {
            let yaml = with_selectors(&format!("  s: {{ field: {field}, blank: true }}\n"));
            assert_eq!(errors(&yaml), Vec::<String>::new(), "{field}");
        }
    }

    #[test]
    fn a_field_takes_exactly_one_test() {
        assert_eq!(
            errors(&with_selectors("  s: { field: params.x }\n")),
            ["selectors.s.field: field `params.x` is named but not tested (add `equals`, `one_of`, `truthy`, `blank`, `present`, `contains` or `type`)"]
        );
        assert_eq!(
            errors(&with_selectors("  s: { equals: 1 }\n")),
            ["selectors.s: `equals` tests a field, so the selector needs `field`"]
        );
        assert_eq!(
            errors(&with_selectors("  s: { field: params.x, equals: 1, truthy: true }\n")),
            ["selectors.s: one `field` takes one test, but this selector has `equals`, `truthy` (split it with `all`)"]
        );
    }

    #[test]
    fn an_empty_selector_is_refused_and_all_of_nothing_matches_everything() {
        assert_eq!(
            errors(&with_selectors("  s: {}\n")),
            ["selectors.s: the selector is empty (to match every entry, write `all: []`)"]
        );
        let every = "      - id: r\n        doc: d\n        when: { count: { all: [] }, at_least: 2 }\n        points: 1\n";
        assert_eq!(grade_rule(every, &[("a", "b"), ("c", "d")]), 1.0);
    }

    #[test]
    fn keys_of_one_map_must_all_hold() {
        let rule = "      - id: r\n        doc: d\n        when: { count: { domain: tasks, operation: add, success: false } }\n        points: 1\n";
        assert_eq!(grade_rule(rule, &[("tasks", "add")]), 0.0);
        assert_eq!(grade_rule(rule, &[("tasks", "add!")]), 1.0);
        assert_eq!(grade_rule(rule, &[("tasks", "find!")]), 0.0);
    }

    #[test]
    fn unknown_names_list_the_declared_ones() {
        let rule = "      - id: r\n        doc: d\n        when: { count: { not: nope } }\n        points: 1\n";
        assert_eq!(
            errors(rule),
            ["dimensions[0].rules[0].when.count.not: unknown selector `nope` (declared: `tasks`, `sessions`, `lookups`, `failed`)"]
        );
    }
}
