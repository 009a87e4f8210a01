//! `schemas/rubric.schema.json` and the pack loader agree both ways: every pack the loader
//! accepts validates against the schema, and every structurally broken pack is refused by
//! both — by the schema and by `grade rubric validate` (exit 1). The schema's keys are also
//! checked against the loader's serde structs in `engine/src/pack/raw.rs`, so a key added to
//! one and not the other fails here.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

fn schema_json() -> Value {
    let text = std::fs::read_to_string(repo_root().join("schemas/rubric.schema.json"))
        .expect("schemas/rubric.schema.json exists");
    serde_json::from_str(&text).expect("the rubric schema is JSON")
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&schema_json()).expect("the rubric schema is a valid JSON Schema")
}

/// `rubric.yaml` as the JSON value an editor's YAML language server would validate.
fn yaml_to_json(text: &str) -> Value {
    serde_yaml::from_str(text).expect("the test YAML parses")
}

fn schema_errors(validator: &jsonschema::Validator, yaml: &str) -> Vec<String> {
    validator
        .iter_errors(&yaml_to_json(yaml))
        .map(|e| format!("{e} at `{}`", e.instance_path))
        .collect()
}

/// Writes a pack folder (`rubric.yaml` plus `extra` files) into a fresh temporary folder.
fn write_pack(yaml: &str, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("rubric.yaml"), yaml).expect("rubric.yaml is written");
    for (name, text) in extra {
        std::fs::write(dir.path().join(name), text).expect("a pack file is written");
    }
    dir
}

/// `grade rubric validate DIR`: its exit code and everything it printed.
fn cli_validate(dir: &Path) -> (i32, String) {
    let out = grade_bin()
        .current_dir(repo_root())
        .args(["rubric", "validate"])
        .arg(dir)
        .output()
        .expect("the grade binary runs");
    (code(&out), format!("{}{}", stdout(&out), stderr(&out)))
}

fn shipped_and_tutorial_packs() -> Vec<PathBuf> {
    let mut packs: Vec<PathBuf> = std::fs::read_dir(repo_root().join("rubrics"))
        .expect("rubrics/ is readable")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("rubric.yaml").is_file())
        .collect();
    packs.sort();
    assert!(packs.len() >= 2, "the shipped packs are found: {packs:?}");
    packs.push(repo_root().join("tests/packs/tutorial"));
    packs
}

#[test]
fn the_schema_is_valid_and_every_property_has_a_description() {
    let schema = schema_json();
    validator();
    fn walk(value: &Value, at: &str, missing: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    for (key, prop) in props {
                        if prop
                            .get("description")
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                        {
                            missing.push(format!("{at}/properties/{key}"));
                        }
                    }
                }
                for (key, child) in map {
                    walk(child, &format!("{at}/{key}"), missing);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{at}/{i}"), missing);
                }
            }
            _ => {}
        }
    }
    let mut missing = Vec::new();
    walk(&schema, "#", &mut missing);
    assert!(
        missing.is_empty(),
        "properties without a description: {missing:#?}"
    );
}

/// The fields of `pub struct NAME` in raw.rs, as serde reads them (`rename = "x"` included).
fn struct_fields(source: &str, name: &str) -> BTreeSet<String> {
    let start = source
        .find(&format!("pub struct {name} {{"))
        .unwrap_or_else(|| panic!("raw.rs declares `pub struct {name}`"));
    let body = &source[start..];
    let body = &body[..body.find("\n}").expect("the struct ends")];
    let mut fields = BTreeSet::new();
    let mut rename: Option<String> = None;
    for line in body.lines().map(str::trim) {
        if line.starts_with("#[serde(") {
            if let Some(at) = line.find("rename = \"") {
                let rest = &line[at + "rename = \"".len()..];
                rename = rest.split('"').next().map(str::to_owned);
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("pub ") else {
            continue;
        };
        let Some((field, _)) = rest.split_once(':') else {
            continue;
        };
        if field.starts_with("struct") {
            continue;
        }
        fields.insert(rename.take().unwrap_or_else(|| field.trim().to_owned()));
    }
    fields
}

fn schema_keys(schema: &Value, pointer: &str) -> BTreeSet<String> {
    let at = schema
        .pointer(pointer)
        .unwrap_or_else(|| panic!("the schema has `{pointer}`"));
    assert_eq!(
        at.get("additionalProperties"),
        Some(&Value::Bool(false)),
        "`{pointer}` refuses unknown keys, as the loader's `deny_unknown_fields` does"
    );
    at["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("`{pointer}` has properties"))
        .keys()
        .cloned()
        .collect()
}

#[test]
fn the_schema_has_exactly_the_keys_of_the_loader_structs() {
    // The loader structs are in raw.rs, but for those that live with their node: a
    // condition's with the conditions, the normalize steps with the compiled pack.
    let raw: String = [
        "engine/src/pack/raw.rs",
        "engine/src/pack/condition/mod.rs",
        "engine/src/pack/mod.rs",
    ]
    .iter()
    .map(|file| {
        std::fs::read_to_string(repo_root().join(file))
            .unwrap_or_else(|e| panic!("{file} is readable: {e}"))
    })
    .collect();
    let schema = schema_json();
    let pairs = [
        ("RawPack", ""),
        ("RawBand", "/$defs/band"),
        ("RawEmptySession", "/properties/empty_session"),
        ("RawDimension", "/$defs/dimension"),
        ("RawRule", "/$defs/rule"),
        ("RawCase", "/$defs/case"),
        ("RawOutcome", "/$defs/outcome"),
        ("RawScaled", "/$defs/points/anyOf/1"),
        ("RawCondition", "/$defs/condition"),
        ("RawMetric", "/$defs/metric"),
        ("RawRatio", "/$defs/metric/properties/ratio"),
        ("RawKeyed", "/$defs/keyed"),
        ("RawSelector", "/$defs/selector"),
        ("RawAggregate", "/properties/aggregate"),
        ("RawJudge", "/properties/judge"),
        ("RawPlugin", "/properties/plugins/items"),
        (
            "RawCategory",
            "/$defs/dimension/properties/categories/items",
        ),
    ];
    let mut mismatches = Vec::new();
    for (name, pointer) in pairs {
        let fields = struct_fields(&raw, name);
        let keys = schema_keys(&schema, pointer);
        if fields != keys {
            mismatches.push(format!(
                "{name} vs schema `{pointer}`: only in raw.rs {:?}, only in the schema {:?}",
                fields.difference(&keys).collect::<Vec<_>>(),
                keys.difference(&fields).collect::<Vec<_>>()
            ));
        }
    }
    // The normalize steps: the enum's variants in snake_case.
    let start = raw
        .find("enum Normalize {")
        .expect("the pack declares `enum Normalize`");
    let body = &raw[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    let variants: BTreeSet<String> = body
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| {
            let mut snake = String::new();
            for (i, c) in v.chars().enumerate() {
                if c.is_uppercase() && i > 0 {
                    snake.push('_');
                }
                snake.extend(c.to_lowercase());
            }
            snake
        })
        .collect();
    let steps: BTreeSet<String> = schema
        .pointer("/$defs/keyed/properties/normalize/items/enum")
        .and_then(Value::as_array)
        .expect("the schema lists the normalize steps")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    if variants != steps {
        mismatches.push(format!(
            "normalize steps: raw.rs {variants:?}, schema {steps:?}"
        ));
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

#[test]
fn shipped_packs_and_the_tutorial_pack_satisfy_the_schema_and_the_loader() {
    let validator = validator();
    for pack in shipped_and_tutorial_packs() {
        let yaml =
            std::fs::read_to_string(pack.join("rubric.yaml")).expect("rubric.yaml is readable");
        let errors = schema_errors(&validator, &yaml);
        assert!(
            errors.is_empty(),
            "{} violates the schema: {errors:#?}",
            pack.display()
        );
        let (code, output) = cli_validate(&pack);
        assert_eq!(
            code,
            0,
            "`grade rubric validate {}` refused it:\n{output}",
            pack.display()
        );
    }
}

const HEAD: &str = "id: t\nversion: '1'\nname: Test pack\n";

/// A pack around one rule (written at rule indentation, 6 spaces), with optional top-level
/// `selectors:`/`metrics:` text before `dimensions:`.
fn pack_with_rule(top: &str, rule: &str) -> String {
    let rule = rule
        .lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    format!("{HEAD}{top}dimensions:\n  - id: d\n    max: 10\n    rules:\n{rule}\n")
}

const TASKS: &str = "selectors:\n  task_op: { domain: tasks }\n";

/// Structurally broken packs: each is refused by the schema and by `grade rubric validate`.
fn broken_packs() -> Vec<(&'static str, String)> {
    let ok_rule = "- id: r\n  doc: d\n  when: { count: task_op }\n  points: 1";
    vec![
        ("unknown top-level key", format!("{HEAD}author: me\n{TASKS}dimensions:\n  - id: d\n    max: 10\n    rules:\n      - {{ id: r, doc: d, evidence: e }}\n")),
        ("unknown key in a dimension", format!("{HEAD}dimensions:\n  - id: d\n    max: 10\n    weight: 2\n    rules:\n      - {{ id: r, doc: d, evidence: e }}\n")),
        ("unknown key in a rule (typo of points)", pack_with_rule(TASKS, "- id: r\n  doc: d\n  when: { count: task_op }\n  point: 5")),
        ("unknown key in a named selector", pack_with_rule("selectors:\n  task_op: { domian: tasks }\n", ok_rule)),
        ("unknown key in an inline for_each selector", pack_with_rule("", "- id: r\n  doc: d\n  for_each: { domain: tasks, op: add }\n  points: -1")),
        ("unknown key in a condition", pack_with_rule(TASKS, "- id: r\n  doc: d\n  when: { count: task_op, at_leest: 2 }\n  points: 1")),
        ("unknown key in a case", pack_with_rule(TASKS, "- id: r\n  doc: d\n  cases:\n    - when: { count: task_op }\n      score: 5")),
        ("unknown key in otherwise", pack_with_rule(TASKS, "- id: r\n  doc: d\n  when: { count: task_op }\n  points: 1\n  otherwise: { points: 0, note: none }")),
        ("unknown key in a metric", pack_with_rule(&format!("{TASKS}metrics:\n  m: {{ ratio: {{ of: task_op, over: task_op }}, scale: 2 }}\n"), ok_rule)),
        ("unknown key in a ratio", pack_with_rule(&format!("{TASKS}metrics:\n  m: {{ ratio: {{ of: task_op, over: task_op, min: 1 }} }}\n"), ok_rule)),
        ("unknown key in scaled points", pack_with_rule(&format!("{TASKS}metrics:\n  m: {{ ratio: {{ of: task_op, over: task_op }} }}\n"), "- id: r\n  doc: d\n  points: { metric: m, times: 10, round: up }")),
        ("unknown key in a band", format!("{HEAD}bands:\n  - {{ grade: A, min_percent: 90, color: green }}\n{TASKS}dimensions:\n  - id: d\n    max: 10\n    rules:\n      - {{ id: r, doc: d, evidence: e }}\n")),
        ("unknown key in empty_session", format!("{HEAD}empty_session: {{ flag: none, points: 0 }}\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - {{ id: r, doc: d, evidence: e }}\n")),
        ("max is not a number", format!("{HEAD}dimensions:\n  - id: d\n    max: twenty\n    rules:\n      - {{ id: r, doc: d, evidence: e }}\n")),
        ("points is a word", pack_with_rule(TASKS, "- id: r\n  doc: d\n  when: { count: task_op }\n  points: five")),
        ("points is a quoted number", pack_with_rule(TASKS, "- id: r\n  doc: d\n  when: { count: task_op }\n  points: \"5\"")),
        ("domain is a number", pack_with_rule("selectors:\n  task_op: { domain: 5 }\n", ok_rule)),
        ("success is a quoted word", pack_with_rule("selectors:\n  task_op: { domain: tasks, success: \"yes\" }\n", ok_rule)),
        ("exit_code is text", pack_with_rule("selectors:\n  task_op: { exit_code: \"4\" }\n", ok_rule)),
        ("for_each is a number", pack_with_rule("", "- id: r\n  doc: d\n  for_each: 5\n  points: -1")),
        ("unknown normalize step", pack_with_rule(&format!("{TASKS}metrics:\n  m: {{ duplicates: {{ of: task_op, key: params.title, normalize: [shout] }} }}\n"), ok_rule)),
        ("normalize is not a list", pack_with_rule(&format!("{TASKS}metrics:\n  m: {{ distinct: {{ of: task_op, key: params.title, normalize: lowercase }} }}\n"), ok_rule)),
        ("missing pack id", "version: '1'\nname: Test\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - { id: r, doc: d, evidence: e }\n".to_string()),
        ("missing dimensions", format!("{HEAD}{TASKS}")),
        ("missing dimension max", format!("{HEAD}dimensions:\n  - id: d\n    rules:\n      - {{ id: r, doc: d, evidence: e }}\n")),
        ("missing rule doc", pack_with_rule(TASKS, "- id: r\n  when: { count: task_op }\n  points: 1")),
        ("missing ratio over", pack_with_rule(&format!("{TASKS}metrics:\n  m: {{ ratio: {{ of: task_op }} }}\n"), ok_rule)),
        ("missing duplicates key", pack_with_rule(&format!("{TASKS}metrics:\n  m: {{ duplicates: {{ of: task_op }} }}\n"), ok_rule)),
        ("missing times in scaled points", pack_with_rule(&format!("{TASKS}metrics:\n  m: {{ ratio: {{ of: task_op, over: task_op }} }}\n"), "- id: r\n  doc: d\n  points: { metric: m }")),
        ("missing band min_percent", format!("{HEAD}bands:\n  - {{ grade: A }}\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - {{ id: r, doc: d, evidence: e }}\n")),
        ("negative within", pack_with_rule(TASKS, "- id: r\n  doc: d\n  for_each: task_op\n  when: { followed_by: task_op, within: -1 }\n  points: 1")),
        ("fractional within", pack_with_rule(TASKS, "- id: r\n  doc: d\n  for_each: task_op\n  when: { preceded_by: task_op, within: 2.5 }\n  points: 1")),
        ("rules is a map", format!("{HEAD}dimensions:\n  - id: d\n    max: 10\n    rules: {{ id: r, doc: d, evidence: e }}\n")),
        ("cases is a map", pack_with_rule(TASKS, "- id: r\n  doc: d\n  cases: { when: { count: task_op }, points: 1 }")),
        ("condition all is a name", pack_with_rule(TASKS, "- id: r\n  doc: d\n  when: { all: task_op }\n  points: 1")),
        ("a named selector is null", pack_with_rule("selectors:\n  task_op: ~\n", ok_rule)),
        ("a rule doc is a number", pack_with_rule(TASKS, "- id: r\n  doc: 5\n  when: { count: task_op }\n  points: 1")),
        ("an operation list holds a number", pack_with_rule("selectors:\n  task_op: { domain: tasks, operation: [find, 5] }\n", ok_rule)),
        ("a case is not a map", pack_with_rule(TASKS, "- id: r\n  doc: d\n  cases: [award]")),
        ("the document is a list", "- id: t\n- version: '1'\n".to_owned()),
        ("sources lists no format", pack_with_rule(&format!("sources: []\n{TASKS}"), ok_rule)),
        ("a source format listed twice", pack_with_rule(&format!("sources: [cleo-jsonl, cleo-db, cleo-jsonl]\n{TASKS}"), ok_rule)),
        ("sources is one name, not a list", pack_with_rule(&format!("sources: cleo-jsonl\n{TASKS}"), ok_rule)),
    ]
}

#[test]
fn broken_packs_are_refused_by_both_the_schema_and_the_loader() {
    let validator = validator();
    let cases = broken_packs();
    assert!(cases.len() >= 15);
    let mut disagreements = Vec::new();
    for (name, yaml) in &cases {
        let schema_refuses = !schema_errors(&validator, yaml).is_empty();
        let dir = write_pack(yaml, &[]);
        let (code, output) = cli_validate(dir.path());
        if !schema_refuses {
            disagreements.push(format!("{name}: the schema accepts it\n{yaml}"));
        }
        if code != 1 {
            disagreements.push(format!(
                "{name}: `grade rubric validate` exited {code} (expected 1)\n{yaml}\n{output}"
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{}",
        disagreements.join("\n---\n")
    );
}

/// Valid packs that use the less common shapes: both the schema and the loader accept them.
/// A valid-but-unusual pack: its name, `rubric.yaml`, and extra files (name, content).
type UnusualPack = (&'static str, String, Vec<(&'static str, &'static str)>);

fn unusual_packs() -> Vec<UnusualPack> {
    vec![
        (
            "inline selector maps everywhere",
            format!(
                "{HEAD}sources: [cleo-jsonl, cleo-db]\nselectors:\n  add: {{ domain: tasks, operation: add }}\n\
                 metrics:\n  share: {{ ratio: {{ of: {{ domain: tasks, operation: find }}, over: {{ domain: tasks, operation: [find, list] }} }} }}\n\
                 dimensions:\n  - id: d\n    max: 10\n    rules:\n\
                 \x20     - id: r1\n        doc: inline for_each, followed_by and preceded_by\n\
                 \x20       for_each: {{ domain: tasks, operation: add, success: false }}\n\
                 \x20       cases:\n\
                 \x20         - when: {{ followed_by: {{ all: [add, {{ success: true }}] }}, within: 3 }}\n\
                 \x20           evidence: retried\n\
                 \x20         - when: {{ preceded_by: {{ not: add }}, within: 1 }}\n\
                 \x20           points: -1\n\
                 \x20         - when: {{ entry: {{ any: [{{ field: params.title, blank: true }}, {{ is: add }}] }} }}\n\
                 \x20           points: -2\n\
                 \x20     - id: r2\n        doc: inline count and first/is\n\
                 \x20       when: {{ all: [{{ count: {{ domain: session }}, at_least: 1, at_most: 3 }}, {{ first: {{ domain: tasks }}, is: {{ operation: find }} }}] }}\n\
                 \x20       points: 2\n"
            ),
            vec![],
        ),
        (
            "list and single forms of names and codes",
            pack_with_rule(
                "selectors:\n  a: { domain: [tasks, session], operation: find }\n  b: { domain: tasks, operation: [add, update], exit_code: [4, 6] }\n  c: { exit_code: 4, success: false }\n  d: { field: metadata.gateway, one_of: [query, null, 1] }\n  e: { field: params.n, equals: { nested: [1, 2] } }\n  everything: { all: [] }\n",
                "- id: r\n  doc: d\n  when: { any: [{ count: a }, { count: b }, { count: c }, { count: d }, { count: e }, { count: everything, at_most: 0 }] }\n  points: 1",
            ),
            vec![],
        ),
        (
            "metric points, otherwise and evidence-only rules",
            pack_with_rule(
                "selectors:\n  find: { domain: tasks, operation: find }\n  disc: { domain: tasks, operation: [find, list] }\n  add: { domain: tasks, operation: add }\nmetrics:\n  share: { ratio: { of: find, over: disc } }\n  dups: { duplicates: { of: add, key: params.title, normalize: [lowercase, trim, collapse_whitespace] } }\n  titles: { distinct: { of: add, key: params.title } }\n",
                "- id: scaled\n  doc: d\n  when: { metric: share, at_least: 0.5 }\n  points: { metric: share, times: 4 }\n  otherwise:\n    points: { metric: share, times: 2.5 }\n    flag: \"share {percent.share}% of {count.disc}\"\n- id: note\n  doc: evidence only, always\n  evidence: \"{metric.titles} titles, {metric.dups} repeats, score {score}\"\n- id: running\n  doc: score conditions\n  cases:\n    - when: { score_at_least: 3, score_at_most: 8 }\n      points: 1\n    - flag: low",
            ),
            vec![],
        ),
        (
            "every top-level and dimension key, with nulls for optional keys",
            "id: full\nversion: 2.1.0\nname: Full\ndescription: All keys.\n\
                 bands:\n  - { grade: A, min_percent: 90 }\n  - { grade: F, min_percent: 0 }\n\
                 empty_session:\n  flag: nothing was recorded\n\
                 selectors:\n  t: { domain: tasks, success: ~ }\n\
                 metrics: {}\n\
                 dimensions:\n  - id: d\n    name: ~\n    description: ~\n    max: 10\n    start: 10\n    floor: 2\n    cap: 9.5\n    rules:\n\
                 \x20     - id: r\n        doc: d\n        when: { count: t }\n        points: -1\n        flag: ~\n        otherwise: ~\n".to_string(),
            vec![],
        ),
        (
            "a script rule next to the declarative ones",
            pack_with_rule(
                TASKS,
                "- id: scripted\n  doc: the script decides\n  script: check.rhai\n- id: plain\n  doc: d\n  when: { not: { count: task_op } }\n  points: 1",
            ),
            vec![("check.rhai", "if session.count(\"task_op\") > 2 { #{ points: -1, flags: \"busy\" } } else { () }\n")],
        ),
    ]
}

#[test]
fn unusual_but_valid_packs_are_accepted_by_both() {
    let validator = validator();
    let mut disagreements = Vec::new();
    for (name, yaml, extra) in unusual_packs() {
        let errors = schema_errors(&validator, &yaml);
        if !errors.is_empty() {
            disagreements.push(format!(
                "{name}: the schema refuses it: {errors:#?}\n{yaml}"
            ));
        }
        let dir = write_pack(&yaml, &extra);
        let (code, output) = cli_validate(dir.path());
        if code != 0 {
            disagreements.push(format!(
                "{name}: `grade rubric validate` exited {code}\n{yaml}\n{output}"
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{}",
        disagreements.join("\n---\n")
    );
}
