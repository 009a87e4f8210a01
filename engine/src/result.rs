//! The grade of one session: a superset of CLEO's `GradeResult`.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize, Serializer};

/// A score: printed as an integer when it is one, so CLEO-shaped results stay byte-identical.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Deserialize)]
#[serde(transparent)]
pub struct Score(pub f64);

impl Serialize for Score {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::entry::with_js_number(self.0, |text| f.write_str(text))
    }
}

/// The grade of one session by one pack, as `grade --format json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GradeResult {
    /// The graded session.
    pub session_id: String,
    /// The CLEO task the session worked on, when its entries name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Points scored (or the weighted total of a weighted pack).
    pub total_score: Score,
    /// The most points the session could score.
    pub max_score: Score,
    /// Each dimension's score, in the pack's order.
    pub dimensions: IndexMap<String, DimensionScore>,
    /// Flags the rules raised, in order.
    pub flags: Vec<String>,
    /// When the grade was made (ISO-8601, milliseconds, UTC).
    pub timestamp: String,
    /// How many entries the session has.
    pub entry_count: usize,
    /// Lines of the source skipped as malformed that were (or may have been) this session's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_lines: u64,
    /// The file the session was read from, when the run read several files (a folder, a
    /// glob, `--source` given more than once); absent when it read one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// What made the grade (`grade-engine` and its version).
    pub evaluator: String,
    /// The pack that graded the session.
    pub rubric: RubricRef,
    /// `totalScore / maxScore` as a percentage, rounded to two decimals; `null` when no
    /// dimension applied and there was nothing to grade (`maxScore` 0): no score, which a
    /// mean must leave out rather than count as 0.
    pub percent: Option<Score>,
    /// The letter of the pack's band the percentage reaches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade: Option<String>,
    /// What asking a built-in judge cost, when one was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<crate::judgment::JudgeUsage>,
    /// The panel of judges that judged the session, when several did (`judge` is then
    /// absent): how their scores combined, and what each judge cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panel: Option<crate::judgment::PanelUsage>,
    /// Why each point was given or taken; only with `--explain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<IndexMap<String, Vec<RuleTrace>>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The score of one dimension.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DimensionScore {
    /// Points scored in the dimension.
    pub score: Score,
    /// The dimension's maximum.
    pub max: Score,
    /// Why the dimension scored what it did, one line each.
    pub evidence: Vec<String>,
    /// A categorical dimension's category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// In a weighted pack: the score on 0–1 (`(score - min) / (max - min)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalized: Option<f64>,
    /// In a weighted pack: the dimension's share of the total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// A judged dimension: why the judge gave this score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// A judged dimension asked several times: how far the scores that made `score`
    /// spread, the panel's judges' when a panel judged (each judge's runs are in its
    /// `panel` entry), else the runs' (`--judge-runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<crate::judgment::Spread>,
    /// A judged dimension scored by a panel: each judge's own score, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub panel: Vec<PanelMember>,
    /// The session gave the dimension nothing to judge (its `applies_when` did not hold):
    /// its score is 0, its evidence says why, and neither it nor its `max` counts in the
    /// result's `totalScore` and `maxScore`.
    #[serde(
        rename = "notApplicable",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub not_applicable: bool,
    /// Which of the result's `flags` the dimension's rules raised (their indices there),
    /// so a report can show each dimension's reasons under it. Not in the JSON, which keeps
    /// CLEO's one list of flags: a result read back from JSON has none (`0..0`), and its
    /// flags belong to no dimension. See [`GradeResult::flags_of`].
    #[serde(skip)]
    pub flags: std::ops::Range<usize>,
}

/// One judge of a panel on one dimension, in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PanelMember {
    /// The judge (`openai:MODEL`, a command), as in the result's `panel.judges`.
    pub judge: String,
    /// Its score, before the panel's scores combined.
    pub score: Score,
    /// Its evidence.
    pub evidence: Vec<String>,
    /// Its rationale.
    pub rationale: String,
    /// How far its runs spread, when it was asked several times (`--judge-runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<crate::judgment::Spread>,
}

/// Names exactly what graded a result: the pack, its version, and a digest of its files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricRef {
    /// The pack's id.
    pub id: String,
    /// The pack's version.
    pub version: String,
    /// `sha256:` and the digest of the pack's files (and plugins).
    pub digest: String,
}

/// What one rule did to a dimension, and the entries behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleTrace {
    /// The rule (or the dimension's own term, such as `(start)`).
    pub rule: String,
    /// Points the rule gave (negative when it took).
    pub points: Score,
    /// The rule's evidence lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// The flags the rule raised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The entries behind the points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<EntryRef>,
    /// For each trajectory metric the rule reads, which of the agent's calls matched which
    /// reference call, and which were missed or extra.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trajectories: Vec<TrajectoryTrace>,
}

/// What a trajectory metric paired in one session (`--explain`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrajectoryTrace {
    /// The metric's name in the pack.
    pub metric: String,
    /// Its value for the session.
    pub value: Score,
    /// Each agent call and the reference call it was paired with.
    pub matched: Vec<MatchedCall>,
    /// The reference calls no agent call was paired with.
    pub missed: Vec<ReferenceCall>,
    /// The agent calls paired with no reference call.
    pub extra: Vec<EntryRef>,
}

/// An agent call paired with a reference call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedCall {
    /// The agent's call.
    pub agent: EntryRef,
    /// The reference call it matched.
    pub reference: ReferenceCall,
}

/// A call of the reference trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceCall {
    /// 1-based place of the call in the reference.
    pub position: usize,
    /// The tool's name.
    pub name: String,
}

/// An entry a rule's points rest on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryRef {
    /// 1-based place of the entry in its session.
    pub position: usize,
    /// The entry's timestamp, as the source spelled it.
    pub timestamp: String,
    /// The entry's operation (`domain.operation` for CLEO entries).
    pub operation: String,
    /// The file the entry was read from, when the source says: a transcript, a CLEO audit
    /// log or `tasks.db`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The entry's line in `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// A database entry's row id (`tasks.db`'s `rowid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_id: Option<u64>,
    /// A transcript tool call's `tool_use` id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// `#15 (FILE:25, toolu_…)`: how evidence names the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

impl GradeResult {
    /// The percentage of a result graded out of more than 0 points; `None` when no
    /// dimension applied and there was nothing to grade (summaries and gates leave it out;
    /// a grade recorded before `percent` was `null` for it says 0 there).
    pub fn graded_percent(&self) -> Option<f64> {
        self.percent.filter(|_| self.max_score.0 > 0.0).map(|p| p.0)
    }

    /// What a letter stands on when some dimensions did not apply: `on 1 of 5 dimensions`
    /// (an A on one dimension is not an A on the whole rubric); `None` when all applied.
    pub fn applied_note(&self) -> Option<String> {
        let (applied, all) = self.dimensions_applied();
        let plural = if all == 1 { "" } else { "s" };
        (applied < all).then(|| format!("on {applied} of {all} dimension{plural}"))
    }

    /// The flags `dimension`'s rules raised, in order; empty for a dimension the result does
    /// not have, one that raised none, or a result read back from JSON.
    pub fn flags_of(&self, dimension: &str) -> &[String] {
        self.dimensions
            .get(dimension)
            .and_then(|d| self.flags.get(d.flags.clone()))
            .unwrap_or_default()
    }

    /// The flags no dimension raised (the flag of a session with no entries), and all of
    /// them for a result read back from JSON, in order.
    pub fn flags_of_no_dimension(&self) -> impl Iterator<Item = &String> {
        self.flags.iter().enumerate().filter_map(|(i, f)| {
            (!self.dimensions.values().any(|d| d.flags.contains(&i))).then_some(f)
        })
    }

    /// How many of the result's dimensions applied to the session, of how many.
    pub(crate) fn dimensions_applied(&self) -> (usize, usize) {
        let all = self.dimensions.len();
        let skipped = self
            .dimensions
            .values()
            .filter(|d| d.not_applicable)
            .count();
        (all - skipped, all)
    }

    /// Appends the result as one line of compact JSON and a newline, byte for byte what
    /// `serde_json::to_writer` and a `\n` write. By hand because serde's general path was
    /// 6% of grading the bench log (15 instructions a byte of a cleo-v1 line, most of them
    /// escaping strings one byte at a time); the rare parts (`judge`, `explain`, a score with
    /// a fraction) still go through serde_json.
    pub fn write_json_line(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        self.write_json(out, true)?;
        out.push(b'\n');
        Ok(())
    }

    /// The line of [`GradeResult::write_json_line`] without `explain`, as the grades file
    /// records a result.
    pub(crate) fn write_json_line_unexplained(
        &self,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        self.write_json(out, false)?;
        out.push(b'\n');
        Ok(())
    }

    fn write_json(&self, out: &mut Vec<u8>, with_explain: bool) -> Result<(), serde_json::Error> {
        // Every field is named, so a field added to the result fails to compile here rather
        // than go missing from the line.
        let GradeResult {
            session_id,
            task_id,
            total_score,
            max_score,
            dimensions,
            flags,
            timestamp,
            entry_count,
            skipped_lines,
            source,
            evaluator,
            rubric,
            percent,
            grade,
            judge,
            panel,
            explain,
        } = self;
        // About a cleo-v1 line, so that it is not regrown as it is written.
        out.reserve(1024);
        let mut w = Writer { out };
        w.raw("{\"sessionId\":");
        w.str(session_id);
        if let Some(task_id) = task_id {
            w.raw(",\"taskId\":");
            w.str(task_id);
        }
        w.raw(",\"totalScore\":");
        w.score(*total_score)?;
        w.raw(",\"maxScore\":");
        w.score(*max_score)?;
        w.raw(",\"dimensions\":");
        w.out.push(b'{');
        for (i, (id, dimension)) in dimensions.iter().enumerate() {
            if i > 0 {
                w.out.push(b',');
            }
            w.str(id);
            w.out.push(b':');
            w.dimension(dimension)?;
        }
        w.out.push(b'}');
        w.raw(",\"flags\":");
        w.strs(flags);
        w.raw(",\"timestamp\":");
        w.str(timestamp);
        w.raw(",\"entryCount\":");
        w.int(*entry_count as u64);
        if *skipped_lines != 0 {
            w.raw(",\"skippedLines\":");
            w.int(*skipped_lines);
        }
        if let Some(source) = source {
            w.raw(",\"source\":");
            w.str(source);
        }
        w.raw(",\"evaluator\":");
        w.str(evaluator);
        let RubricRef {
            id,
            version,
            digest,
        } = rubric;
        w.raw(",\"rubric\":{\"id\":");
        w.str(id);
        w.raw(",\"version\":");
        w.str(version);
        w.raw(",\"digest\":");
        w.str(digest);
        w.out.push(b'}');
        w.raw(",\"percent\":");
        match percent {
            Some(percent) => w.score(*percent)?,
            None => w.raw("null"),
        }
        if let Some(grade) = grade {
            w.raw(",\"grade\":");
            w.str(grade);
        }
        if let Some(judge) = judge {
            w.raw(",\"judge\":");
            w.serde(judge)?;
        }
        if let Some(panel) = panel {
            w.raw(",\"panel\":");
            w.serde(panel)?;
        }
        if let (Some(explain), true) = (explain, with_explain) {
            w.raw(",\"explain\":");
            w.serde(explain)?;
        }
        w.out.push(b'}');
        Ok(())
    }
}

/// The pieces of a result line.
struct Writer<'o> {
    out: &'o mut Vec<u8>,
}

impl Writer<'_> {
    /// Text as it is: an object's opening and first key (`{"score":`) or a later key
    /// (`,"max":`), each one literal. The keys are the result's field names, which need no
    /// escaping; written in one piece, not three (a call to `memcpy` each).
    fn raw(&mut self, text: &str) {
        self.out.extend_from_slice(text.as_bytes());
    }

    fn str(&mut self, text: &str) {
        crate::json::write_str(self.out, text);
    }

    fn strs(&mut self, texts: &[String]) {
        self.out.push(b'[');
        for (i, text) in texts.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.str(text);
        }
        self.out.push(b']');
    }

    fn int(&mut self, n: u64) {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    /// As [`Score`]'s `Serialize` writes it: an integer when it is one.
    fn score(&mut self, score: Score) -> Result<(), serde_json::Error> {
        let v = score.0;
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            self.out
                .extend_from_slice(itoa::Buffer::new().format(v as i64).as_bytes());
            Ok(())
        } else {
            self.serde(&v)
        }
    }

    fn serde<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        serde_json::to_writer(&mut *self.out, value)
    }

    fn dimension(&mut self, d: &DimensionScore) -> Result<(), serde_json::Error> {
        let DimensionScore {
            score,
            max,
            evidence,
            label,
            normalized,
            weight,
            rationale,
            spread,
            panel,
            not_applicable,
            // Not part of the line: CLEO's result has one list of flags.
            flags: _,
        } = d;
        self.raw("{\"score\":");
        self.score(*score)?;
        self.raw(",\"max\":");
        self.score(*max)?;
        self.raw(",\"evidence\":");
        self.strs(evidence);
        if let Some(label) = label {
            self.raw(",\"label\":");
            self.str(label);
        }
        if let Some(normalized) = normalized {
            self.raw(",\"normalized\":");
            self.serde(normalized)?;
        }
        if let Some(weight) = weight {
            self.raw(",\"weight\":");
            self.serde(weight)?;
        }
        if let Some(rationale) = rationale {
            self.raw(",\"rationale\":");
            self.str(rationale);
        }
        if let Some(spread) = spread {
            self.raw(",\"spread\":");
            self.serde(spread)?;
        }
        if !panel.is_empty() {
            self.raw(",\"panel\":");
            self.serde(panel)?;
        }
        if *not_applicable {
            self.raw(",\"notApplicable\":");
            self.out.extend_from_slice(b"true");
        }
        self.out.push(b'}');
        Ok(())
    }
}

/// `percent` rounded to two decimals, half up.
pub fn percent_of(total: f64, max: f64) -> f64 {
    if max <= 0.0 {
        return 0.0;
    }
    crate::entry::round_half_up(total / max * 10_000.0) / 100.0
}

/// The JSON values of JSON-lines text (expectations) with their 1-based line numbers; blank
/// lines are skipped, and the first line that is not JSON, or holds a lone UTF-16 surrogate,
/// is the error, with its number.
pub(crate) fn parse_json_lines(
    text: &str,
) -> Result<Vec<(usize, serde_json::Value)>, (usize, serde_json::Error)> {
    map_json_lines(
        text,
        |n, value, lone| match lone {
            false => Ok(Some((n, value))),
            // serde_json's own refusal of the line, found again off the hot path.
            true => Err((n, strict_error(text, n))),
        },
        |n, e| (n, e),
    )
}

#[cold]
fn strict_error(text: &str, n: usize) -> serde_json::Error {
    let line = text.lines().nth(n.saturating_sub(1)).unwrap_or_default();
    match serde_json::from_str::<serde_json::Value>(line) {
        Err(e) => e,
        Ok(_) => serde::de::Error::custom("the line holds a lone UTF-16 surrogate"),
    }
}

/// What `keep` makes of each line of JSON-lines text, for the lines it keeps, in order: the
/// line's 1-based number, its JSON value and whether it held a lone UTF-16 surrogate go in,
/// `Ok(None)` drops the line. Blank lines are skipped; a line that is not JSON is `not_json`'s
/// error. The error returned is the first failing line's, of either kind, as reading the
/// lines in order would find it.
///
/// A lone surrogate (`\ud83d` without its other half) is JSON, and JavaScript's
/// `JSON.stringify` writes one for a string cut inside a character (CLEO's grades file can
/// hold one); text cannot hold it, so the value has U+FFFD in its place, and `keep` is told.
/// [`lone_surrogates_warning`] words the warning.
///
/// A grades file gains a line per session graded, and never shrinks: a caller that keeps
/// what it needs of each value (a row of a table, a line of output) holds that, not a tree
/// of every line (8 times the file's size).
pub fn map_json_lines<T, E>(
    text: &str,
    keep: impl Fn(usize, serde_json::Value, bool) -> Result<Option<T>, E> + Sync,
    not_json: impl Fn(usize, serde_json::Error) -> E + Sync,
) -> Result<Vec<T>, E>
where
    T: Send,
    E: Send,
{
    use rayon::prelude::*;
    // Parsed on every core (`grade --list` read 50,000 recorded grades in 0.5 s on one).
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| (n + 1, line))
        .collect();
    // Errors boxed, so that a slot per line costs what a kept value does.
    let kept: Vec<Result<Option<T>, Box<E>>> = lines
        .par_iter()
        .map(|&(n, line)| match read_json_line(line) {
            Ok((value, lone)) => keep(n, value, lone).map_err(Box::new),
            Err(e) => Err(Box::new(not_json(n, e))),
        })
        .collect();
    kept.into_iter()
        .filter_map(Result::transpose)
        .collect::<Result<_, _>>()
        .map_err(|e| *e)
}

/// One line of JSON as [`map_json_lines`] reads it: its value, and whether it held a lone
/// UTF-16 surrogate, read as U+FFFD.
pub(crate) fn read_json_line(line: &str) -> Result<(serde_json::Value, bool), serde_json::Error> {
    crate::json::from_slice_lenient(line.as_bytes())
}

/// The warning for `lines` lines that [`map_json_lines`] read with U+FFFD for a lone
/// surrogate, as a source's reader words it.
pub fn lone_surrogates_warning(lines: u64) -> String {
    crate::json::lone_surrogates_read(lines, "line")
}

#[cfg(test)]
mod tests;
