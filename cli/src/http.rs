//! One way to call an HTTP API for every client in the binary (model judges, Langfuse reads
//! and pushes): blocking ureq, no redirects followed (a redirect is not an answer), retries
//! with exponential backoff on 429, 5xx, 408, 409 and transport errors, honouring the
//! server's `retry-after-ms` or `retry-after` (seconds or an HTTP date), as the official
//! Anthropic, OpenAI and Langfuse SDKs do.
//!
//! An address may carry credentials (`http://user:secret@host`, as some proxies want them):
//! every address the binary prints goes through [`redact_userinfo`], by way of [`Address`]'s
//! `Display` or directly for text that holds one (ureq's errors name the URL they failed on).

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

/// The address of a server, as it is requested (`as_str`) and as it is shown (`Display`,
/// `Debug`: its userinfo, where it has one, redacted).
#[derive(Clone, PartialEq, Eq)]
pub struct Address(String);

impl Address {
    pub fn new(url: impl Into<String>) -> Address {
        Address(url.into())
    }

    /// The address to request, credentials included: never print this.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// This address followed by `path`.
    pub fn join(&self, path: &str) -> Address {
        Address(format!("{}{path}", self.0))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.contains("://") {
            f.write_str(&redact_userinfo(&self.0))
        } else {
            // Not a URL (a mistyped variable): what comes before its first `/` is where the
            // userinfo would be.
            f.write_str(&redact_userinfo(&format!("://{}", self.0))[3..])
        }
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Address({self})")
    }
}

/// `text` with the userinfo of every URL in it (`scheme://USERINFO@host`) replaced by `***`,
/// so an error or a report never shows a password or token given in an address.
pub fn redact_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The authority ends where the path, query or fragment starts, or where the text
        // around the URL resumes.
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '`' | '"' | '\'' | '<' | '>' | '\\')
                    || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(userinfo_end) => {
                out.push_str("***");
                out.push_str(&authority[userinfo_end..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// How often and how long to retry.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// Wait before the first retry; each further retry waits twice as long.
    pub backoff: Duration,
    /// No single wait is longer than this, whatever the server asks.
    pub max_wait: Duration,
}

/// A request: method, URL, headers and an optional JSON body.
pub struct Request<'a> {
    pub method: &'a str,
    pub url: &'a Address,
    pub headers: Vec<(&'a str, String)>,
    pub body: Option<&'a str>,
}

/// A 2xx answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    /// How many retries it took.
    pub retries: u32,
}

/// Why a request got no 2xx answer.
#[derive(Debug)]
pub enum Failure {
    /// The server answered with a status that is not retried (or ran out of retries).
    Status {
        status: u16,
        body: String,
        /// Where a redirect pointed.
        location: Option<String>,
        attempts: u32,
    },
    /// No answer at all.
    Transport { message: String, attempts: u32 },
}

impl Failure {
    /// A one-line description: the status and the start of what the server said.
    pub fn describe(&self) -> String {
        match self {
            Failure::Status {
                status,
                body,
                location,
                attempts,
            } => {
                let mut out = format!("{status} {}", reason(*status));
                if let Some(to) = location {
                    let to = redact_userinfo(to);
                    out.push_str(&format!(" to `{to}` (redirects are not followed)"));
                }
                let said = grade_engine::judgment::quote_start(body, 200);
                if !said.is_empty() {
                    out.push_str(&format!(": {said}"));
                }
                if *attempts > 1 {
                    out.push_str(&format!(" (after {attempts} attempts)"));
                }
                out
            }
            Failure::Transport { message, attempts } if *attempts > 1 => {
                format!("{message} (after {attempts} attempts)")
            }
            Failure::Transport { message, .. } => message.clone(),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// An agent that waits at most `timeout` for each answer and follows no redirect.
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(timeout)
        .redirects(0)
        .build()
}

fn retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// Sends a request, retrying as the module says; only a 2xx status is an answer.
pub fn send(agent: &ureq::Agent, request: &Request<'_>, retry: Retry) -> Result<Reply, Failure> {
    let mut attempt = 1;
    loop {
        let mut call = agent.request(request.method, request.url.as_str());
        for (name, value) in &request.headers {
            call = call.set(name, value);
        }
        let outcome = match request.body {
            Some(body) => call
                .set("Content-Type", "application/json")
                .send_string(body),
            None => call.call(),
        };
        let (failure, asked_wait) = match outcome {
            Ok(response) if (200..300).contains(&response.status()) => {
                let status = response.status();
                let body = response.into_string().map_err(|e| Failure::Transport {
                    message: format!(
                        "cannot read the answer: {}",
                        redact_userinfo(&e.to_string())
                    ),
                    attempts: attempt,
                })?;
                return Ok(Reply {
                    status,
                    body,
                    retries: attempt - 1,
                });
            }
            // A redirect or a 1xx: not an answer, and not retried.
            Ok(response) => {
                let status = response.status();
                let location = response.header("location").map(str::to_owned);
                return Err(Failure::Status {
                    status,
                    body: response.into_string().unwrap_or_default(),
                    location,
                    attempts: attempt,
                });
            }
            Err(ureq::Error::Status(status, response)) => {
                let wait = asked_wait(&response);
                let body = response.into_string().unwrap_or_default();
                let failure = Failure::Status {
                    status,
                    body,
                    location: None,
                    attempts: attempt,
                };
                if !retryable(status) {
                    return Err(failure);
                }
                (failure, wait)
            }
            Err(ureq::Error::Transport(t)) => (
                Failure::Transport {
                    // ureq names the URL, credentials and all.
                    message: redact_userinfo(&t.to_string()).into_owned(),
                    attempts: attempt,
                },
                None,
            ),
        };
        if attempt >= retry.attempts {
            return Err(failure);
        }
        let backoff = retry.backoff.saturating_mul(1u32 << (attempt - 1).min(16));
        std::thread::sleep(asked_wait.unwrap_or(backoff).min(retry.max_wait));
        attempt += 1;
    }
}

/// How long the server asked to wait: `retry-after-ms`, else `retry-after` in (possibly
/// fractional) seconds or as an HTTP date.
fn asked_wait(response: &ureq::Response) -> Option<Duration> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_millis();
    wait_from_headers(
        response.header("retry-after-ms"),
        response.header("retry-after"),
        i64::try_from(now).ok()?,
    )
}

/// The wait the headers ask for, at `now` (milliseconds since the epoch). A header that is
/// no wait (not a number or a date, NaN, infinite, negative) counts as absent; a wait too
/// long to hold is the longest one, which [`send`] cuts to [`Retry::max_wait`] like any
/// other: a server's `retry-after: 1e300` made `Duration::from_secs_f64` panic.
fn wait_from_headers(ms: Option<&str>, seconds: Option<&str>, now: i64) -> Option<Duration> {
    if let Some(ms) = ms.and_then(|v| seconds_of(v, 1000.0)) {
        return Some(ms);
    }
    let value = seconds?.trim();
    if value.parse::<f64>().is_ok() {
        return seconds_of(value, 1.0);
    }
    let at = http_date_ms(value)?;
    Some(Duration::from_millis(
        u64::try_from(at.saturating_sub(now)).unwrap_or(0),
    ))
}

/// `value / per_second` seconds, when `value` is a finite number not below zero.
fn seconds_of(value: &str, per_second: f64) -> Option<Duration> {
    let n = value.trim().parse::<f64>().ok()?;
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(n / per_second).unwrap_or(Duration::MAX))
}

/// Milliseconds since the epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn http_date_ms(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)?
        + 1;
    let iso = format!("{year}-{month:02}-{:0>2}T{time}Z", day);
    grade_engine::time::parse_timestamp(&iso).ok()
}

/// `Authorization: Basic` for a key pair.
pub fn basic_auth(user: &str, password: &str) -> String {
    format!("Basic {}", base64(format!("{user}:{password}").as_bytes()))
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64(b"pk-lf-1:sk-lf-2"), "cGstbGYtMTpzay1sZi0y");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
    }

    #[test]
    fn http_dates_are_read() {
        assert_eq!(
            http_date_ms("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777_000)
        );
        assert_eq!(http_date_ms("soon"), None);
    }

    #[test]
    fn credentials_in_an_address_are_never_shown() {
        let shown = |url: &str| Address::new(url).to_string();
        assert_eq!(
            shown("http://user:secret@host:3000"),
            "http://***@host:3000"
        );
        assert_eq!(
            shown("https://tok@en:p@ss@example.com/v1?key=1"),
            "https://***@example.com/v1?key=1"
        );
        assert_eq!(
            shown("https://cloud.langfuse.com"),
            "https://cloud.langfuse.com"
        );
        assert_eq!(shown("user:secret@host/api"), "***@host/api");
        assert_eq!(shown("localhost:3000"), "localhost:3000");
        assert_eq!(
            format!("{:?}", Address::new("http://a:b@h")),
            "Address(http://***@h)"
        );
        assert_eq!(
            redact_userinfo(
                "http://u:s@127.0.0.1:1/api/public/scores: Connection Failed; see `https://x:y@h`"
            ),
            "http://***@127.0.0.1:1/api/public/scores: Connection Failed; see `https://***@h`"
        );
        assert_eq!(redact_userinfo("no address here"), "no address here");
        assert_eq!(
            redact_userinfo("mail a@b, then http://h/@x"),
            "mail a@b, then http://h/@x"
        );
    }

    #[test]
    fn retry_after_beyond_any_duration_nan_or_negative_does_not_panic() {
        let now = 784_111_777_000;
        let huge = Some(Duration::MAX);
        assert_eq!(wait_from_headers(None, Some("1e300"), now), huge);
        assert_eq!(wait_from_headers(Some("1e308"), None, now), huge);
        assert_eq!(wait_from_headers(None, Some("NaN"), now), None);
        assert_eq!(wait_from_headers(None, Some("inf"), now), None);
        assert_eq!(wait_from_headers(None, Some("-5"), now), None);
        assert_eq!(wait_from_headers(Some("-1"), None, now), None);
        // A nonsense `retry-after-ms` counts as absent, so `retry-after` is read.
        assert_eq!(
            wait_from_headers(Some("nan"), Some("2"), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            wait_from_headers(Some("1500"), Some("9"), now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            wait_from_headers(None, Some("Sun, 06 Nov 1994 08:49:47 GMT"), now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            wait_from_headers(None, Some("Sun, 06 Nov 1994 08:49:27 GMT"), now),
            Some(Duration::ZERO)
        );
        assert_eq!(wait_from_headers(None, Some("soon"), now), None);
    }
}
