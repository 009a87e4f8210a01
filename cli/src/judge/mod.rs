//! Asking a judge for the judgments of a batch of sessions: a command (`--judge-cmd`) or a
//! built-in model client (`--judge anthropic:MODEL`, `--judge openai:MODEL`).
//!
//! Every session is rendered into its scorer prompts (one per chunk); each prompt is asked
//! `--judge-runs` times; up to `--judge-jobs` requests run at once, and the results keep
//! the order of the sessions whatever order the answers come in. Each reply must hold a
//! valid judgment object (bare, in a fenced ```json block, or the one JSON object in its
//! prose); the chunks of a run aggregate as a `--judgment` array does, and the runs combine
//! into one judgment ([`grade_engine::judgment::combine_runs`]). Model replies are kept in
//! the judgment cache ([`cache`]) unless `--no-judge-cache`.

pub mod cache;
mod cmd;
mod judgments;
pub mod model;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use grade_engine::judgment::{
    combine_runs, find_judgment_json, parse_judgment, quote_start, JudgeUsage, Judgment, ReplyError,
};
use grade_engine::pack::PanelCombine;
use grade_engine::{CompiledPack, Session};
use serde_json::Value;

use crate::error::CliError;
use crate::http::Retry;
use cache::{Cache, Cached};
use model::{ModelJudge, Provider};

pub(crate) use judgments::{judgments, print_prompts};

/// Who is asked.
#[derive(Debug, Clone)]
pub enum Judge {
    Command(String),
    Model(ModelJudge),
}

impl Judge {
    /// `anthropic:MODEL` or `openai:MODEL`, optionally with `,temperature=T` and
    /// `,max_tokens=N`, with the provider's environment.
    pub fn model(spec: &str) -> Result<Judge, CliError> {
        let parsed = parse_spec(spec).map_err(CliError::Usage)?;
        ModelJudge::from_env(parsed.provider, parsed.model)
            .map(|mut m| {
                m.temperature = parsed.temperature;
                m.max_tokens = parsed.max_tokens;
                Judge::Model(m)
            })
            .map_err(CliError::Usage)
    }

    /// How the judge is named in messages, results and cache keys: the command, or the
    /// model with the options it was given (`openai:m,temperature=0.7`), so that one model
    /// at two temperatures is two judges of a panel.
    pub fn name(&self) -> String {
        match self {
            Judge::Command(cmd) => cmd.clone(),
            Judge::Model(m) => {
                let mut name = format!("{}:{}", m.provider.name(), m.model);
                if let Some(t) = m.temperature {
                    name.push_str(&format!(
                        ",temperature={}",
                        grade_engine::entry::js_number(t)
                    ));
                }
                if let Some(n) = m.max_tokens {
                    name.push_str(&format!(",max_tokens={n}"));
                }
                name
            }
        }
    }
}

/// A `--judge` as given: `PROVIDER:MODEL[,temperature=T][,max_tokens=N]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec<'a> {
    pub provider: Provider,
    pub model: &'a str,
    /// Overrides the pack's `judge.temperature` for this judge.
    pub temperature: Option<f64>,
    /// Overrides the pack's `judge.max_tokens` for this judge.
    pub max_tokens: Option<u64>,
}

/// `PROVIDER:MODEL[,temperature=T][,max_tokens=N]` → its parts.
pub fn parse_spec(spec: &str) -> Result<Spec<'_>, String> {
    let mut parts = spec.split(',');
    let head = parts.next().unwrap_or_default();
    let (provider, model) = head.split_once(':').unwrap_or((head, ""));
    let provider = match provider {
        "anthropic" => Provider::Anthropic,
        "openai" => Provider::OpenAi,
        other => {
            return Err(format!(
                "judge `{spec}`: unknown provider `{other}`; use `anthropic:MODEL` (Messages API) or `openai:MODEL` (Chat Completions, also for compatible servers through OPENAI_BASE_URL), or `--judge-cmd CMD`"
            ))
        }
    };
    if model.trim().is_empty() {
        return Err(format!(
            "judge `{spec}` names no model: write `{}:MODEL`",
            provider.name()
        ));
    }
    let mut out = Spec {
        provider,
        model,
        temperature: None,
        max_tokens: None,
    };
    for option in parts {
        let (key, value) = option.split_once('=').unwrap_or((option, ""));
        match key {
            "temperature" => {
                let t = value
                    .parse::<f64>()
                    .ok()
                    .filter(|t| (0.0..=2.0).contains(t))
                    .ok_or_else(|| {
                        format!("judge `{spec}`: `temperature` is a number from 0 to 2, not `{value}`")
                    })?;
                if out.temperature.replace(t).is_some() {
                    return Err(format!("judge `{spec}` gives `temperature` twice"));
                }
            }
            "max_tokens" => {
                let n = value.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                    format!("judge `{spec}`: `max_tokens` is a whole number of at least 1, not `{value}`")
                })?;
                if out.max_tokens.replace(n).is_some() {
                    return Err(format!("judge `{spec}` gives `max_tokens` twice"));
                }
            }
            _ => {
                return Err(format!(
                    "judge `{spec}`: unknown option `{option}`; a judge takes `,temperature=T` and `,max_tokens=N`"
                ))
            }
        }
    }
    Ok(out)
}

/// How to ask.
#[derive(Debug, Clone)]
pub struct Options {
    pub runs: usize,
    pub jobs: usize,
    pub timeout: Duration,
    /// The most bytes a judge command may print on stdout, and on stderr.
    pub max_output: u64,
    pub retry: Retry,
    /// The judgment cache, unless `--no-judge-cache` (commands are never cached).
    pub cache: Option<Cache>,
}

/// One request: a chunk's prompt of a session, for one run of one judge.
struct Task {
    judge: usize,
    session: usize,
    run: usize,
    chunk: usize,
    chunks: usize,
    prompt: String,
}

/// A valid judgment object from one reply, and what it cost.
struct Answer {
    judgment: Value,
    input_tokens: u64,
    output_tokens: u64,
    cached: bool,
}

/// The judgments of `sessions` by each of `judges`: one list per judge, in the judges'
/// order, each in the sessions' order. Every judge is asked for every chunk of every
/// session (`runs` times); the requests of all judges share the `jobs` in flight.
pub fn judge_sessions(
    pack: &CompiledPack,
    sessions: &[Session],
    judges: &[Judge],
    options: &Options,
) -> Result<Vec<Vec<Judgment>>, CliError> {
    let spec = pack.judge.as_ref().ok_or_else(|| {
        CliError::Usage(format!(
            "rubric `{}` has no judged dimensions, so there is nothing to ask a judge",
            pack.id
        ))
    })?;
    let runs = options.runs.max(1);
    let prompts: Vec<Vec<String>> = sessions
        .iter()
        .map(|session| grade_engine::prompt::render_prompts(pack, spec, session))
        .collect();
    let mut tasks = Vec::new();
    for j in 0..judges.len() {
        for (s, prompts) in prompts.iter().enumerate() {
            let chunks = prompts.len();
            for run in 0..runs {
                for (chunk, prompt) in prompts.iter().enumerate() {
                    tasks.push(Task {
                        judge: j,
                        session: s,
                        run,
                        chunk,
                        chunks,
                        prompt: prompt.clone(),
                    });
                }
            }
        }
    }
    let agent = crate::http::agent(options.timeout);
    let cache_warning = Mutex::new(None::<String>);
    let unreadable = Mutex::new(Vec::new());
    let answers = run_bounded(&tasks, options.jobs, |task| {
        let judge = &judges[task.judge];
        let place = place(judge, &sessions[task.session].id, task, runs);
        ask(
            pack,
            judge,
            task,
            &agent,
            options,
            &cache_warning,
            &unreadable,
        )
        .map_err(|why| format!("{place}: {why}"))
    });
    // Said even when a later request failed: the files are still there to look at.
    let mut unreadable = unreadable.into_inner().unwrap_or_default();
    unreadable.sort();
    for warning in unreadable {
        eprintln!(
            "warning: {}",
            crate::render::for_stderr(&warning.to_string())
        );
    }
    let answers = answers.map_err(CliError::Judge)?;
    if let Some(warning) = cache_warning.into_inner().ok().flatten() {
        eprintln!(
            "warning: the judgment cache is not kept: {}",
            crate::render::for_stderr(&warning.to_string())
        );
    }

    // Tasks are in order judge → session → run → chunk, so each session's answers of a
    // judge are together.
    let mut out = Vec::with_capacity(judges.len());
    let mut answers = answers.into_iter().zip(&tasks).peekable();
    for (j, judge) in judges.iter().enumerate() {
        let mut judged = Vec::with_capacity(sessions.len());
        for (s, session) in sessions.iter().enumerate() {
            let mut run_judgments = Vec::with_capacity(runs);
            let mut usage = JudgeUsage {
                model: judge.name(),
                runs,
                ..JudgeUsage::default()
            };
            for run in 0..runs {
                let mut chunks = Vec::new();
                while let Some((answer, _)) =
                    answers.next_if(|(_, t)| t.judge == j && t.session == s && t.run == run)
                {
                    usage.replies += 1;
                    usage.input_tokens += answer.input_tokens;
                    usage.output_tokens += answer.output_tokens;
                    usage.cached += usize::from(answer.cached);
                    chunks.push(answer.judgment);
                }
                let origin = format!("judge `{}` for session `{}`", judge.name(), session.id);
                let text = Value::Array(chunks).to_string();
                run_judgments.push(parse_judgment(&text, &origin, pack)?);
            }
            let mut judgment = combine_runs(run_judgments, pack);
            if matches!(judge, Judge::Model(_)) {
                judgment.usage = Some(usage);
            }
            judged.push(judgment);
        }
        out.push(judged);
    }
    Ok(out)
}

/// Krippendorff's α per dimension over the batch, on stderr (a note beside the results,
/// like a warning) and, when asked, as JSON in `path`: of each judge's runs with itself
/// (when asked more than once), and among the judges of a panel (`panel` holds the
/// combined judgments).
pub fn report_agreement(
    pack: &CompiledPack,
    judges: &[Judge],
    judged: &[Vec<Judgment>],
    panel: Option<(&[Judgment], PanelCombine)>,
    path: Option<&std::path::Path>,
) -> Result<(), CliError> {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut text = String::new();
    let mut by_runs = Vec::new();
    for (judge, judgments) in judges.iter().zip(judged) {
        let runs = judgments.first().map_or(0, |j| j.runs);
        if runs < 2 {
            continue;
        }
        let all: Vec<&Judgment> = judgments.iter().collect();
        let agreement = grade_engine::agreement::judge_agreement(pack, &all);
        text.push_str(&format!(
            "agreement of {runs} runs of judge `{}` over {} session{} (Krippendorff's alpha: 1 the runs agree, 0 no better than chance):\n",
            judge.name(),
            judgments.len(),
            plural(judgments.len())
        ));
        agreement_table(&mut text, &agreement);
        by_runs.push((judge.name(), runs, judgments.len(), agreement));
    }
    // Over one session there is nothing to agree on: the note is for a batch.
    let among = panel.filter(|(combined, _)| combined.len() > 1 || path.is_some()).map(|(combined, how)| {
        let all: Vec<&Judgment> = combined.iter().collect();
        let agreement = grade_engine::agreement::panel_agreement(pack, &all);
        let names: Vec<String> = judges.iter().map(|j| format!("`{}`", j.name())).collect();
        text.push_str(&format!(
            "agreement among the panel's {} judges ({}) over {} session{} (Krippendorff's alpha: 1 the judges agree, 0 no better than chance; scores combined by {}):\n",
            judges.len(),
            names.join(", "),
            combined.len(),
            plural(combined.len()),
            how.name()
        ));
        agreement_table(&mut text, &agreement);
        (how, combined.len(), agreement)
    });
    eprint!("{}", crate::render::for_stderr(&text));
    let Some(path) = path else {
        return Ok(());
    };
    let rubric = serde_json::json!({"id": pack.id, "version": pack.version, "digest": pack.digest});
    let doc = match among {
        // One judge: the runs' agreement, as it has always been written.
        None => {
            let Some((judge, runs, sessions, dimensions)) = by_runs.into_iter().next() else {
                return Ok(());
            };
            serde_json::json!({
                "judge": judge,
                "rubric": rubric,
                "runs": runs,
                "sessions": sessions,
                "dimensions": dimensions,
            })
        }
        Some((how, sessions, dimensions)) => {
            let runs: Vec<Value> = by_runs
                .into_iter()
                .map(|(judge, _, _, dimensions)| serde_json::json!({"judge": judge, "dimensions": dimensions}))
                .collect();
            serde_json::json!({
                "judges": judges.iter().map(Judge::name).collect::<Vec<_>>(),
                "combine": how.name(),
                "rubric": rubric,
                "runs": judged.first().and_then(|j| j.first()).map_or(0, |j| j.runs),
                "sessions": sessions,
                "dimensions": dimensions,
                "runAgreement": runs,
            })
        }
    };
    let mut out = serde_json::to_vec_pretty(&doc).map_err(CliError::Json)?;
    out.push(b'\n');
    std::fs::write(path, out).map_err(|e| {
        CliError::Usage(format!(
            "cannot write agreement file `{}`: {e}",
            path.display()
        ))
    })
}

/// One line per dimension: its id, metric and α (or why α is undefined).
fn agreement_table(text: &mut String, agreement: &[grade_engine::agreement::DimensionAgreement]) {
    let width = agreement
        .iter()
        .map(|a| a.dimension.len())
        .max()
        .unwrap_or(0);
    for a in agreement {
        let value = match (a.alpha, &a.reason) {
            (Some(alpha), _) => format!("{alpha:.3}"),
            (None, Some(reason)) => format!("undefined: {reason}"),
            (None, None) => "undefined".to_owned(),
        };
        text.push_str(&format!(
            "  {:<width$}  {:<8}  {value}\n",
            a.dimension, a.metric
        ));
    }
}

fn place(judge: &Judge, session: &str, task: &Task, runs: usize) -> String {
    let mut out = format!(
        "judge `{}` for session `{session}`, chunk {} of {}",
        judge.name(),
        task.chunk + 1,
        task.chunks
    );
    if runs > 1 {
        out.push_str(&format!(", run {} of {runs}", task.run + 1));
    }
    out
}

fn ask(
    pack: &CompiledPack,
    judge: &Judge,
    task: &Task,
    agent: &ureq::Agent,
    options: &Options,
    cache_warning: &Mutex<Option<String>>,
    unreadable: &Mutex<Vec<String>>,
) -> Result<Answer, String> {
    let spec = pack.judge.as_ref();
    // A judge's own `,temperature=` and `,max_tokens=` come before the pack's.
    let (own_temperature, own_max_tokens) = match judge {
        Judge::Model(m) => (m.temperature, m.max_tokens),
        Judge::Command(_) => (None, None),
    };
    let temperature = own_temperature.or(spec.and_then(|j| j.temperature));
    let max_tokens = own_max_tokens.or(spec.and_then(|j| j.max_tokens));
    let cache = match judge {
        Judge::Model(_) => options.cache.as_ref(),
        Judge::Command(_) => None,
    };
    let name = judge.name();
    let key = cache.map(|_| {
        // The same model name on two servers (`OPENAI_BASE_URL`) is two judges.
        let endpoint = match judge {
            Judge::Model(m) => m.endpoint(),
            Judge::Command(_) => String::new(),
        };
        Cache::key(&[
            &name,
            &endpoint,
            &pack.digest,
            &temperature.map(|t| t.to_string()).unwrap_or_default(),
            &max_tokens.map(|t| t.to_string()).unwrap_or_default(),
            &task.run.to_string(),
            &task.prompt,
        ])
    });
    if let (Some(cache), Some(key)) = (cache, &key) {
        match cache.get(key) {
            Ok(Some(hit)) if hit.judge == name => {
                return Ok(Answer {
                    judgment: hit.judgment,
                    input_tokens: 0,
                    output_tokens: 0,
                    cached: true,
                });
            }
            Ok(_) => {}
            Err(warning) => {
                if let Ok(mut warnings) = unreadable.lock() {
                    warnings.push(warning);
                }
            }
        }
    }
    let (text, input_tokens, output_tokens, truncated) = match judge {
        Judge::Command(cmd) => (
            cmd::run(cmd, &task.prompt, options.timeout, options.max_output)?,
            0,
            0,
            false,
        ),
        Judge::Model(m) => {
            let reply = m.ask(agent, &task.prompt, temperature, max_tokens, options.retry)?;
            (
                reply.text,
                reply.input_tokens,
                reply.output_tokens,
                reply.truncated,
            )
        }
    };
    let judgment = read_judgment(&text, truncated, pack)?;
    if let (Some(cache), Some(key)) = (cache, &key) {
        let kept = Cached {
            judge: name,
            judgment: judgment.clone(),
            input_tokens,
            output_tokens,
        };
        if let Err(why) = cache.put(key, &kept) {
            if let Ok(mut first) = cache_warning.lock() {
                first.get_or_insert(why);
            }
        }
    }
    Ok(Answer {
        judgment,
        input_tokens,
        output_tokens,
        cached: false,
    })
}

/// The judgment object in a reply, checked against the pack; why not, quoting the reply.
fn read_judgment(text: &str, truncated: bool, pack: &CompiledPack) -> Result<Value, String> {
    let stopped = if truncated {
        " (the model stopped at its output limit: raise `max_tokens` in the pack's `judge`)"
    } else {
        ""
    };
    let start = quote_start(text, 120);
    let json = find_judgment_json(text).map_err(|why| match why {
        // The advice is in `why`; the model's own word confirms it.
        ReplyError::CutShort if truncated => format!(
            "{why}; the model said it stopped at its output limit; the reply starts with `{start}`"
        ),
        _ => format!("{why}{stopped}; it starts with `{start}`"),
    })?;
    let value: Value = serde_json::from_str(json)
        .map_err(|e| format!("the reply is not JSON ({e}){stopped}; it starts with `{start}`"))?;
    if !value.is_object() {
        return Err(format!(
            "a reply to one prompt is one judgment object, not a JSON {}; it starts with `{start}`",
            if value.is_array() { "array" } else { "value" }
        ));
    }
    // Checked here so that only valid judgments are cached; the message already names the
    // session and chunk, so the origin is left empty.
    parse_judgment(json, "", pack).map_err(|e| {
        let message = e.to_string();
        let message = message.trim_start_matches(": ");
        format!("{message}; the reply starts with `{start}`")
    })?;
    Ok(value)
}

/// Runs `work` over `tasks` with at most `jobs` at once; the outputs in the tasks' order,
/// or the first error in that order (once one fails, tasks not yet started are skipped).
fn run_bounded<T: Sync, O: Send>(
    tasks: &[T],
    jobs: usize,
    work: impl Fn(&T) -> Result<O, String> + Sync,
) -> Result<Vec<O>, String> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<Result<O, String>>>> =
        tasks.iter().map(|_| Mutex::new(None)).collect();
    let workers = jobs.clamp(1, tasks.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                if failed.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(task) = tasks.get(i) else { break };
                let outcome = work(task);
                if outcome.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(outcome);
                }
            });
        }
    });
    let mut out = Vec::with_capacity(tasks.len());
    for slot in slots {
        match slot.into_inner().ok().flatten() {
            Some(Ok(o)) => out.push(o),
            Some(Err(e)) => return Err(e),
            // Skipped after a failure that comes later in order: that failure is reported.
            None => continue,
        }
    }
    if out.len() == tasks.len() {
        Ok(out)
    } else {
        Err("a judge request was not run".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_name_a_provider_and_a_model() {
        let spec = parse_spec("anthropic:claude-sonnet-4-5").unwrap();
        assert_eq!(
            (spec.provider, spec.model, spec.temperature, spec.max_tokens),
            (Provider::Anthropic, "claude-sonnet-4-5", None, None)
        );
        let spec = parse_spec("openai:llama3:8b").unwrap();
        assert_eq!((spec.provider, spec.model), (Provider::OpenAi, "llama3:8b"));
        assert!(parse_spec("gemini:x")
            .unwrap_err()
            .contains("unknown provider `gemini`"));
        assert!(parse_spec("openai:")
            .unwrap_err()
            .contains("names no model"));
    }

    #[test]
    fn a_judge_may_set_its_own_temperature_and_output_limit() {
        let spec = parse_spec("openai:m,temperature=0.7,max_tokens=900").unwrap();
        assert_eq!(
            (spec.model, spec.temperature, spec.max_tokens),
            ("m", Some(0.7), Some(900))
        );
        for (bad, message) in [
            ("openai:m,temperature=3", "judge `openai:m,temperature=3`: `temperature` is a number from 0 to 2, not `3`"),
            ("openai:m,temperature=x", "judge `openai:m,temperature=x`: `temperature` is a number from 0 to 2, not `x`"),
            ("openai:m,max_tokens=0", "judge `openai:m,max_tokens=0`: `max_tokens` is a whole number of at least 1, not `0`"),
            ("openai:m,top_p=1", "judge `openai:m,top_p=1`: unknown option `top_p=1`; a judge takes `,temperature=T` and `,max_tokens=N`"),
            ("openai:m,temperature=1,temperature=0", "judge `openai:m,temperature=1,temperature=0` gives `temperature` twice"),
        ] {
            assert_eq!(parse_spec(bad).unwrap_err(), message);
        }
    }

    #[test]
    fn bounded_runs_keep_the_order_and_report_the_first_failure() {
        let tasks: Vec<usize> = (0..50).collect();
        let out = run_bounded(&tasks, 7, |t| {
            std::thread::sleep(Duration::from_micros((50 - *t as u64) * 20));
            Ok(t * 2)
        })
        .unwrap();
        assert_eq!(out, (0..50).map(|t| t * 2).collect::<Vec<_>>());
        let err = run_bounded(&tasks, 1, |t| {
            if *t >= 3 {
                Err(format!("task {t}"))
            } else {
                Ok(*t)
            }
        })
        .unwrap_err();
        assert_eq!(err, "task 3");
    }
}
