//! The registry of diagnostic codes: every error and warning of pack validation has one,
//! stable across releases, with a short doc (`grade rubric explain CODE` prints it).
//!
//! Errors are `E0xx`: the pack cannot be used, or, from `E040` on, a session the pack cannot
//! grade (the other sessions of a run still are). Warnings are `W1xx`: lints of a pack that
//! works but is probably not what its author meant; a pack silences one with
//! `allow: [W103]` in `rubric.yaml`. A code is never reused for another meaning; a retired
//! code stays in the registry with its doc.

use super::Severity;

/// Which part of a `key: value` pair a problem points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The key: a key that should not be there, or a name declared twice.
    Key,
    /// The value: what was written for the key.
    Value,
}

/// What the registry says about a code.
#[derive(Debug, Clone, Copy)]
pub struct CodeInfo {
    /// The code itself.
    pub code: Code,
    /// `E012`, `W103`.
    pub id: &'static str,
    /// A short kebab-case name (`unknown-selector`).
    pub name: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// What a problem of this code points at in `rubric.yaml`.
    pub target: Target,
    /// One line: what the problem is.
    pub summary: &'static str,
    /// A few lines: why it is a problem, and how to fix it, with an example.
    pub doc: &'static str,
}

macro_rules! registry {
    ($($code:ident $id:literal $name:literal $severity:ident $target:ident $summary:literal $doc:literal;)*) => {
        /// A diagnostic code. [`Code::info`] gives its id (`E012`), name, severity and doc.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $(#[doc = $summary] $code,)*
        }

        /// Every code, in the order of their ids.
        pub const ALL: &[Code] = &[$(Code::$code),*];

        impl Code {
            /// What the registry says about the code.
            pub fn info(self) -> CodeInfo {
                match self {
                    $(Code::$code => CodeInfo {
                        code: Code::$code,
                        id: $id,
                        name: $name,
                        severity: Severity::$severity,
                        target: Target::$target,
                        summary: $summary,
                        doc: $doc,
                    },)*
                }
            }
        }
    };
}

registry! {
    Yaml "E001" "yaml" Error Value
        "`rubric.yaml` is not valid YAML"
        "The YAML parser could not read `rubric.yaml`. The line reported is where the parser \
noticed, often the line after the mistake: check the indentation of that line and the one above, \
unclosed quotes and brackets, and a `:` inside an unquoted value (quote it: `flag: \"a: b\"`).";

    UnknownKey "E002" "unknown-key" Error Key
        "a key `rubric.yaml` does not know"
        "Unknown keys are refused, so a typo never silently disables a rule or a selector. The \
message lists the keys expected at that place; `docs/rubric-packs.md` documents each one.";

    WrongType "E003" "wrong-type" Error Value
        "a value of the wrong type, or a required key missing"
        "A value has the wrong type or shape (a list where one name was expected, text where a \
number belongs), or a required key such as `id`, `version` or `name` is missing. A value YAML \
reads as a boolean or a number (`yes`, `1.0`) where text is expected must be quoted.";

    NotFinite "E004" "not-finite" Error Value
        "a number that is not finite (`.inf`, `.nan`)"
        "No score, weight or bound of a rubric can be infinite or not a number: write a finite \
number.";

    NoManifest "E005" "no-manifest" Error Value
        "the pack has no `rubric.yaml`"
        "A pack is a folder with a `rubric.yaml`; `grade rubric new NAME` scaffolds one.";

    EmptyManifest "E006" "empty-manifest" Error Value
        "`rubric.yaml` is empty"
        "`rubric.yaml` holds nothing but blank lines or comments. A pack needs at least `id`, \
`version`, `name` and `dimensions`; `grade rubric new NAME` scaffolds one that validates.";

    EmptyId "E010" "empty-id" Error Value
        "an id or version is empty"
        "The pack's `id` and `version`, and each dimension's `id`, name what results report: \
they cannot be empty or blank.";

    DuplicateId "E011" "duplicate-id" Error Key
        "a name is used twice"
        "Dimension ids, rule ids (across the whole pack), band grades, category labels and \
values, and plugin names must each be unique: results and explanations refer to them by name.";

    UnknownSelector "E012" "unknown-selector" Error Value
        "a selector name the pack does not declare"
        "Rules, conditions, metrics, selectors and scripts refer to selectors by the names \
declared under `selectors:`. The message lists the declared names; fix the spelling or declare \
the selector. In a script, `session.count(\"name\")` and `e.matches(\"name\")` are checked too.";

    UnknownMetric "E013" "unknown-metric" Error Value
        "a metric name the pack does not declare"
        "Conditions (`metric: NAME`), scaled points (`points: { metric: NAME, times: N }`) and \
scripts (`session.metric(\"NAME\")`) refer to metrics declared under `metrics:`.";

    UnknownFieldPath "E014" "unknown-field-path" Error Value
        "a field path no entry has"
        "A field path starts with one of an entry's fields: `timestamp`, `sessionId`, `domain`, \
`operation`, `result.success`, `result.exitCode`, `result.duration`, `error`, `params.…` or \
`metadata.…` (for example `params.taskId`).";

    SelectorCycle "E015" "selector-cycle" Error Value
        "selectors refer to each other in a cycle"
        "A selector that refers (through `is`, `all`, `any` or `not`) back to itself can never be \
decided. The message shows the cycle; break it by writing one of the selectors in full.";

    SelectorShape "E016" "selector-shape" Error Value
        "a selector that is empty or tests a field wrongly"
        "A selector needs at least one key (to match every entry write `all: []`). A `field` \
takes exactly one test (`equals`, `one_of`, `truthy`, `blank`, `present`, `contains` or \
`type`), and a test needs its `field`; combine several tests with `all`. `blank` tests text, \
so it is refused on `result.success`, `result.exitCode` and `result.duration`, which never \
are (see E040).";

    MetricShape "E017" "metric-shape" Error Value
        "a metric that is not exactly one kind"
        "A metric is exactly one of `ratio: { of, over }`, `duplicates: { of, key }`, \
`distinct: { of, key }` or `native: plugin.function`. `normalize` works on text, so it is \
refused for a `key` of `result.success`, `result.exitCode` or `result.duration` (see E040).";

    ConditionShape "E018" "condition-shape" Error Value
        "a condition that does not test exactly one thing, or has keys of another kind"
        "A condition map names one kind: `count`, `metric`, `score_at_least`/`score_at_most`, \
`first`, `entry`, `followed_by`, `preceded_by`, `all`, `any`, `not` or `native`. `at_least` and \
`at_most` bound a `count` or `metric` (a `metric` needs one of them); `within` (1 or more) \
belongs to `followed_by`/`preceded_by`, which need it; `first` takes exactly one of \
`before_first` or `is`. Combine several conditions with `all`.";

    NeedsEntry "E019" "needs-entry" Error Value
        "something that looks at one entry, outside a `for_each` rule"
        "`entry`, `followed_by`, `preceded_by` and `{entry.…}` placeholders look at the entry a \
`for_each` rule is visiting; a session rule has none. Add `for_each: SELECTOR` to the rule, or \
test the session with `count`.";

    RuleShape "E020" "rule-shape" Error Value
        "a rule that is not exactly one form"
        "A rule is exactly one of: `script: FILE.rhai`, `native: plugin.function`, `cases: [...]`, \
or a single case (`when` with `points`/`evidence`/`flag`, and optionally `otherwise`, which needs \
a `when`). Script and native rules see the whole session and take no `for_each`; `cases` cannot \
be empty.";

    RuleWithoutDoc "E021" "rule-without-doc" Error Value
        "a rule without a `doc`"
        "Every rule says in `doc` what it checks: `grade rubric show` and explanations print it.";

    Placeholder "E022" "placeholder" Error Value
        "a placeholder in evidence, a flag or `not_applicable` that names nothing"
        "Placeholders are `{count.SELECTOR}`, `{metric.NAME}`, `{percent.NAME}`, `{score}`, and in \
`for_each` rules `{entry.FIELD}` (`{entry.FIELD|fallback}` for a text when it is missing) and \
`{entry.position}`; each must name a declared selector, metric or field. Write `{{` and `}}` \
for literal braces.";

    DimensionShape "E023" "dimension-shape" Error Value
        "a dimension whose range or parts do not fit together"
        "A dimension scored by rules needs a `max` above 0 and at least one rule; `floor` is 0 or \
more and at most `cap`, which is at most `max`. `min` and `categories` belong to judged \
dimensions, and `not_applicable` needs an `applies_when`.";

    Weight "E024" "weight" Error Value
        "a weight that does not fit the pack's scoring"
        "In a pack with `scoring: weighted` every dimension needs a `weight` within 0..=1, and \
`aggregate` names the weighted total; in a points pack `weight` and `aggregate` do not count.";

    JudgedDimension "E025" "judged-dimension" Error Value
        "a judged dimension written wrongly"
        "A judged dimension (`type: numeric` or `type: categorical`) is scored by a judge, so the \
pack needs `scoring: weighted`; it has no rules and no `applies_when`. A numeric one needs \
0 <= `min` < `max`; a categorical one needs `categories` with distinct labels and values of 0 or \
more, and takes its range from them.";

    Judge "E026" "judge" Error Value
        "a judge missing, unneeded or set up wrongly"
        "A pack with judged dimensions needs `judge: { prompt: FILE.prompt.md }`, a template in \
the pack with known placeholders; a pack without them takes no `judge`. `chunk_tokens` is between \
1 and `budget_tokens`, `temperature` between 0 and 2, `max_tokens` at least 1.";

    FractionalPoints "E027" "fractional-points" Error Value
        "points that are not whole in a pack whose scores all are"
        "When every dimension's `max`, `start`, `floor` and `cap` are whole numbers, every score \
of the pack is: a rule giving 0.5 points would make a fraction nobody wrote. Give whole points, \
or make the dimension's range fractional on purpose.";

    Bands "E028" "bands" Error Value
        "score bands out of order or out of range"
        "Bands map a percentage to a letter: list them from the highest `min_percent` down, each \
within 0..=100.";

    ScriptMissing "E030" "script-missing" Error Value
        "a script rule names a file that is not in the pack"
        "`script: FILE.rhai` names a file in the pack folder; the message lists the scripts \
there.";

    ScriptCompile "E031" "script-compile" Error Value
        "a script that does not compile"
        "The Rhai script has a syntax error, or calls a function the engine does not provide. The \
place is in the script file.";

    ScriptDryRun "E032" "script-dry-run" Error Value
        "a script that fails on a made-up session"
        "`grade rubric validate` runs every script once on a made-up session; a script that fails \
there would fail real sessions too (an unknown name, a wrong type, an error thrown). The place is \
in the script file.";

    Plugin "E033" "plugin" Error Value
        "a plugin that cannot be declared, loaded or used"
        "A plugin is declared under `plugins:` with a name, a `path` and the `sha256` of its \
library (`grade rubric pin` records it), and loads only with `--allow-plugins`. A `native:` \
reference names a declared plugin and one of its functions of the right kind.";

    AllowCode "E034" "allow-code" Error Value
        "`allow` names an unknown code or an error"
        "`allow: [W103]` silences warnings by code; an error cannot be silenced, and an unknown \
code is refused so a typo does not silence nothing. `grade rubric explain CODE` describes a code.";

    SourceFormat "E035" "source-format" Error Value
        "`sources` names a format no reader has, or no format"
        "`sources: [cleo-db, cleo-jsonl]` lists the source formats a pack grades, by the names \
`--source-format` takes (`grade --help` lists them; a plugin of the pack may add its own). A \
source of another format is then refused instead of graded by rules that look for entries it \
never has. Leave `sources` out for a pack that grades any source.";

    Limits "E036" "limits" Error Value
        "a limit of `limits` out of its range"
        "`limits: { script_seconds: 30 }` sets the processor time a script run may take, in \
seconds, before what each entry of the session adds (0.001 s an entry); without it a run may \
take 10 s. It must be more than 0 and at most 3600: a pack cannot lift the bound altogether.";

    TrajectoryMetric "E037" "trajectory-metric" Error Value
        "a trajectory metric with an unknown mode, argument matcher or key test"
        "`trajectory_match` takes `mode: strict | unordered | subset | superset`; it and \
`tool_precision`, `tool_recall`, `tool_f1` and `tool_sequence` take `args: exact | ignore | \
contains` and `tools: { NAME: { args: MATCHER } }` or `tools: { NAME: { keys: [KEY, …] } }`, \
where a key may map to `equal`, `{ regex: PATTERN }` (the agent's value is a text the pattern \
finds) or `{ within: N }` (two numbers at most N apart). A name outside these is refused rather \
than read as a default, so a typo never grades with another matcher. Example: \
`tool_f1: { args: contains, tools: { Bash: { keys: { command: { regex: '^cargo ' } } } } }`. \
See docs/trajectories.md.";

    NotText "E040" "not-text" Error Value
        "a session where a test of text meets a value that is not text, or a message prints one JavaScript cannot print"
        "`blank` and a metric's `normalize` steps read text, as the CLEO grader they come from \
does (`description.trim()`, `title.toLowerCase()`). A `blank` test evaluated on a value that is \
truthy and not text (a number other than 0, `true`, an array, an object), or a `normalize`d key \
that is present and not text, has no answer: CLEO's grader throws a `TypeError` there and gives \
the session no grade. `grade` reports that session as not graded, naming the entry, its field and \
its value, grades the other sessions of the run, and exits 1. So does a message that prints a \
field (`{entry.metadata.taskId}`) or a metric `key` without `normalize`, compared as JavaScript \
prints it, when the value is an object with a `toString` key of its own (`{\"toString\": 1}`, \
alone or in a list): JavaScript finds no function to call and throws where CLEO's grader puts it \
in a flag. A test is evaluated only where the \
selector reaches it (`all` stops at its first false, `any` at its first true); a selector \
written in place under `entry`, `followed_by` or `preceded_by` counts only at the entries that \
condition looks at, and a metric reads only the entries of its `of`. To grade such sessions, fix the log, or test the type first: \
`all: [{ field: params.description, type: string }, { field: params.description, blank: true }]`.";

    WeightsSum "W101" "weights-sum" Warning Value
        "the weights of a weighted pack do not sum to 1"
        "The total of a weighted pack is the sum of weight × normalised score: with weights that \
do not sum to 1 it ranges over 0 to their sum, and percentages mislead.";

    ForEachNeverFires "W102" "for-each-never-fires" Warning Value
        "a `for_each` selector that can match no entry"
        "The selector asks for contradictory things (two different domains, success and failure) \
or lists nothing, so the rule never visits an entry.";

    NoOutcome "W103" "no-outcome" Warning Value
        "a rule whose cases give nothing"
        "No case gives points, evidence or a flag, so the rule cannot change a result.";

    UnreachableCase "W104" "unreachable-case" Warning Value
        "a case after one that always applies"
        "Cases are tried in order and the first that holds applies; a case without `when` always \
holds, so the cases after it never apply. Move it last.";

    CaseNeverApplies "W105" "case-never-applies" Warning Value
        "a case whose condition can never hold"
        "Its bounds are empty (`at_least` above `at_most`, `at_most` below 0, a ratio above 1), \
its selector can match no entry, or `any: []`.";

    PassesMax "W106" "passes-max" Warning Value
        "a dimension whose rules can award more than its max"
        "The cap clamps the score, so awards past the max are lost silently; per-entry awards \
(`for_each`) can pass any max. Lower the awards, or raise `max` if the range is meant.";

    NeverReachesMax "W107" "never-reaches-max" Warning Value
        "a dimension whose rules cannot reach its max"
        "The rules give at most less than `max`, so no session can score full marks in this \
dimension and percentages are skewed.";

    ScriptApi "W108" "script-api" Warning Value
        "a script reads a property or calls a method or function the engine does not have"
        "`grade rubric validate` reads each script against the API it runs with: an entry's and \
the session's properties and methods (docs/rubric-packs.md, \"Rhai scripts\"), the functions \
Rhai and the pack's plugins give, and the script's own. A name none of them has (`e.positon` for \
`e.position`, `session.len` for `session.len()`) fails every session that reaches it, which the \
made-up session of the dry run may not. The place is in the script file. A receiver is checked \
where its type is sure: `session`, and variables bound only to entries (`for e in \
session.entries`, `let e = session.first(\"x\")`, a function parameter every call passes an \
entry to).";
}

impl Code {
    /// Whether the code is of a session the pack cannot grade (a valid pack, and the other
    /// sessions graded), not of the pack.
    pub fn is_session_error(self) -> bool {
        matches!(self, Code::NotText)
    }

    /// The code with this id (`E012`, case-insensitive) or name (`unknown-selector`).
    pub fn parse(text: &str) -> Option<Code> {
        let text = text.trim();
        ALL.iter().copied().find(|c| {
            let info = c.info();
            info.id.eq_ignore_ascii_case(text) || info.name.eq_ignore_ascii_case(text)
        })
    }

    /// Codes whose id or name is close to `text`, the closest first: for an unknown code.
    pub fn close_to(text: &str) -> Vec<Code> {
        let text = text.trim().to_ascii_lowercase();
        let mut scored: Vec<(usize, Code)> = ALL
            .iter()
            .map(|&c| {
                let info = c.info();
                let d =
                    distance(&text, &info.id.to_ascii_lowercase()).min(distance(&text, info.name));
                (d, c)
            })
            .filter(|(d, _)| *d <= 2.max(text.len() / 3))
            .collect();
        scored.sort_by_key(|(d, c)| (*d, c.info().id));
        scored.into_iter().map(|(_, c)| c).take(5).collect()
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.info().id)
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.info().id)
    }
}

/// Levenshtein distance, for suggestions (one implementation, in [`crate::text`]).
pub(crate) use crate::text::distance;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_unique_id_name_and_a_doc() {
        let mut ids = std::collections::HashSet::new();
        let mut names = std::collections::HashSet::new();
        for &code in ALL {
            let info = code.info();
            assert_eq!(info.code, code);
            assert!(ids.insert(info.id), "{} is used twice", info.id);
            assert!(names.insert(info.name), "{} is used twice", info.name);
            let prefix = match info.severity {
                Severity::Error => 'E',
                Severity::Warning => 'W',
            };
            assert!(
                info.id.starts_with(prefix) && info.id.len() == 4,
                "{}: an error is `E0xx`, a warning `W1xx`",
                info.id
            );
            assert!(
                !info.summary.is_empty() && !info.summary.ends_with('.'),
                "{}",
                info.id
            );
            assert!(info.doc.len() > 40, "{} needs a doc", info.id);
        }
        let mut sorted: Vec<&str> = ALL.iter().map(|c| c.info().id).collect();
        sorted.sort_unstable();
        assert_eq!(sorted, ALL.iter().map(|c| c.info().id).collect::<Vec<_>>());
    }

    #[test]
    fn codes_are_found_by_id_or_name_and_suggested_when_close() {
        assert_eq!(Code::parse("e012"), Some(Code::UnknownSelector));
        assert_eq!(Code::parse("no-outcome"), Some(Code::NoOutcome));
        assert_eq!(Code::parse("E999"), None);
        assert_eq!(Code::close_to("E12").first(), Some(&Code::UnknownSelector));
        assert_eq!(Code::close_to("unknown-selectr"), [Code::UnknownSelector]);
        assert!(Code::close_to("something else entirely").is_empty());
    }

    /// Every `E0xx`/`W1xx` written in the code (tests aside) and the docs names a registered code.
    #[test]
    fn every_code_written_anywhere_is_registered() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut texts = Vec::new();
        collect(&root.join("engine/src"), &mut texts);
        collect(&root.join("cli/src"), &mut texts);
        collect(&root.join("docs"), &mut texts);
        let known: std::collections::HashSet<&str> = ALL.iter().map(|c| c.info().id).collect();
        let mut seen = 0;
        for (path, text) in &texts {
            let bytes = text.as_bytes();
            for (i, window) in bytes.windows(4).enumerate() {
                let boundary = |at: usize| bytes.get(at).is_none_or(|b| !b.is_ascii_alphanumeric());
                if (window.starts_with(b"E0") || window.starts_with(b"W1"))
                    && window[1..].iter().all(u8::is_ascii_digit)
                    && (i == 0 || boundary(i - 1))
                    && boundary(i + 4)
                {
                    let word = std::str::from_utf8(window).unwrap_or_default();
                    seen += 1;
                    assert!(
                        known.contains(word),
                        "{}: `{word}` is not in the registry",
                        path.display()
                    );
                }
            }
        }
        assert!(seen > ALL.len(), "the scan found the registry itself");
    }

    /// `docs/rubric-packs.md` lists every code with its name and summary.
    #[test]
    fn the_docs_table_lists_every_code() {
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rubric-packs.md"),
        )
        .expect("docs/rubric-packs.md is readable");
        for &code in ALL {
            let info = code.info();
            let row = format!("| {} | {} | ", info.id, info.name);
            assert!(
                docs.contains(&row),
                "docs/rubric-packs.md has no row `{row}`"
            );
        }
    }

    fn collect(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        let Ok(listing) = std::fs::read_dir(dir) else {
            return;
        };
        for item in listing.flatten() {
            let path = item.path();
            if path.is_dir() {
                collect(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
                if let Ok(mut text) = std::fs::read_to_string(&path) {
                    // Tests name unknown codes on purpose.
                    if let Some(at) = text.find("#[cfg(test)]") {
                        text.truncate(at);
                    }
                    out.push((path, text));
                }
            }
        }
    }
}
