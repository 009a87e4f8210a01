//! The scaffolding every self-contained HTML page of `grade` shares (`grade compare --html`,
//! `grade report`, `--html` on a grading run): one style (`assets/page.css`), one set of
//! script helpers (`assets/page.js`: escaping, SVG bars, cards), and one way to put data and
//! text into a template. No page loads anything from the network.

/// The style of every page, in the head of each.
const STYLE: &str = include_str!("../assets/page.css");
/// The script helpers of every page, at the start of its script.
const LIB: &str = include_str!("../assets/page.js");

/// A template filled in: `__HEAD__` gets the page's start (its `TITLE` slot as its title, and
/// the shared style), `__SCRIPT__` the JSON `data` (made safe to stand inside `<script>`) and
/// the start of the page's script (the shared helpers, `D` the data; the template closes it
/// with `})();</script>`), each `__NAME__` of `slots` its text (HTML already, escaped by the
/// caller with [`html_escape`]). The template is read
/// once from start to end, so a slot's or the data's text is never searched for slots again
/// (a label holding `__SEED__` stays as it is).
pub fn fill(template: &str, slots: &[(&str, &str)], data: &str) -> String {
    // The data, then the page's script: in a function of its own, with the shared helpers
    // and the data as `D`.
    let script = format!(
        "<script type=\"application/json\" id=\"page-data\">{}</script>\n<script>\n(function () {{\n\"use strict\";\n{LIB}const D = JSON.parse(document.getElementById(\"page-data\").textContent);",
        script_json(data)
    );
    let title = slots
        .iter()
        .find(|(n, _)| *n == "TITLE")
        .map_or("", |(_, v)| *v);
    let head = format!("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title}</title>\n<style>\n{STYLE}</style>");
    let mut out = String::with_capacity(template.len() + head.len() + script.len());
    let mut rest = template;
    while let Some(at) = rest.find("__") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let name = after
            .find("__")
            .map(|end| &after[..end])
            .filter(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase()));
        let value = name.and_then(|name| match name {
            "HEAD" => Some(head.as_str()),
            "SCRIPT" => Some(script.as_str()),
            _ => slots.iter().find(|(n, _)| *n == name).map(|(_, v)| *v),
        });
        match (name, value) {
            (Some(name), Some(value)) => {
                out.push_str(value);
                rest = &after[name.len() + 2..];
            }
            _ => {
                out.push_str("__");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// JSON that can stand inside `<script type="application/json">`: `</` could close the
/// element and `<!--` open a comment, so every `<` is written `\u003c` (JSON allows it
/// wherever a string may hold `<`, the only place `<` occurs).
fn script_json(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// Text made safe to stand in HTML, in an element or a quoted attribute.
pub(crate) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_value_is_not_read_for_slots_again() {
        let page = fill(
            "<t>__TITLE__</t><s>__SEED__</s>__nope__ __",
            &[("TITLE", "__SEED__ a"), ("SEED", "7")],
            "",
        );
        assert_eq!(page, "<t>__SEED__ a</t><s>7</s>__nope__ __");
        let page = fill("__SCRIPT__", &[], "[\"__TITLE__\"]");
        assert!(page.contains(">[\"__TITLE__\"]</script>"));
    }

    #[test]
    fn data_cannot_close_its_script_element() {
        let page = fill("__SCRIPT__", &[], r#"["</script><!--"]"#);
        assert!(page.starts_with(
            r#"<script type="application/json" id="page-data">["\u003c/script>\u003c!--"]</script>"#
        ));
    }

    #[test]
    fn the_shared_head_style_and_helpers_go_in() {
        let page = fill(
            "__HEAD__<style>own</style></head>__SCRIPT__})();</script>",
            &[("TITLE", "a &amp; b")],
            "",
        );
        assert!(page.starts_with("<!doctype html>"));
        assert!(page.contains("<title>a &amp; b</title>"));
        assert!(page.contains("--muted:#667085"));
        assert!(page.contains("function bars("));
        assert!(!page.contains("__HEAD__") && !page.contains("__SCRIPT__"));
    }
}
