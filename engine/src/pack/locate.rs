//! Places in `rubric.yaml`: maps a key path (`dimensions[0].rules[1].for_each`) to the line
//! and column where it is written, so every problem can point at its text.
//!
//! serde_yaml reports a location only for the first error it stops at; the compiler finds
//! problems by path, so the places are read once from the parser's event stream.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The 1-based line.
    pub line: usize,
    /// The 1-based column, in characters.
    pub column: usize,
}

/// Where each path's key and value are written.
#[derive(Debug, Default)]
pub struct Places {
    keys: HashMap<String, Place>,
    values: HashMap<String, Place>,
}

impl Places {
    pub fn read(text: &str) -> Places {
        let mut recorder = Recorder::default();
        // A YAML syntax error is reported by serde_yaml with its own location; the places
        // gathered up to it are still good.
        let _ = Parser::new_from_str(text).load(&mut recorder, false);
        recorder.places
    }

    /// The place of `path`: its key for a problem with the key itself, else its value; a
    /// path that is not written (a default) falls back to its nearest written parent.
    pub fn find(&self, path: &str, prefer_key: bool) -> Option<Place> {
        let mut path = path;
        loop {
            let hit = if prefer_key {
                self.keys.get(path).or_else(|| self.values.get(path))
            } else {
                self.values.get(path).or_else(|| self.keys.get(path))
            };
            if let Some(place) = hit {
                return Some(*place);
            }
            let cut = path.rfind(['.', '['])?;
            path = &path[..cut];
        }
    }
}

enum Frame {
    Mapping { key: Option<String> },
    Sequence { index: usize },
}

/// A collection's own marker is not where its text starts (for a block mapping it sits
/// after the first key), so its place is taken from its first key or item.
struct Pending {
    depth: usize,
    path: String,
}

#[derive(Default)]
struct Recorder {
    stack: Vec<Frame>,
    pending: Vec<Pending>,
    places: Places,
}

impl Recorder {
    fn current_path(&self) -> String {
        let mut path = String::new();
        for frame in &self.stack {
            match frame {
                Frame::Mapping { key: Some(key) } => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                }
                Frame::Mapping { key: None } => {}
                Frame::Sequence { index } => path.push_str(&format!("[{index}]")),
            }
        }
        path
    }

    fn place(mark: Marker) -> Place {
        Place {
            line: mark.line(),
            column: mark.col() + 1,
        }
    }

    /// A value (scalar or collection) starts here.
    fn value_at(&mut self, mark: Marker) {
        let path = self.current_path();
        self.places.values.entry(path).or_insert(Self::place(mark));
    }

    /// The collections opened at this depth get their place: here, where their first key or
    /// item starts (or, for an empty one, where it ends).
    fn settle_pending(&mut self, mark: Marker) {
        while self
            .pending
            .last()
            .is_some_and(|p| p.depth == self.stack.len())
        {
            if let Some(p) = self.pending.pop() {
                self.places
                    .values
                    .entry(p.path)
                    .or_insert(Self::place(mark));
            }
        }
    }

    /// A value finished: the parent moves to its next key or item.
    fn advance(&mut self) {
        match self.stack.last_mut() {
            Some(Frame::Mapping { key }) => *key = None,
            Some(Frame::Sequence { index }) => *index += 1,
            None => {}
        }
    }
}

impl MarkedEventReceiver for Recorder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let awaiting_key = matches!(self.stack.last(), Some(Frame::Mapping { key: None }));
        let starts_content = matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(_)
                | Event::MappingStart(..)
                | Event::SequenceStart(..)
        );
        if starts_content {
            self.settle_pending(mark);
        }
        match event {
            Event::Scalar(text, ..) if awaiting_key => {
                if let Some(Frame::Mapping { key }) = self.stack.last_mut() {
                    *key = Some(text);
                }
                let path = self.current_path();
                self.places.keys.entry(path).or_insert(Self::place(mark));
            }
            Event::Scalar(..) | Event::Alias(_) => {
                self.value_at(mark);
                self.advance();
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if !awaiting_key {
                    let path = self.current_path();
                    self.pending.push(Pending {
                        depth: self.stack.len() + 1,
                        path,
                    });
                }
                self.stack
                    .push(if matches!(event, Event::MappingStart(..)) {
                        Frame::Mapping { key: None }
                    } else {
                        Frame::Sequence { index: 0 }
                    });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                // An empty collection: its own marker is the best place there is.
                self.settle_pending(mark);
                self.stack.pop();
                self.advance();
            }
            _ => {}
        }
    }
}

/// The source line of a place with a caret under it, as compilers print it.
pub fn snippet(text: &str, place: Place) -> Option<String> {
    // Parsers report an unexpected end of file one line past the last; show the last line.
    let count = text.lines().count();
    let place = if place.line > count && count > 0 {
        let last = text.lines().last()?;
        Place {
            line: count,
            column: last.chars().count() + 1,
        }
    } else {
        place
    };
    let line = text.lines().nth(place.line.checked_sub(1)?)?;
    let start = line
        .char_indices()
        .nth(place.column.saturating_sub(1))
        .map_or(line.len(), |(i, _)| i);
    let rest = &line[start..];
    let width = token_width(rest).max(1);
    let gutter = place.line.to_string().len();
    let pad = line[..start].chars().count();
    Some(format!(
        "{:gutter$} |\n{} | {line}\n{:gutter$} | {}{}",
        "",
        place.line,
        "",
        " ".repeat(pad),
        "^".repeat(width)
    ))
}

/// The width of the token at the start of `rest`: a quoted string, or up to a separator.
fn token_width(rest: &str) -> usize {
    let mut chars = rest.chars();
    match chars.next() {
        Some(q @ ('"' | '\'')) => {
            let mut n = 1;
            for c in chars {
                n += 1;
                if c == q {
                    break;
                }
            }
            n
        }
        Some(first) => {
            let token: String = rest
                .chars()
                .take_while(|c| !matches!(c, ',' | '}' | ']' | '#'))
                .collect();
            // A key is underlined without its value; a flow collection is underlined whole.
            let token = match token.find(": ") {
                Some(cut) if !matches!(first, '{' | '[') => &token[..cut],
                _ => token.as_str(),
            };
            token.trim_end().trim_end_matches(':').chars().count()
        }
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "id: x\ndimensions:\n  - id: d\n    rules:\n      - id: r\n        for_each: tsk_op\n        flag: { text: 1 }\n";

    #[test]
    fn keys_and_values_are_found_by_path() {
        let places = Places::read(TEXT);
        assert_eq!(
            places.find("dimensions[0].rules[0].for_each", false),
            Some(Place {
                line: 6,
                column: 19
            })
        );
        assert_eq!(
            places.find("dimensions[0].rules[0].for_each", true),
            Some(Place { line: 6, column: 9 })
        );
        assert_eq!(
            places.find("dimensions[0].rules[0].flag.text", true),
            Some(Place {
                line: 7,
                column: 17
            })
        );
    }

    #[test]
    fn a_path_not_written_falls_back_to_its_parent() {
        let places = Places::read(TEXT);
        assert_eq!(
            places.find("dimensions[0].rules[0].points.metric", true),
            places.find("dimensions[0].rules[0]", false)
        );
    }

    #[test]
    fn the_snippet_underlines_the_token() {
        let places = Places::read(TEXT);
        let at = places
            .find("dimensions[0].rules[0].for_each", false)
            .unwrap();
        assert_eq!(
            snippet(TEXT, at).unwrap(),
            "  |\n6 |         for_each: tsk_op\n  |                   ^^^^^^"
        );
    }
}
