//! Built-in judges: a model asked over HTTP, in the request shapes of the official SDKs.
//!
//! - `anthropic:MODEL`: the Messages API (`POST {ANTHROPIC_BASE_URL}/v1/messages`, default
//!   base `https://api.anthropic.com`), key `ANTHROPIC_API_KEY` sent as `x-api-key` (or
//!   `ANTHROPIC_AUTH_TOKEN` as a bearer token), `anthropic-version` as the SDK sends it.
//! - `openai:MODEL`: Chat Completions (`POST {OPENAI_BASE_URL}/chat/completions`, default
//!   base `https://api.openai.com/v1`), key `OPENAI_API_KEY` as a bearer token. Any
//!   compatible server (vLLM, Ollama, LiteLLM…) works through `OPENAI_BASE_URL`; a key is
//!   then optional.
//!
//! The scorer prompt is the one user message. Temperature and output limit come from the
//! pack's `judge` block.

use serde_json::{json, Value};

use crate::http::{self, Address, Failure, Retry};

/// The `anthropic-version` header the official Python SDK sends with every request
/// (`Anthropic.default_headers` in `src/anthropic/_client.py`); the API refuses versions
/// it does not know.
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Anthropic requires an output limit; a judgment of six dimensions needs well under this.
const ANTHROPIC_DEFAULT_MAX_TOKENS: u64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Anthropic,
    OpenAi,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
        }
    }
}

/// A model judge, ready to be asked: where, with which key.
#[derive(Debug, Clone)]
pub struct ModelJudge {
    pub provider: Provider,
    pub model: String,
    /// This judge's own sampling temperature (`,temperature=T`), before the pack's.
    pub temperature: Option<f64>,
    /// This judge's own output limit (`,max_tokens=N`), before the pack's.
    pub max_tokens: Option<u64>,
    url: Address,
    headers: Vec<(&'static str, String)>,
}

/// What a model said, and what it cost.
#[derive(Debug, Clone)]
pub struct ModelReply {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Why the model stopped, when that was its output limit.
    pub truncated: bool,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl ModelJudge {
    /// The judge from the provider's environment variables.
    pub fn from_env(provider: Provider, model: &str) -> Result<ModelJudge, String> {
        let mut headers = Vec::new();
        let url = match provider {
            Provider::Anthropic => {
                let base = var("ANTHROPIC_BASE_URL")
                    .unwrap_or_else(|| "https://api.anthropic.com".to_owned());
                if let Some(key) = var("ANTHROPIC_API_KEY") {
                    headers.push(("x-api-key", key));
                } else if let Some(token) = var("ANTHROPIC_AUTH_TOKEN") {
                    headers.push(("Authorization", format!("Bearer {token}")));
                } else {
                    return Err(format!("`--judge anthropic:{model}` needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"));
                }
                headers.push(("anthropic-version", ANTHROPIC_VERSION.to_owned()));
                Address::new(format!("{}/v1/messages", base.trim_end_matches('/')))
            }
            Provider::OpenAi => {
                let base = var("OPENAI_BASE_URL");
                match var("OPENAI_API_KEY") {
                    Some(key) => headers.push(("Authorization", format!("Bearer {key}"))),
                    // A local compatible server usually needs no key; OpenAI itself does.
                    None if base.is_some() => {}
                    None => {
                        return Err(format!("`--judge openai:{model}` needs OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server that takes no key)"))
                    }
                }
                let base = base.unwrap_or_else(|| "https://api.openai.com/v1".to_owned());
                Address::new(format!("{}/chat/completions", base.trim_end_matches('/')))
            }
        };
        Ok(ModelJudge {
            provider,
            model: model.to_owned(),
            temperature: None,
            max_tokens: None,
            url,
            headers,
        })
    }

    /// The URL the judge posts to, as it is shown (credentials redacted): part of the
    /// judgment cache's key, so that replies of two servers are never mixed.
    pub fn endpoint(&self) -> String {
        self.url.to_string()
    }

    /// The request body for one prompt.
    pub fn body(&self, prompt: &str, temperature: Option<f64>, max_tokens: Option<u64>) -> Value {
        let mut body = match self.provider {
            Provider::Anthropic => json!({
                "model": self.model,
                "max_tokens": max_tokens.unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS),
                "messages": [{"role": "user", "content": prompt}],
            }),
            Provider::OpenAi => {
                let mut body = json!({
                    "model": self.model,
                    "messages": [{"role": "user", "content": prompt}],
                });
                if let Some(n) = max_tokens {
                    body["max_completion_tokens"] = json!(n);
                }
                body
            }
        };
        if let Some(t) = temperature {
            body["temperature"] = json!(t);
        }
        body
    }

    /// Asks the model once (with retries); its reply text and token counts.
    pub fn ask(
        &self,
        agent: &ureq::Agent,
        prompt: &str,
        temperature: Option<f64>,
        max_tokens: Option<u64>,
        retry: Retry,
    ) -> Result<ModelReply, String> {
        let body = self.body(prompt, temperature, max_tokens).to_string();
        let request = http::Request {
            method: "POST",
            url: &self.url,
            headers: self.headers.iter().map(|(k, v)| (*k, v.clone())).collect(),
            body: Some(&body),
        };
        let reply = http::send(agent, &request, retry).map_err(|failure| {
            let refused = matches!(
                failure,
                Failure::Status {
                    status: 401 | 403,
                    ..
                }
            );
            let what = failure.describe();
            if refused {
                let keys = match self.provider {
                    Provider::Anthropic => "ANTHROPIC_API_KEY",
                    Provider::OpenAi => "OPENAI_API_KEY",
                };
                format!("`{}` refused the key ({what}): check {keys}", self.url)
            } else {
                format!("`{}` answered {what}", self.url)
            }
        })?;
        let value: Value = serde_json::from_str(&reply.body).map_err(|e| {
            let start = grade_engine::judgment::quote_start(&reply.body, 120);
            if e.is_eof() {
                // The server's own envelope ends early: the answer was cut off on its way (a
                // proxy, a dropped connection), not written wrong by the model.
                format!(
                    "`{}` answered with JSON that ends before it closes ({e}): the answer was cut off on its way; grade again: `{start}`",
                    self.url
                )
            } else {
                format!(
                    "`{}` answered with something that is not JSON ({e}): `{start}`",
                    self.url
                )
            }
        })?;
        self.read_reply(&value).ok_or_else(|| {
            format!(
                "`{}` answered without a {} reply: `{}`",
                self.url,
                match self.provider {
                    Provider::Anthropic => "Messages API",
                    Provider::OpenAi => "Chat Completions",
                },
                grade_engine::judgment::quote_start(&reply.body, 160)
            )
        })
    }

    fn read_reply(&self, value: &Value) -> Option<ModelReply> {
        let count = |v: &Value| v.as_u64().unwrap_or(0);
        match self.provider {
            Provider::Anthropic => {
                let blocks = value.get("content")?.as_array()?;
                let text: String = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("");
                let usage = &value["usage"];
                Some(ModelReply {
                    text,
                    // Cached prompt tokens are counted apart from `input_tokens`.
                    input_tokens: count(&usage["input_tokens"])
                        + count(&usage["cache_creation_input_tokens"])
                        + count(&usage["cache_read_input_tokens"]),
                    output_tokens: count(&usage["output_tokens"]),
                    truncated: value["stop_reason"] == "max_tokens",
                })
            }
            Provider::OpenAi => {
                let choice = value.get("choices")?.as_array()?.first()?;
                let message = choice.get("message")?;
                let text = match message.get("content") {
                    Some(Value::String(text)) => text.clone(),
                    _ => message
                        .get("refusal")
                        .and_then(Value::as_str)
                        .map(|r| format!("(refused) {r}"))
                        .unwrap_or_default(),
                };
                let usage = &value["usage"];
                Some(ModelReply {
                    text,
                    input_tokens: count(&usage["prompt_tokens"]),
                    output_tokens: count(&usage["completion_tokens"]),
                    truncated: choice["finish_reason"] == "length",
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(provider: Provider) -> ModelJudge {
        ModelJudge {
            provider,
            model: "m".to_owned(),
            temperature: None,
            max_tokens: None,
            url: Address::new("http://x"),
            headers: Vec::new(),
        }
    }

    #[test]
    fn bodies_follow_each_api() {
        let a = judge(Provider::Anthropic).body("hi", Some(0.2), None);
        assert_eq!(
            a,
            json!({"model": "m", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}], "temperature": 0.2})
        );
        let o = judge(Provider::OpenAi).body("hi", None, Some(100));
        assert_eq!(
            o,
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 100})
        );
    }

    #[test]
    fn replies_give_text_and_usage() {
        let a = judge(Provider::Anthropic)
            .read_reply(&json!({"content": [{"type": "text", "text": "{\"a\":"}, {"type": "text", "text": "1}"}], "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 3}, "stop_reason": "end_turn"}))
            .unwrap();
        assert_eq!(
            (
                a.text.as_str(),
                a.input_tokens,
                a.output_tokens,
                a.truncated
            ),
            ("{\"a\":1}", 15, 3, false)
        );
        let o = judge(Provider::OpenAi)
            .read_reply(&json!({"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "length"}], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}))
            .unwrap();
        assert_eq!(
            (
                o.text.as_str(),
                o.input_tokens,
                o.output_tokens,
                o.truncated
            ),
            ("ok", 7, 2, true)
        );
        assert!(judge(Provider::OpenAi)
            .read_reply(&json!({"error": "x"}))
            .is_none());
    }
}
