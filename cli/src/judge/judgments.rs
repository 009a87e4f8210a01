//! The judgments a run grades with: read from `--judgment`, or asked of the judges of
//! `--judge` and `--judge-cmd` as the plan says (a panel's combined, with its agreement);
//! and the prompts a judge reads, as `--print-prompt` shows them.

use grade_engine::judgment::Judgment;
use grade_engine::{CompiledPack, Session};

use super::{cache, judge_sessions, report_agreement, Judge, Options};
use crate::args::Format;
use crate::error::CliError;
use crate::plan::JudgePlan;
use crate::{http, input, write_stdout};

/// One judgment per session: from `--judgment`, from `--judge-cmd`, or none.
pub(crate) fn judgments(
    judging: &JudgePlan,
    pack: &CompiledPack,
    sessions: &[Session],
) -> Result<Vec<Option<Judgment>>, CliError> {
    if let Some(path) = &judging.judgment {
        let io = |source| CliError::Io {
            path: path.clone(),
            source,
        };
        let text = input::read_text(path, input::MAX_DOCUMENT, "judgment")
            .map_err(io)?
            .ok_or_else(|| input::missing("judgment", path))?;
        let origin = if path.as_os_str() == "-" {
            "stdin".to_owned()
        } else {
            path.display().to_string()
        };
        return Ok(vec![Some(grade_engine::judgment::parse_judgment(
            &text, &origin, pack,
        )?)]);
    }
    let judges = judges_of(judging)?;
    if judges.is_empty() {
        return Ok(vec![None; sessions.len()]);
    }
    if judging.agreement.is_some() && judging.runs < 2 && judges.len() < 2 {
        return Err(CliError::Usage(
            "`--agreement` reports how repeated runs or a panel's judges agree: give `--judge-runs 2` or more, or a second judge"
                .to_owned(),
        ));
    }
    let options = Options {
        runs: judging.runs as usize,
        jobs: judging.jobs as usize,
        timeout: judging.timeout,
        max_output: judging.max_output,
        retry: http::Retry {
            attempts: judging.attempts,
            backoff: judging.backoff,
            max_wait: std::time::Duration::from_secs(60),
        },
        cache: if judging.cache {
            cache::Cache::user()
        } else {
            None
        },
    };
    let mut judged = judge_sessions(pack, sessions, &judges, &options)?;
    if judges.len() == 1 {
        if options.runs > 1 {
            report_agreement(pack, &judges, &judged, None, judging.agreement.as_deref())?;
        }
        return Ok(judged
            .pop()
            .unwrap_or_default()
            .into_iter()
            .map(Some)
            .collect());
    }
    let how = judging
        .panel
        .map(crate::args::PanelArg::combine)
        .or(pack.judge.as_ref().map(|j| j.panel))
        .unwrap_or_default();
    let mut per_judge: Vec<std::vec::IntoIter<Judgment>> =
        judged.clone().into_iter().map(Vec::into_iter).collect();
    let combined: Vec<Judgment> = (0..sessions.len())
        .map(|_| {
            let members = judges
                .iter()
                .zip(per_judge.iter_mut())
                .filter_map(|(judge, of)| of.next().map(|j| (judge.name(), j)))
                .collect();
            grade_engine::judgment::combine_panel(members, how, pack)
        })
        .collect();
    report_agreement(
        pack,
        &judges,
        &judged,
        Some((&combined, how)),
        judging.agreement.as_deref(),
    )?;
    Ok(combined.into_iter().map(Some).collect())
}

/// The judges of `--judge` and `--judge-cmd`, in the order given; the same judge twice is
/// refused (its replies would be one judge's, counted twice).
fn judges_of(judging: &JudgePlan) -> Result<Vec<Judge>, CliError> {
    let order: Vec<(bool, usize)> = if judging.judge_order.is_empty() {
        (0..judging.judge.len())
            .map(|i| (false, i))
            .chain((0..judging.judge_cmd.len()).map(|i| (true, i)))
            .collect()
    } else {
        judging.judge_order.clone()
    };
    let mut judges: Vec<Judge> = Vec::with_capacity(order.len());
    for (is_cmd, i) in order {
        let judge = match (is_cmd, judging.judge_cmd.get(i), judging.judge.get(i)) {
            (true, Some(cmd), _) => Judge::Command(cmd.clone()),
            (false, _, Some(spec)) => Judge::model(spec)?,
            _ => continue,
        };
        if judges.iter().any(|j| j.name() == judge.name()) {
            return Err(CliError::Usage(format!(
                "judge `{}` is given twice: a panel's judges differ (another model, or the same one with `,temperature=T`)",
                judge.name()
            )));
        }
        judges.push(judge);
    }
    Ok(judges)
}

/// The judge prompts of the sessions, as `--print-prompt` shows them.
pub(crate) fn print_prompts(
    pack: &CompiledPack,
    sessions: &[Session],
    format: Format,
) -> Result<(), CliError> {
    let judge = pack.judge.as_ref().ok_or_else(|| {
        CliError::Usage(format!("rubric `{}` has no judge prompt (only packs with judged dimensions, like `langfuse-v1`, do)", pack.id))
    })?;
    let mut out = String::new();
    let mut all = Vec::new();
    for s in sessions {
        let prompts = grade_engine::prompt::render_prompts(pack, judge, s);
        let n = prompts.len();
        for (i, p) in prompts.into_iter().enumerate() {
            if format == Format::Human {
                out.push_str(&format!(
                    "===== session `{}`, prompt {} of {n} =====\n",
                    s.id,
                    i + 1
                ));
                out.push_str(&p);
                if !p.ends_with('\n') {
                    out.push('\n');
                }
            } else {
                all.push(serde_json::json!({"sessionId": s.id, "chunk": i + 1, "chunks": n, "prompt": p}));
            }
        }
    }
    match format {
        Format::Human => {}
        Format::Json => {
            out = format!(
                "{}\n",
                serde_json::to_string_pretty(&all).map_err(CliError::Json)?
            )
        }
        Format::Jsonl => {
            for p in &all {
                out.push_str(&serde_json::to_string(p).map_err(CliError::Json)?);
                out.push('\n');
            }
        }
    }
    write_stdout(out.as_bytes())
}
