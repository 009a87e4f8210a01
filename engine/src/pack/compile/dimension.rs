//! Dimensions: scored by rules (points, start, floor, cap, `applies_when`) or by a judge
//! (a numeric range or categories).

use crate::pack::codes::Code;
use std::collections::HashSet;

use super::Compiler;
use crate::pack::raw::{DimensionType, RawDimension, Scoring};
use crate::pack::{Applies, Dimension, DimensionKind, Rule};

/// Whether a pack scores in whole numbers: a points pack whose dimensions all have whole
/// `max`, `start`, `floor` and `cap` (CLEO's packs, claude-code-v1). Its rules must then give
/// whole points, or a score would come out as a fraction nobody wrote.
pub(super) fn whole_scores(scoring: Scoring, dimensions: &[Dimension]) -> bool {
    scoring == Scoring::Points
        && dimensions.iter().all(|d| {
            [d.max, d.start, d.floor, d.cap]
                .iter()
                .all(|v| v.fract() == 0.0)
        })
}

impl Compiler<'_> {
    pub(super) fn dimension(
        &mut self,
        raw: &RawDimension,
        path: &str,
        scoring: Scoring,
        rule_ids: &mut HashSet<String>,
    ) -> Dimension {
        if raw.id.trim().is_empty() {
            self.problem(
                Code::EmptyId,
                format!("{path}.id"),
                "the dimension id is empty",
            );
        }
        match (scoring, raw.weight) {
            (Scoring::Weighted, None) => self.problem(
                Code::Weight,
                path,
                format!(
                    "dimension `{}` needs a `weight`: the pack is `scoring: weighted`",
                    raw.id
                ),
            ),
            (Scoring::Weighted, Some(w)) if !(0.0..=1.0).contains(&w) => self.problem(
                Code::Weight,
                format!("{path}.weight"),
                format!("`weight` {w} is outside 0..=1"),
            ),
            (Scoring::Points, Some(_)) => self.problem(
                Code::Weight,
                format!("{path}.weight"),
                "`weight` only counts in a pack with `scoring: weighted`",
            ),
            _ => {}
        }
        if raw.kind != DimensionType::Points {
            if raw.applies_when.is_some() {
                self.problem(
                    Code::JudgedDimension,format!("{path}.applies_when"),
                    "`applies_when` belongs to dimensions scored by rules: a judge scores every judged dimension",
                );
            }
            return self.judged_dimension(raw, path, scoring);
        }
        let Some(max) = raw.max else {
            self.problem(
                Code::DimensionShape,
                path,
                format!(
                    "dimension `{}` needs a `max`: the most its rules can give",
                    raw.id
                ),
            );
            return self.placeholder_dimension(raw, path);
        };
        // NaN is not above 0 either.
        if max.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            self.problem(
                Code::DimensionShape,
                format!("{path}.max"),
                format!("`max` must be above 0, not {max}"),
            );
        }
        if raw.min.is_some() || !raw.categories.is_empty() {
            self.problem(Code::DimensionShape, path, "`min` and `categories` belong to judged dimensions (`type: numeric` or `type: categorical`)");
        }
        let floor = raw.floor.unwrap_or(0.0);
        let cap = raw.cap.unwrap_or(max);
        // Scores stay within [0, max]: results and their schema rely on it.
        if floor < 0.0 {
            self.problem(
                Code::DimensionShape,
                format!("{path}.floor"),
                format!("`floor` {floor} is below 0"),
            );
        }
        if cap > max {
            self.problem(
                Code::DimensionShape,
                format!("{path}.cap"),
                format!("`cap` {cap} is above the dimension's max {max}"),
            );
        }
        if floor > cap {
            self.problem(
                Code::DimensionShape,
                format!("{path}.floor"),
                format!("`floor` {floor} is above the cap {cap}"),
            );
        }
        if raw.rules.is_empty() {
            self.problem(
                Code::DimensionShape,
                format!("{path}.rules"),
                "a dimension needs at least one rule",
            );
        }
        let mut rules = Vec::new();
        for (r, rule) in raw.rules.iter().enumerate() {
            let rule_path = format!("{path}.rules[{r}]");
            let Some(rule) = self.lenient(rule, &rule_path) else {
                continue;
            };
            if !rule_ids.insert(rule.id.clone()) {
                self.problem(
                    Code::DuplicateId,
                    format!("{rule_path}.id"),
                    format!("rule id `{}` is used twice in the pack", rule.id),
                );
            }
            if let Some(kind) = self.rule(rule, &rule_path) {
                rules.push(Rule {
                    path: rule_path.clone(),
                    id: rule.id.clone(),
                    doc: rule.doc.clone(),
                    kind,
                });
            }
        }
        let applies = match &raw.applies_when {
            Some(when) => {
                let when = self.condition(when, &format!("{path}.applies_when"), false);
                let otherwise = raw
                    .not_applicable
                    .as_deref()
                    .and_then(|text| self.template(text, &format!("{path}.not_applicable"), false));
                when.map(|when| Applies { when, otherwise })
            }
            None => {
                if raw.not_applicable.is_some() {
                    self.problem(
                        Code::DimensionShape,format!("{path}.not_applicable"),
                        "`not_applicable` says why a dimension does not apply: it needs an `applies_when`",
                    );
                }
                None
            }
        };
        Dimension {
            path: path.to_owned(),
            id: raw.id.clone(),
            kind: DimensionKind::Points,
            applies,
            compares_with_reference: Vec::new(),
            weight: raw.weight,
            name: raw.name.clone().unwrap_or_else(|| raw.id.clone()),
            description: raw.description.clone().unwrap_or_default(),
            max,
            start: raw.start,
            floor,
            cap,
            rules,
        }
    }

    /// A dimension whose score a judge gives: a number in a range, or a category.
    fn judged_dimension(&mut self, raw: &RawDimension, path: &str, scoring: Scoring) -> Dimension {
        if scoring != Scoring::Weighted {
            self.problem(
                Code::JudgedDimension,format!("{path}.type"),
                "judged dimensions are normalised and weighted, so the pack needs `scoring: weighted`",
            );
        }
        if !raw.rules.is_empty() {
            self.problem(
                Code::JudgedDimension,
                format!("{path}.rules"),
                "a judged dimension has no rules: its score comes from the judgment",
            );
        }
        let (kind, min, max) = if raw.kind == DimensionType::Categorical {
            if raw.categories.is_empty() {
                self.problem(
                    Code::JudgedDimension,
                    path,
                    "a categorical dimension needs `categories` (label and value)",
                );
            }
            let mut labels = HashSet::new();
            let mut values = Vec::new();
            for (i, c) in raw.categories.iter().enumerate() {
                if !labels.insert(c.label.clone()) {
                    self.problem(
                        Code::DuplicateId,
                        format!("{path}.categories[{i}].label"),
                        format!("category `{}` is used twice", c.label),
                    );
                }
                if values.contains(&c.value) {
                    self.problem(
                        Code::DuplicateId,
                        format!("{path}.categories[{i}].value"),
                        format!("category value {} is used twice", c.value),
                    );
                }
                values.push(c.value);
            }
            if raw.min.is_some() {
                self.problem(
                    Code::JudgedDimension,
                    format!("{path}.min"),
                    "a categorical dimension takes its range from its categories",
                );
            }
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if let Some(given) = raw.max.filter(|m| *m != max) {
                self.problem(
                    Code::JudgedDimension,
                    format!("{path}.max"),
                    format!("`max` {given} differs from the largest category value {max}"),
                );
            }
            if values.iter().any(|v| *v < 0.0) {
                self.problem(
                    Code::JudgedDimension,
                    format!("{path}.categories"),
                    "category values must be 0 or more",
                );
            }
            let categories = raw
                .categories
                .iter()
                .map(|c| (c.label.clone(), c.value))
                .collect();
            // A category normalises as value / largest value (the design's value / 3), so
            // the range always starts at 0.
            (
                DimensionKind::Categorical { categories },
                0.0,
                if max > 0.0 { max } else { 1.0 },
            )
        } else {
            if !raw.categories.is_empty() {
                self.problem(
                    Code::JudgedDimension,
                    format!("{path}.categories"),
                    "`categories` belong to `type: categorical`",
                );
            }
            let (min, max) = (raw.min.unwrap_or(0.0), raw.max.unwrap_or(1.0));
            if min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) || min < 0.0 {
                self.problem(
                    Code::JudgedDimension,
                    format!("{path}.max"),
                    format!("a numeric dimension needs 0 ≤ `min` < `max`, not {min}..{max}"),
                );
            }
            (DimensionKind::Numeric { min }, min, max)
        };
        Dimension {
            path: path.to_owned(),
            id: raw.id.clone(),
            kind,
            weight: raw.weight,
            name: raw.name.clone().unwrap_or_else(|| raw.id.clone()),
            description: raw.description.clone().unwrap_or_default(),
            max,
            start: min,
            floor: min,
            cap: max,
            rules: Vec::new(),
            applies: None,
            compares_with_reference: Vec::new(),
        }
    }

    /// Stands in for a dimension that could not be compiled, so later checks still run.
    fn placeholder_dimension(&mut self, raw: &RawDimension, path: &str) -> Dimension {
        Dimension {
            path: path.to_owned(),
            id: raw.id.clone(),
            kind: DimensionKind::Points,
            weight: raw.weight,
            name: raw.id.clone(),
            description: String::new(),
            max: 1.0,
            start: 0.0,
            floor: 0.0,
            cap: 1.0,
            rules: Vec::new(),
            applies: None,
            compares_with_reference: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{errors, files, grade};
    use crate::pack::DimensionKind;

    fn head(scoring: &str) -> String {
        format!("id: t\nversion: '1'\nname: T\nscoring: {scoring}\njudge: {{ prompt: j.prompt.md }}\ndimensions:\n")
    }

    #[test]
    fn a_points_dimension_keeps_its_score_within_floor_and_cap() {
        let yaml = "id: t\nversion: '1'\nname: T\ndimensions:\n  - id: d\n    max: 10\n    start: 5\n    floor: 2\n    cap: 8\n    rules:\n      - { id: up, doc: d, for_each: { all: [] }, points: 3 }\n";
        let pack = match crate::pack::compile_pack(&files(yaml)) {
            Ok(pack) => pack,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(grade(&pack, &[("a", "b")]).dimensions["d"].score.0, 8.0);
        let down = yaml.replace("points: 3", "points: -4");
        let pack = match crate::pack::compile_pack(&files(&down)) {
            Ok(pack) => pack,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(
            grade(&pack, &[("a", "b"), ("c", "d")]).dimensions["d"]
                .score
                .0,
            2.0
        );
    }

    #[test]
    fn the_range_of_a_points_dimension_is_checked() {
        let yaml = "id: t\nversion: '1'\nname: T\ndimensions:\n  - id: d\n    max: 10\n    floor: -1\n    cap: 12\n    weight: 0.5\n    rules: []\n  - id: d\n    rules: []\n";
        assert_eq!(
            errors(yaml),
            [
                "dimensions[0].weight: `weight` only counts in a pack with `scoring: weighted`",
                "dimensions[0].floor: `floor` -1 is below 0",
                "dimensions[0].cap: `cap` 12 is above the dimension's max 10",
                "dimensions[0].rules: a dimension needs at least one rule",
                "dimensions[1].id: dimension id `d` is used twice",
                "dimensions[1]: dimension `d` needs a `max`: the most its rules can give",
            ]
        );
    }

    #[test]
    fn categorical_dimensions_take_their_range_from_their_categories() {
        let yaml = format!("{}  - id: q\n    type: categorical\n    weight: 1\n    categories: [ {{ label: no, value: 0 }}, {{ label: yes, value: 3 }} ]\n", head("weighted"));
        let mut files = files(&yaml);
        files
            .files
            .insert("j.prompt.md".to_owned(), "{{session_id}}\n".to_owned());
        let validation = crate::pack::validate_pack(&files);
        let Some(pack) = validation.pack else {
            panic!("{:?}", validation.problems);
        };
        let q = &pack.dimensions[0];
        assert_eq!((q.start, q.max), (0.0, 3.0));
        assert!(
            matches!(&q.kind, DimensionKind::Categorical { categories } if categories.len() == 2)
        );
    }

    #[test]
    fn judged_dimensions_are_weighted_and_have_no_rules() {
        let yaml = format!("{}  - id: q\n    type: numeric\n    min: 2\n    max: 1\n    rules: [ {{ id: r, doc: d, points: 1 }} ]\n    categories: [ {{ label: a, value: 1 }} ]\n", head("points"));
        assert_eq!(
            errors(&yaml),
            [
                "dimensions[0].type: judged dimensions are normalised and weighted, so the pack needs `scoring: weighted`",
                "dimensions[0].rules: a judged dimension has no rules: its score comes from the judgment",
                "dimensions[0].categories: `categories` belong to `type: categorical`",
                "dimensions[0].max: a numeric dimension needs 0 ≤ `min` < `max`, not 2..1",
                "judge.prompt: prompt template `j.prompt.md` is not in the pack (templates are files named `*.prompt.md`)",
            ]
        );
    }
}
