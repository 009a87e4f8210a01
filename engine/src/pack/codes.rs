//! The registry of diagnostic codes: every error and warning `grade` reports has one, stable
//! across releases, with a short doc (`grade explain CODE` prints it).
//!
//! The hundreds say whose problem it is ([`Scope`]). `E0xx` are the pack's: it cannot be
//! used, or, from `E040` on, a session the pack cannot grade (the other sessions of a run
//! still are). `E1xx` are a source's: it cannot be read ([`crate::SourceError`]). `E2xx` are
//! the command's: its arguments, the files it reads and writes, the services it calls (the
//! binary's errors). Warnings are `W1xx`: lints of a pack that works but is probably not what
//! its author meant; a pack silences one with `allow: [W103]` in `rubric.yaml`. A code is
//! never reused for another meaning; a retired code stays in the registry with its doc.

use super::Severity;

/// Which part of a `key: value` pair a problem points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The key: a key that should not be there, or a name declared twice.
    Key,
    /// The value: what was written for the key.
    Value,
}

/// Whose problem a code is, by its hundreds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The `E0xx` below `E040`, and the warnings: the pack as written.
    Pack,
    /// From `E040` to the hundreds: one session the pack cannot grade; the other sessions are graded.
    Session,
    /// `E1xx`: a source that cannot be read.
    Source,
    /// `E2xx`: the command itself, the files it reads and writes, the services it calls.
    Command,
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

    UnknownRubric "E007" "unknown-rubric" Error Value
        "`--rubric` names no shipped pack, no pack of the search path and no folder"
        "`--rubric` takes the id of a shipped pack (`grade rubric list` lists them with the packs \
of `--rubric-path` and `GRADE_RUBRIC_PATH`) or the path of a pack folder. The message lists the \
shipped ids; a path is taken as one only when the folder exists.";

    PackUnreadable "E008" "pack-unreadable" Error Value
        "a file of the pack cannot be read"
        "`rubric.yaml`, a script, a prompt template or a plugin's library could not be read: \
the message gives the file and what the system said (permission denied, not a file). A pack \
is read whole before anything is graded.";

    PackFileRefused "E009" "pack-file-refused" Error Value
        "a file of the pack leads out of its folder, or is too large to be one"
        "A pack reads only its own files: a link that leads out of the pack folder is refused, \
so a pack copied from elsewhere cannot read files beside it. A pack file larger than 16 MiB is \
refused too: no rubric, script or template is that large, and reading it whole would cost the \
memory of a run.";

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
code is refused so a typo does not silence nothing. `grade explain CODE` describes a code.";

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

    NoJudgment "E041" "no-judgment" Error Value
        "a session of a pack with judged dimensions, and no judgment for it"
        "A judged dimension takes its score from a judge. Give the run one: `--judgment FILE` \
(the scores, as JSON), `--judge PROVIDER:MODEL` (a model asked per session) or \
`--judge-cmd CMD` (a command that gets the prompt on stdin and prints the scores). \
`grade rubric judgment-schema ID` prints the shape a judgment has.";

    ScriptFailed "E042" "script-failed" Error Value
        "a session on which a rule's script failed"
        "The pack's Rhai script threw an error, met a value of a type it did not expect, or ran \
past the pack's bounds (`limits: { script_seconds }`, its operations and memory) on this \
session. The message names the rule and what Rhai said; the session gets no grade rather than \
a score the rule never gave. Fix the script (`grade rubric test` runs it on fixtures), or fix \
the log.";

    PointsOverflow "E043" "points-overflow" Error Value
        "a session whose points add up to a number no grade can hold"
        "The rules of a dimension gave points that add up to infinity or not a number, which no \
result can record: clamped to the cap, the grade would say nothing true. It comes from scaled \
points, a metric's value times a `times` so large that the product overflows. Lower `times`.";

    PluginFailed "E044" "plugin-failed" Error Value
        "a session on which a plugin's function failed"
        "A native rule or metric of a plugin returned an error or panicked on this session. The \
message names the function and what it said; the session gets no grade, and the other sessions \
of the run are graded. The plugin's author can say what the message means.";

    SourceUnreadable "E101" "source-unreadable" Error Value
        "a source file that cannot be read"
        "The file given to `--source` (or found in its folder or glob) does not exist or cannot \
be read: the message gives what the system said. A CLEO project's default source is \
`.cleo/tasks.db`, relative to the folder `grade` runs in.";

    UnknownFormat "E102" "unknown-format" Error Value
        "a source no reader recognises"
        "Without `--source-format`, `grade` tells a source's format from its content. No reader \
recognised this one: the message lists the formats tried and why the likeliest refused it. \
Give `--source-format FORMAT` to read it as one format and see that reader's complaint, and \
see docs/sources.md for what each format looks like.";

    BadLine "E103" "bad-line" Error Value
        "a line of a source that its format cannot read"
        "A line of a JSON or JSON-lines source is not what its format writes: not JSON, a value \
of the wrong type, a record missing what the format needs. The place is the file and its line. \
A malformed line of a CLEO audit log is E104, which `--skip-bad-lines` skips.";

    MalformedLine "E104" "malformed-line" Error Value
        "a malformed line of a CLEO audit log"
        "A line of a JSONL audit log is not an audit entry (not JSON, or without the fields an \
entry has). By default the first one stops the run, since a session that lost an entry is \
graded wrong; `--skip-bad-lines` skips each with a warning naming it, and results say how many \
lines their session lost.";

    NotCleoDb "E105" "not-cleo-db" Error Value
        "a database that is not a CLEO `tasks.db`"
        "The file is not an SQLite database, or one without CLEO's `audit_log` table. CLEO keeps \
its database at `.cleo/tasks.db`; a JSON-lines export of the audit log is read as `cleo-jsonl`.";

    OldCleoDb "E106" "old-cleo-db" Error Value
        "a `tasks.db` written by a CLEO too old to record sessions"
        "The `audit_log` table lacks the dispatch columns (`session_id`, `domain`, `operation`…) \
that the 2026-02-27 migration of CLEO added: the database records no sessions to grade. Run a \
newer CLEO on the project, which migrates it.";

    BadRow "E107" "bad-row" Error Value
        "a row of `audit_log` that is not an audit entry"
        "A row of the CLEO database has a value no CLEO writes there (a column of the wrong type, \
`params` that are not a JSON object). The message names the row by its id.";

    Sqlite "E108" "sqlite" Error Value
        "SQLite could not query the database"
        "SQLite refused a query on the CLEO database: a damaged file (`disk image is malformed`), \
a file that shrank while it was read, or a database of a newer SQLite. The message gives \
SQLite's words; `sqlite3 FILE 'PRAGMA integrity_check'` tells whether the file is damaged.";

    Locked "E109" "locked" Error Value
        "a database another process is writing"
        "Another process (CLEO itself) holds a write lock on the database. `grade` only reads, \
and reading during a write could see half of it: run again when the write has finished.";

    HotJournal "E110" "hot-journal" Error Value
        "a database with the journal of a write that did not finish"
        "A rollback journal (`tasks.db-journal`) beside the database holds a write that did not \
finish (CLEO was killed). Reading the database as it is would read half a write, and rolling \
the write back would change a file `grade` was asked only to read: open it once with `sqlite3` \
(or let CLEO run), which rolls it back, then grade again.";

    NotLangfuse "E111" "not-langfuse" Error Value
        "a file read as a Langfuse trace that is not one"
        "A Langfuse trace file is the JSON the Langfuse API returns for a trace (an object with \
`id` and `observations`), or an array or `{\"data\": [...]}` of them. The message says what \
the file holds instead.";

    FolderNotClaudeCode "E112" "folder-not-claude-code" Error Value
        "a folder given as a source of a format that reads files"
        "A folder is read as a Claude Code project folder, or, without `--source-format`, as \
every file in it of a format `grade` reads. With `--source-format` of another format, give a \
file, or a glob (`'logs/*.jsonl'`).";

    SourceInvalid "E113" "source-invalid" Error Value
        "a source its format cannot read as a whole"
        "The file is of a format `grade` reads (an ATIF trajectory, an inspect_ai log, an \
OpenTelemetry export…), and its content breaks that format: the message says what is wrong. \
docs/sources.md names the code that defines each format.";

    EmptyFolder "E114" "empty-folder" Error Value
        "a Claude Code project folder without transcripts"
        "A Claude Code project folder (`~/.claude/projects/NAME`) holds one `*.jsonl` transcript \
a session; this one holds none. Check the folder's name, or give a transcript file.";

    NoSourceFiles "E115" "no-source-files" Error Value
        "a folder or glob that finds no source file"
        "A folder or a glob given to `--source` is read as every file in it of a format the run \
reads (the message lists the names looked for). It found none: check the pattern (quote it, \
`--source 'logs/*.jsonl'`, so the shell does not expand it) or the folder.";

    DuplicateSession "E116" "duplicate-session" Error Value
        "one session id in two files of one run"
        "A run of several sources grades each session once, by its id. Two files hold a \
session of the same id: which to grade cannot be told, and grading both would record two \
grades for one id. Give one of the files, or run `grade` on each.";

    FormatNotGraded "E117" "format-not-graded" Error Value
        "a source of a format the pack does not grade"
        "The pack lists the formats it grades under `sources:` in `rubric.yaml`, and the source \
is of another: its rules look for entries such a source never has, and would grade it wrong. \
The message names the built-in packs that grade the format; use one of them.";

    PluginSource "E118" "plugin-source" Error Value
        "a plugin's source format could not read the file"
        "A plugin of the pack reads this format, and it refused the file: the message gives the \
plugin, the place and what it said. The plugin's author can say what the message means.";

    Usage "E201" "usage" Error Value
        "flags, arguments or values that do not fit together"
        "The command line asks for something `grade` cannot do as given: a flag that needs \
another, two that exclude each other, a value out of its range, a session id without a source. \
The message says which; `grade --help` (or `grade COMMAND --help`) lists the flags.";

    CheckFailed "E202" "check-failed" Error Value
        "a check the command was asked to make failed"
        "The command ran, and what it was asked to check did not hold: a session could not be \
graded, a score is under `--fail-under`, a pack's tests failed or covered too little. The \
output above says what failed; the command exits 1, as a failed check does, not 2.";

    PackTest "E203" "pack-test" Error Value
        "a pack's tests that cannot be run"
        "`grade rubric test` runs a pack's fixtures (`tests/NAME.jsonl` beside \
`tests/NAME.expected.jsonl`). A file of the tests could not be read, a judgments file is not \
an object of judgments, or a session of a fixture has no judgment: the message says which.";

    GradesWrite "E204" "grades-write" Error Value
        "the grades file cannot be written"
        "Results are appended to the grades file (`.cleo/metrics/GRADES.jsonl` for a CLEO source, \
or `--grades FILE`) once they are out. It could not be opened or written: the message gives \
the file and what the system said. `--no-record` grades without recording.";

    GradesUnreadable "E205" "grades-unreadable" Error Value
        "a grades file or results file that cannot be read"
        "`grade --list`, `compare`, `report` and `calibrate` read recorded results. The file \
does not exist or cannot be read: the message gives what the system said.";

    GradesLine "E206" "grades-line" Error Value
        "a line of a grades file that is not a result"
        "A line of a grades or results file is not a grade result as `grade` writes it (not \
JSON, or without `sessionId`, `rubric` and scores). The place is the file and its line.";

    FileAccess "E207" "file-access" Error Value
        "a file or folder the command needs cannot be read or written"
        "A file the command reads (labels, a pack folder to create, a judgment) or writes (an \
HTML page, a new pack) could not be used: the message gives the path and what the system said.";

    JudgmentInvalid "E208" "judgment-invalid" Error Value
        "a judgment that does not fit the pack's judged dimensions"
        "A judgment (from `--judgment FILE`, a judge or a `--judge-cmd`) is a JSON object with a \
score for each judged dimension of the pack, or an array of them, one per chunk. It is not \
JSON, not of that shape, or a score is out of its dimension's range: the message lists every \
problem. `grade rubric judgment-schema ID` prints the schema.";

    ReferenceInvalid "E209" "reference-invalid" Error Value
        "a reference file that cannot be read or used"
        "`--reference FILE` is JSON lines, one \
`{\"sessionId\": …, \"toolCalls\": [{\"name\": …, \"args\": {…}}]}` (or OpenAI-style \
`messages`) a session, for the pack's trajectory metrics. The file cannot be read, is too \
large, or lines of it are not references: the message lists them.";

    JudgeFailed "E210" "judge-failed" Error Value
        "a judge that could not give a judgment"
        "A `--judge` model or a `--judge-cmd` command was asked for a judgment and did not give \
one: the request failed after its attempts, the command exited with an error or ran past \
`--judge-timeout`, or its reply was not a judgment. The message says which, with what the \
judge said.";

    PushFailed "E211" "push-failed" Error Value
        "scores that could not be sent to Langfuse"
        "`grade push` (or `--push langfuse`) sends score bodies to the Langfuse API at \
`LANGFUSE_BASE_URL` with `LANGFUSE_PUBLIC_KEY` and `LANGFUSE_SECRET_KEY`. A setting is \
missing, the server could not be reached, or it refused scores: the message says which.";

    Mcp "E212" "mcp" Error Value
        "the MCP server could not start or lost its client"
        "`grade mcp` serves tools over standard input and output. It could not start, or the \
connection to its client broke (the client closed the pipe mid-message, or wrote what is not \
JSON-RPC).";

    RemoteSource "E213" "remote-source" Error Value
        "a source read from the Langfuse API that could not be read"
        "`--source langfuse:session/ID` or `langfuse:trace/ID` reads traces from the Langfuse \
API at `LANGFUSE_BASE_URL` with `LANGFUSE_PUBLIC_KEY` and `LANGFUSE_SECRET_KEY`. A setting is \
missing, the server could not be reached, or it answered with an error: the message says which.";

    OutputWrite "E214" "output-write" Error Value
        "an output file that cannot be written"
        "The file of `--output`, `--html` or another output flag could not be created or \
written (a folder that does not exist, no permission, a full disk). Nothing is recorded in the \
grades file for results nobody could read.";

    StdoutWrite "E215" "stdout-write" Error Value
        "standard output that cannot be written"
        "Writing the results to standard output failed (a full disk behind a redirection). A \
reader that closes the pipe (`grade … | head`) is not an error: the run ends quietly. Nothing \
is recorded for results nobody could read.";

    Held "E216" "held-results" Error Value
        "results that could not be held in a temporary file"
        "A run that writes its results only once the source has been read whole keeps them in a \
temporary file meanwhile. It could not be created or written in the temporary folder: set \
`TMPDIR` to a folder with room.";

    Serialise "E217" "serialise" Error Value
        "a result that cannot be written as JSON"
        "JSON output failed to serialise a value. No result of `grade` has a value JSON cannot \
hold, so this is a bug of `grade`: please report it with the command that raised it.";

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
    /// Whose problem the code is, from its id's hundreds.
    pub fn scope(self) -> Scope {
        let id = self.info().id;
        match (id.as_bytes().first(), id.get(1..)) {
            (Some(b'E'), Some(n)) if n >= "200" => Scope::Command,
            (Some(b'E'), Some(n)) if n >= "100" => Scope::Source,
            (Some(b'E'), Some(n)) if n >= "040" => Scope::Session,
            _ => Scope::Pack,
        }
    }

    /// Whether the code is of a session the pack cannot grade (a valid pack, and the other
    /// sessions graded), not of the pack.
    pub(crate) fn is_session_error(self) -> bool {
        self.scope() == Scope::Session
    }

    /// The code of a source error (`E1xx`), as `error[CODE]: …` shows it. It is kept here,
    /// not in `source`: the registry of codes is a layer above the sources.
    pub fn of_source_error(err: &crate::source::SourceError) -> Code {
        use crate::source::SourceError;
        match err {
            SourceError::Io { .. } => Code::SourceUnreadable,
            SourceError::UnknownFormat { .. } => Code::UnknownFormat,
            SourceError::BadLine { .. } => Code::BadLine,
            SourceError::MalformedLine { .. } => Code::MalformedLine,
            SourceError::NotCleoDb { .. } => Code::NotCleoDb,
            SourceError::MissingDispatchColumns { .. } => Code::OldCleoDb,
            SourceError::BadRow { .. } => Code::BadRow,
            SourceError::Sqlite { .. } => Code::Sqlite,
            SourceError::Locked { .. } => Code::Locked,
            SourceError::HotJournal { .. } => Code::HotJournal,
            SourceError::NotLangfuse { .. } => Code::NotLangfuse,
            SourceError::FolderNotClaudeCode { .. } => Code::FolderNotClaudeCode,
            SourceError::Format { .. } => Code::SourceInvalid,
            SourceError::EmptyFolder { .. } => Code::EmptyFolder,
            SourceError::NoSourceFiles { .. } => Code::NoSourceFiles,
            SourceError::DuplicateSession { .. } => Code::DuplicateSession,
            SourceError::NotGraded(_) => Code::FormatNotGraded,
            SourceError::Plugin { .. } => Code::PluginSource,
        }
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
        Code::close_to_where(text, |_| true)
    }

    /// Codes `keep` keeps whose id or name is close to `text`, the closest first (the
    /// warnings, for `allow`).
    pub(crate) fn close_to_where(text: &str, keep: impl Fn(Code) -> bool) -> Vec<Code> {
        let text = text.trim().to_ascii_lowercase();
        let mut scored: Vec<(usize, Code)> = ALL
            .iter()
            .filter(|&&c| keep(c))
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
mod tests;
