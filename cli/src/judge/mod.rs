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
pub mod model;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use grade_engine::judgment::{
    combine_runs, find_judgment_json, parse_judgment, quote_start, JudgeUsage, Judgment, ReplyError,
};
use grade_engine::{CompiledPack, Session};
use serde_json::Value;

use crate::error::CliError;
use crate::http::Retry;
use cache::{Cache, Cached};
use model::{ModelJudge, Provider};

/// Who is asked.
#[derive(Debug, Clone)]
pub enum Judge {
    Command(String),
    Model(ModelJudge),
}

impl Judge {
    /// `anthropic:MODEL` or `openai:MODEL`, with the provider's environment.
    pub fn model(spec: &str) -> Result<Judge, CliError> {
        let (provider, model) = parse_spec(spec).map_err(CliError::Usage)?;
        ModelJudge::from_env(provider, model)
            .map(Judge::Model)
            .map_err(CliError::Usage)
    }

    /// How the judge is named in messages, results and cache keys.
    pub fn name(&self) -> String {
        match self {
            Judge::Command(cmd) => cmd.clone(),
            Judge::Model(m) => format!("{}:{}", m.provider.name(), m.model),
        }
    }
}

/// `PROVIDER:MODEL` → its parts.
pub fn parse_spec(spec: &str) -> Result<(Provider, &str), String> {
    let (provider, model) = spec.split_once(':').unwrap_or((spec, ""));
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
    Ok((provider, model))
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

/// One request: a chunk's prompt of a session, for one run.
struct Task {
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

/// The judgments of `sessions`, in their order.
pub fn judge_sessions(
    pack: &CompiledPack,
    sessions: &[Session],
    judge: &Judge,
    options: &Options,
) -> Result<Vec<Judgment>, CliError> {
    let spec = pack.judge.as_ref().ok_or_else(|| {
        CliError::Usage(format!(
            "rubric `{}` has no judged dimensions, so there is nothing to ask a judge",
            pack.id
        ))
    })?;
    let runs = options.runs.max(1);
    let mut tasks = Vec::new();
    for (s, session) in sessions.iter().enumerate() {
        let prompts = grade_engine::prompt::render_prompts(pack, spec, session);
        let chunks = prompts.len();
        for run in 0..runs {
            for (chunk, prompt) in prompts.iter().enumerate() {
                tasks.push(Task {
                    session: s,
                    run,
                    chunk,
                    chunks,
                    prompt: prompt.clone(),
                });
            }
        }
    }
    let agent = crate::http::agent(options.timeout);
    let cache_warning = Mutex::new(None::<String>);
    let unreadable = Mutex::new(Vec::new());
    let answers = run_bounded(&tasks, options.jobs, |task| {
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

    // Tasks are in order session → run → chunk, so each session's answers are together.
    let mut out = Vec::with_capacity(sessions.len());
    let mut answers = answers.into_iter().zip(&tasks).peekable();
    for (s, session) in sessions.iter().enumerate() {
        let mut run_judgments = Vec::with_capacity(runs);
        let mut usage = JudgeUsage {
            model: judge.name(),
            runs,
            ..JudgeUsage::default()
        };
        for run in 0..runs {
            let mut chunks = Vec::new();
            while let Some((answer, _)) = answers.next_if(|(_, t)| t.session == s && t.run == run) {
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
        out.push(judgment);
    }
    Ok(out)
}

/// Krippendorff's α per dimension over the batch, on stderr (a note beside the results,
/// like a warning) and, when asked, as JSON in `path`.
pub fn report_agreement(
    pack: &CompiledPack,
    judge: &Judge,
    judgments: &[Judgment],
    path: Option<&std::path::Path>,
) -> Result<(), CliError> {
    let runs = judgments.first().map_or(0, |j| j.runs);
    let all: Vec<&Judgment> = judgments.iter().collect();
    let agreement = grade_engine::agreement::judge_agreement(pack, &all);
    let mut text = format!(
        "agreement of {runs} runs of judge `{}` over {} session{} (Krippendorff's alpha: 1 the runs agree, 0 no better than chance):\n",
        judge.name(),
        judgments.len(),
        if judgments.len() == 1 { "" } else { "s" }
    );
    let width = agreement
        .iter()
        .map(|a| a.dimension.len())
        .max()
        .unwrap_or(0);
    for a in &agreement {
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
    eprint!("{text}");
    if let Some(path) = path {
        let doc = serde_json::json!({
            "judge": judge.name(),
            "rubric": {"id": pack.id, "version": pack.version, "digest": pack.digest},
            "runs": runs,
            "sessions": judgments.len(),
            "dimensions": agreement,
        });
        let mut out = serde_json::to_vec_pretty(&doc).map_err(CliError::Json)?;
        out.push(b'\n');
        std::fs::write(path, out).map_err(|e| {
            CliError::Usage(format!(
                "cannot write agreement file `{}`: {e}",
                path.display()
            ))
        })?;
    }
    Ok(())
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
    let temperature = spec.and_then(|j| j.temperature);
    let max_tokens = spec.and_then(|j| j.max_tokens);
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
        assert!(matches!(
            parse_spec("anthropic:claude-sonnet-4-5"),
            Ok((Provider::Anthropic, "claude-sonnet-4-5"))
        ));
        assert!(matches!(
            parse_spec("openai:llama3:8b"),
            Ok((Provider::OpenAi, "llama3:8b"))
        ));
        assert!(parse_spec("gemini:x")
            .unwrap_err()
            .contains("unknown provider `gemini`"));
        assert!(parse_spec("openai:")
            .unwrap_err()
            .contains("names no model"));
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
