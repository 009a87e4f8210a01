//! A judge's reply read for the JSON of its judgment: the whole reply, a fenced block, or
//! the one object in its prose.

use serde_json::Value;

/// The JSON in a judge's reply: the whole reply when it is JSON, else the first fenced
/// ```json block that parses, else the one JSON object written somewhere in the prose.
///
/// A reply with several JSON objects in its prose and no fenced block is refused: which
/// of them is the judgment would be a guess.
pub fn find_judgment_json(reply: &str) -> Result<&str, ReplyError> {
    let trimmed = reply.trim();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok()
    {
        return Ok(trimmed);
    }
    let mut rest = trimmed;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        // The info string (`json`, `JSON`, or none) runs to the end of the fence's line.
        let (info, body) = after.split_once('\n').unwrap_or((after, ""));
        let Some(end) = body.find("```") else { break };
        let block = body[..end].trim();
        let info = info.trim();
        if (info.is_empty() || info.eq_ignore_ascii_case("json"))
            && serde_json::from_str::<serde::de::IgnoredAny>(block).is_ok()
        {
            return Ok(block);
        }
        rest = &body[end + 3..];
    }
    let objects = json_objects_in(trimmed);
    // A reply that opens an object and breaks off or goes wrong inside it says what went
    // wrong better than "no JSON" would, or than an inner object read as the judgment.
    if let Some(start) = first_object_start(trimmed) {
        let broken = broken_json(&trimmed[start..]);
        let end = object_end(trimmed.as_bytes(), start);
        // Objects that lie within a closed but malformed outer object are parts of it (a
        // dimension's `{"score": …}`), not the judgment.
        let only_parts = end.is_some_and(|end| objects.iter().all(|o| o.start < end));
        match broken {
            Some(ReplyError::CutShort) if end.is_none() => return Err(ReplyError::CutShort),
            Some(why) if objects.is_empty() || only_parts => return Err(why),
            _ => {}
        }
    }
    match objects.as_slice() {
        [one] => Ok(&trimmed[one.clone()]),
        [] => Err(ReplyError::NoJson),
        many => Err(ReplyError::Ambiguous(many.len())),
    }
}

/// Where the first `{` outside a closed fenced block is.
fn first_object_start(text: &str) -> Option<usize> {
    let mut at = 0;
    loop {
        let open = text[at..].find("```").map(|o| at + o);
        let brace = text[at..].find('{').map(|b| at + b)?;
        match open {
            Some(open) if open < brace => {
                let Some(close) = text[open + 3..].find("```") else {
                    return Some(brace);
                };
                at = open + 3 + close + 3;
            }
            _ => return Some(brace),
        }
    }
}

/// Why the JSON value `text` starts with does not read: cut short (the text ends inside
/// it) or malformed; `None` when it reads.
fn broken_json(text: &str) -> Option<ReplyError> {
    // Read as a `Value`, whose errors name the fault (`trailing comma`) where a skipped
    // value's would not.
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Err(e)) if e.is_eof() => Some(ReplyError::CutShort),
        Some(Err(e)) => Some(ReplyError::Malformed(e.to_string())),
        _ => None,
    }
}

/// Why a judge's reply holds no judgment to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// The reply holds no JSON.
    #[error("the reply is not JSON and holds no JSON object")]
    NoJson,
    /// The reply holds several JSON objects and no fenced block.
    #[error("the reply holds {0} JSON objects and no fenced ```json block, so which one is the judgment is unclear")]
    Ambiguous(usize),
    /// The reply's JSON ends before it closes: the judge ran out of output tokens, or its
    /// answer was cut off.
    #[error("the reply's JSON is cut short: it ends before its object closes, as when the judge runs out of output tokens (raise `max_tokens` in the pack's `judge` and grade again)")]
    CutShort,
    /// The reply's JSON is complete but not valid JSON.
    #[error("the reply's JSON is malformed ({0}), not cut short: grade again to ask anew, and if the judge keeps writing it, tell it in the pack's prompt to answer with one JSON object")]
    Malformed(String),
}

/// Where the outermost JSON objects written in a text's prose are, in order (strings inside
/// them may hold braces, and fenced code blocks hold code; neither counts).
fn json_objects_in(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut fenced = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find("```") {
        let open = at + open;
        let Some(close) = text[open + 3..].find("```") else {
            break;
        };
        let close = open + 3 + close + 3;
        fenced.push(open..close);
        at = close;
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(fence) = fenced.iter().find(|f| f.contains(&i)) {
            i = fence.end;
            continue;
        }
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        match object_end(bytes, i) {
            Some(end)
                if serde_json::from_str::<serde_json::Map<String, Value>>(&text[i..end])
                    .is_ok() =>
            {
                found.push(i..end);
                i = end;
            }
            _ => i += 1,
        }
    }
    found
}

/// Where the object opened at `start` closes (one past its `}`), by brace depth outside
/// strings; `None` when it never closes.
fn object_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}
