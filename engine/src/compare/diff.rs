//! What changed between two packs: bands, dimensions, and each rule's points, conditions
//! and texts.
//!
//! Dimensions are compared on the compiled packs. A rule is compared on what it means, not
//! on how it is written: its definition is read from `rubric.yaml` as data (so layout, order
//! of keys and comments do not count), every selector and metric it names is replaced by that
//! selector's or metric's own definition (so a renamed selector with the same definition is
//! no change, and a selector changed under a rule that still names it is one), and a script
//! stands for the text of its file.

use serde::Serialize;
use serde_yaml::{Mapping, Value};

use crate::pack::{CompiledPack, PackFiles};

/// How a dimension or rule differs between the baseline and the candidate pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    /// Only the candidate has it.
    Added,
    /// Only the baseline has it.
    Removed,
    /// Both have it, and it differs.
    Changed,
    /// Both have it, the same.
    Same,
}

/// How the candidate pack differs from the baseline.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RubricDiff {
    /// Bands whose threshold changed, was added or removed.
    pub bands: Vec<BandChange>,
    /// Dimensions added, removed or changed (unchanged ones are left out).
    pub dimensions: Vec<DimensionChange>,
    /// Rules added, removed or changed (unchanged ones are left out).
    pub rules: Vec<RuleChange>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BandChange {
    pub grade: String,
    pub baseline: Option<f64>,
    pub candidate: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DimensionChange {
    pub dimension: String,
    pub status: Status,
    /// What changed, one phrase each: `max 20 → 25`, `name`, `description`…
    pub changes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleChange {
    pub dimension: String,
    pub rule: String,
    pub status: Status,
    /// Which of `points`, `conditions` and `texts` changed.
    pub changes: Vec<String>,
    /// The rule's documentation in the candidate pack (the baseline's for a removed rule).
    pub doc: String,
}

impl RubricDiff {
    /// The status of a rule: added, removed, changed, or (not listed) the same.
    pub fn rule_status(&self, dimension: &str, rule: &str) -> Status {
        self.rules
            .iter()
            .find(|r| r.dimension == dimension && r.rule == rule)
            .map_or(Status::Same, |r| r.status)
    }

    /// Whether the packs grade alike.
    pub fn is_empty(&self) -> bool {
        self.bands.is_empty() && self.dimensions.is_empty() && self.rules.is_empty()
    }
}

/// A pack with the files it was compiled from.
#[derive(Clone, Copy)]
pub struct PackSource<'a> {
    /// The compiled pack.
    pub pack: &'a CompiledPack,
    /// The files it was compiled from.
    pub files: &'a PackFiles,
}

/// Compares two packs. Rules are matched by dimension and rule id.
pub fn rubric_diff(base: PackSource<'_>, cand: PackSource<'_>) -> RubricDiff {
    let (base_doc, cand_doc) = (Definitions::read(base.files), Definitions::read(cand.files));
    let mut diff = RubricDiff {
        bands: Vec::new(),
        dimensions: Vec::new(),
        rules: Vec::new(),
    };
    for b in &base.pack.bands {
        let other = cand.pack.bands.iter().find(|c| c.grade == b.grade);
        if other.map(|c| c.min_percent) != Some(b.min_percent) {
            diff.bands.push(BandChange {
                grade: b.grade.clone(),
                baseline: Some(b.min_percent),
                candidate: other.map(|c| c.min_percent),
            });
        }
    }
    for c in &cand.pack.bands {
        if !base.pack.bands.iter().any(|b| b.grade == c.grade) {
            diff.bands.push(BandChange {
                grade: c.grade.clone(),
                baseline: None,
                candidate: Some(c.min_percent),
            });
        }
    }

    for bd in &base.pack.dimensions {
        let Some(cd) = cand.pack.dimensions.iter().find(|d| d.id == bd.id) else {
            diff.dimensions.push(DimensionChange {
                dimension: bd.id.clone(),
                status: Status::Removed,
                changes: Vec::new(),
            });
            for r in &bd.rules {
                diff.rules.push(RuleChange {
                    dimension: bd.id.clone(),
                    rule: r.id.clone(),
                    status: Status::Removed,
                    changes: Vec::new(),
                    doc: r.doc.clone(),
                });
            }
            continue;
        };
        let mut changes = Vec::new();
        let numbers = [
            ("max", bd.max, cd.max),
            ("start", bd.start, cd.start),
            ("floor", bd.floor, cd.floor),
            ("cap", bd.cap, cd.cap),
        ];
        for (what, b, c) in numbers {
            if b != c {
                changes.push(format!("{what} {} → {}", num(b), num(c)));
            }
        }
        if bd.weight != cd.weight {
            changes.push(format!(
                "weight {} → {}",
                bd.weight.map_or("none".to_owned(), num),
                cd.weight.map_or("none".to_owned(), num)
            ));
        }
        if bd.kind != cd.kind {
            changes.push("kind".to_owned());
        }
        if bd.name != cd.name {
            changes.push("name".to_owned());
        }
        if bd.description != cd.description {
            changes.push("description".to_owned());
        }
        let order_b: Vec<&str> = bd.rules.iter().map(|r| r.id.as_str()).collect();
        let kept: Vec<&str> = cd
            .rules
            .iter()
            .map(|r| r.id.as_str())
            .filter(|id| order_b.contains(id))
            .collect();
        let kept_b: Vec<&str> = order_b
            .iter()
            .copied()
            .filter(|id| kept.contains(id))
            .collect();
        // Rules run in order and may read the score so far: reordering them is a change.
        if kept != kept_b {
            changes.push("rule order".to_owned());
        }
        for r in &bd.rules {
            match cd.rules.iter().find(|c| c.id == r.id) {
                None => diff.rules.push(RuleChange {
                    dimension: bd.id.clone(),
                    rule: r.id.clone(),
                    status: Status::Removed,
                    changes: Vec::new(),
                    doc: r.doc.clone(),
                }),
                Some(c) => {
                    let b_shape = base_doc.rule(&bd.id, &r.id);
                    let c_shape = cand_doc.rule(&bd.id, &r.id);
                    let mut what = Vec::new();
                    if b_shape.points != c_shape.points {
                        what.push("points".to_owned());
                    }
                    if b_shape.conditions != c_shape.conditions {
                        what.push("conditions".to_owned());
                    }
                    if b_shape.texts != c_shape.texts {
                        what.push("texts".to_owned());
                    }
                    if !what.is_empty() {
                        diff.rules.push(RuleChange {
                            dimension: bd.id.clone(),
                            rule: r.id.clone(),
                            status: Status::Changed,
                            changes: what,
                            doc: c.doc.clone(),
                        });
                    }
                }
            }
        }
        for c in &cd.rules {
            if !bd.rules.iter().any(|r| r.id == c.id) {
                diff.rules.push(RuleChange {
                    dimension: cd.id.clone(),
                    rule: c.id.clone(),
                    status: Status::Added,
                    changes: Vec::new(),
                    doc: c.doc.clone(),
                });
            }
        }
        if !changes.is_empty() {
            diff.dimensions.push(DimensionChange {
                dimension: bd.id.clone(),
                status: Status::Changed,
                changes,
            });
        }
    }
    for cd in &cand.pack.dimensions {
        if !base.pack.dimensions.iter().any(|d| d.id == cd.id) {
            diff.dimensions.push(DimensionChange {
                dimension: cd.id.clone(),
                status: Status::Added,
                changes: Vec::new(),
            });
            for r in &cd.rules {
                diff.rules.push(RuleChange {
                    dimension: cd.id.clone(),
                    rule: r.id.clone(),
                    status: Status::Added,
                    changes: Vec::new(),
                    doc: r.doc.clone(),
                });
            }
        }
    }
    diff
}

fn num(v: f64) -> String {
    crate::entry::js_number(v)
}

/// A rule's meaning, in three parts compared on their own.
#[derive(Debug, Default, PartialEq)]
struct Shape {
    points: Vec<Value>,
    conditions: Value,
    texts: Vec<Value>,
}

/// A pack's `rubric.yaml` as data, with its named selectors and metrics.
struct Definitions<'f> {
    root: Value,
    files: &'f PackFiles,
}

/// Selectors that refer to selectors can nest; definitions deeper than this are left as names.
const MAX_DEPTH: usize = 16;

impl<'f> Definitions<'f> {
    fn read(files: &'f PackFiles) -> Self {
        let root = files
            .files
            .get("rubric.yaml")
            .and_then(|text| serde_yaml::from_str(text).ok())
            .unwrap_or(Value::Null);
        Definitions { root, files }
    }

    fn named(&self, section: &str, name: &str) -> Option<&Value> {
        self.root.get(section).and_then(|s| s.get(name))
    }

    fn rule(&self, dimension: &str, rule: &str) -> Shape {
        let node = self
            .root
            .get("dimensions")
            .and_then(Value::as_sequence)
            .and_then(|ds| {
                ds.iter()
                    .find(|d| d.get("id").and_then(Value::as_str) == Some(dimension))
            })
            .and_then(|d| d.get("rules"))
            .and_then(Value::as_sequence)
            .and_then(|rs| {
                rs.iter()
                    .find(|r| r.get("id").and_then(Value::as_str) == Some(rule))
            });
        let Some(node) = node else {
            return Shape::default();
        };
        let mut shape = Shape::default();
        let mut points = Vec::new();
        collect(node, "points", &mut points);
        // Scaled points name a metric: its definition is part of the points.
        shape.points = points.iter().map(|p| self.resolve(p, 0)).collect();
        for key in ["doc", "evidence", "flag"] {
            collect(node, key, &mut shape.texts);
        }
        shape.conditions = self.resolve(&strip(node), 0);
        shape
    }

    /// The value with every selector or metric name replaced by its definition, and every
    /// script file name by the script's text.
    fn resolve(&self, value: &Value, depth: usize) -> Value {
        match value {
            Value::String(s) if depth < MAX_DEPTH => {
                if let Some(def) = self.named("selectors", s) {
                    return tagged("selector", self.resolve(def, depth + 1));
                }
                if let Some(def) = self.named("metrics", s) {
                    return tagged("metric", self.resolve(def, depth + 1));
                }
                value.clone()
            }
            Value::Sequence(items) => {
                Value::Sequence(items.iter().map(|v| self.resolve(v, depth)).collect())
            }
            Value::Mapping(map) => {
                let mut out = Mapping::new();
                for (k, v) in map {
                    let resolved = match (k.as_str(), v.as_str()) {
                        (Some("script"), Some(file)) => match self.files.files.get(file) {
                            Some(text) => Value::String(text.clone()),
                            None => v.clone(),
                        },
                        _ => self.resolve(v, depth),
                    };
                    out.insert(k.clone(), resolved);
                }
                Value::Mapping(out)
            }
            _ => value.clone(),
        }
    }
}

fn tagged(kind: &str, def: Value) -> Value {
    let mut m = Mapping::new();
    m.insert(Value::String(kind.to_owned()), def);
    Value::Mapping(m)
}

/// Every value under `key`, anywhere in `node`, in document order.
fn collect(node: &Value, key: &str, out: &mut Vec<Value>) {
    match node {
        Value::Mapping(map) => {
            for (k, v) in map {
                if k.as_str() == Some(key) {
                    out.push(v.clone());
                } else {
                    collect(v, key, out);
                }
            }
        }
        Value::Sequence(items) => items.iter().for_each(|v| collect(v, key, out)),
        _ => {}
    }
}

/// The node without its id, points and texts: what decides when the rule applies.
fn strip(node: &Value) -> Value {
    match node {
        Value::Mapping(map) => Value::Mapping(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        Some("id" | "doc" | "points" | "evidence" | "flag")
                    )
                })
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Sequence(items) => Value::Sequence(items.iter().map(strip).collect()),
        _ => node.clone(),
    }
}
