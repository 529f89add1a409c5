//! Server-Sent Events framing (the HTML standard's event stream): bytes in, events out, as the
//! body of a streamed model answer arrives. Lines end in `\n`, `\r\n` or `\r`; `data:` lines of
//! one event are joined with `\n`; `event:` names it; a line starting with `:` is a comment; a
//! blank line ends the event. An event over [`MAX_EVENT_BYTES`] is an error, never a growing
//! buffer; no input panics (proptest in the tests).

/// The largest event (its `data` lines together).
pub(crate) const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// Its `event:` name, when given.
    pub event: Option<String>,
    /// Its `data:` lines, joined with `\n`.
    pub data: String,
}

/// An event grew past [`MAX_EVENT_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge;

/// The incremental parser.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    /// The last byte was a `\r` (a following `\n` belongs to it).
    after_cr: bool,
    event: Option<String>,
    data: Vec<u8>,
    has_data: bool,
}

impl SseParser {
    /// Feeds bytes; returns the events they completed.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut out = Vec::new();
        for &b in bytes {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.line_ended(&line)? {
                        out.push(event);
                    }
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() + self.data.len() >= MAX_EVENT_BYTES {
                        return Err(EventTooLarge);
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(out)
    }

    /// The end of the body: an event not closed by a blank line still counts.
    pub(crate) fn finish(mut self) -> Result<Option<SseEvent>, EventTooLarge> {
        let line = std::mem::take(&mut self.line);
        if let Some(event) = self.line_ended(&line)? {
            return Ok(Some(event));
        }
        Ok(self.dispatch())
    }

    fn line_ended(&mut self, line: &[u8]) -> Result<Option<SseEvent>, EventTooLarge> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line.first() == Some(&b':') {
            return Ok(None);
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                if self.data.len() + value.len() > MAX_EVENT_BYTES {
                    return Err(EventTooLarge);
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        let data = String::from_utf8_lossy(&std::mem::take(&mut self.data)).into_owned();
        Some(SseEvent { event, data })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{SseEvent, SseParser};
    use proptest::prelude::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.push(c).unwrap());
        }
        out.extend(p.finish().unwrap());
        out
    }

    #[test]
    fn events_are_framed_whatever_the_chunking() {
        let body = b"event: message_start\r\ndata: {\"a\":1}\r\n\r\n: ping\n\ndata: one\ndata: two\n\ndata:[DONE]";
        let whole = all(&[body]);
        assert_eq!(
            whole,
            vec![
                SseEvent {
                    event: Some("message_start".into()),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "one\ntwo".into()
                },
                SseEvent {
                    event: None,
                    data: "[DONE]".into()
                },
            ]
        );
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(all(&bytes), whole, "byte by byte");
    }

    #[test]
    fn an_endless_event_is_refused() {
        let mut p = SseParser::default();
        let big = vec![b'x'; super::MAX_EVENT_BYTES + 10];
        assert!(p.push(b"data: ").is_ok());
        assert!(p.push(&big).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn no_input_panics_and_chunking_never_changes_the_events(
            body in prop::collection::vec(prop::sample::select(vec![b'a', b':', b' ', b'\n', b'\r', b'd', b'e']), 0..200),
            cut in 0usize..200,
        ) {
            let cut = cut.min(body.len());
            let whole = all(&[&body]);
            let split = all(&[&body[..cut], &body[cut..]]);
            prop_assert_eq!(whole, split);
        }
    }
}
