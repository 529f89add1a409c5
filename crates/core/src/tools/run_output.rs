//! What `run` keeps of a child's stdout or stderr: its beginning and its end, the middle cut
//! and said. A script says its verdict last (an `E-` line, a summary), so the end must reach
//! the model as surely as the beginning; the bound keeps a 100 MB output from reaching it.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes kept of each end of a stream; the rest is drained, so the child never blocks on a
/// full pipe.
const KEEP_EACH_END: usize = 32 * 1024;

/// A stream's first and last [`KEEP_EACH_END`] bytes, and how many fell between them.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
}

impl Captured {
    /// Takes the next bytes of the stream.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let room = KEEP_EACH_END
            .saturating_sub(self.head.len())
            .min(bytes.len());
        let (head, rest) = bytes.split_at(room);
        self.head.extend_from_slice(head);
        self.tail.extend(rest);
        let over = self.tail.len().saturating_sub(KEEP_EACH_END);
        self.tail.drain(..over);
        self.dropped += over as u64;
    }

    /// The text the model reads, at most about `max_chars` characters: the whole when it fits,
    /// else its first and last halves around a line that says how much was left out.
    pub(crate) fn render(&self, max_chars: usize) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.dropped == 0 {
            // Nothing fell out: the two ends are one text (a character may straddle them).
            let whole = [self.head.as_slice(), &tail].concat();
            return ends(&String::from_utf8_lossy(&whole), max_chars);
        }
        // The cut may fall inside a character: its bytes on either side of the cut go.
        let start = tail
            .iter()
            .position(|b| b & 0xC0 != 0x80)
            .unwrap_or(tail.len());
        let head = String::from_utf8_lossy(complete(&self.head));
        let tail = String::from_utf8_lossy(&tail[start..]);
        let (h, t) = (head.chars().count(), tail.chars().count());
        let half = max_chars / 2;
        let shown_head: String = head.chars().take(half).collect();
        let shown_tail: String = tail.chars().skip(t.saturating_sub(half)).collect();
        let left_out = h.saturating_sub(half) + t.saturating_sub(half);
        format!(
            "{shown_head}\n… [{left_out} characters and {} bytes omitted] …\n{shown_tail}",
            self.dropped
        )
    }
}

/// `bytes` without a character cut short at their end.
fn complete(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

/// `text` whole when it fits in `max_chars`, else its first and last halves around a line that
/// says how much was left out.
fn ends(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let half = max_chars / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(total - half).collect();
    format!(
        "{head}\n… [{} characters omitted] …\n{tail}",
        total - 2 * half
    )
}

/// Reads `stream` to its end into `kept`; the stream is dropped at its end, so a second call
/// returns at once.
pub(crate) async fn read_ends(stream: &mut Option<impl AsyncRead + Unpin>, kept: &mut Captured) {
    let Some(reader) = stream.as_mut() else {
        return;
    };
    // On the heap: an array here would sit in the future of every caller up to the turn
    // (stdout and stderr are read at once), past clippy's `large_futures` bound.
    let mut buf = vec![0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => kept.push(&buf[..n]),
        }
    }
    *stream = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_stream_is_shown_whole() {
        let mut c = Captured::default();
        c.push(b"exit soon\n");
        assert_eq!(c.render(100), "exit soon\n");
    }

    #[test]
    fn a_stream_within_both_ends_is_whole_even_with_a_character_across_them() {
        let text = format!("{}あ{}", "x".repeat(KEEP_EACH_END - 1), "y".repeat(8_000));
        let mut c = Captured::default();
        for piece in text.as_bytes().chunks(5_000) {
            c.push(piece);
        }
        assert_eq!(c.render(1_000_000), text);
    }

    #[test]
    fn a_long_stream_keeps_both_ends_and_counts_the_cut() {
        let mut c = Captured::default();
        c.push(b"FIRST\n");
        c.push(&[b'm'; 100_000]);
        c.push(b"LAST");
        let shown = c.render(1_000);
        let dropped = 100_010 - 2 * KEEP_EACH_END;
        let left_out = 2 * (KEEP_EACH_END - 500);
        assert_eq!(
            shown,
            format!(
                "FIRST\n{}\n… [{left_out} characters and {dropped} bytes omitted] …\n{}LAST",
                "m".repeat(494),
                "m".repeat(496)
            )
        );
    }

    #[test]
    fn text_over_the_limit_without_a_dropped_byte_is_cut_in_the_middle() {
        let mut c = Captured::default();
        c.push("a".repeat(300).as_bytes());
        c.push(b"END");
        assert_eq!(
            c.render(100),
            format!(
                "{}\n… [203 characters omitted] …\n{}END",
                "a".repeat(50),
                "a".repeat(47)
            )
        );
    }

    #[test]
    fn a_cut_inside_a_character_drops_its_broken_bytes() {
        let mut c = Captured::default();
        c.push(&[b'x'; KEEP_EACH_END - 1]);
        // The head ends inside a character, and the tail's bound falls inside another.
        c.push("あ".repeat(KEEP_EACH_END / 3 + 20).as_bytes());
        let shown = c.render(1_000_000);
        assert!(!shown.contains('\u{FFFD}'), "{shown}");
        assert!(shown.ends_with('あ'), "{shown}");
    }

    #[test]
    fn a_bad_byte_early_in_a_long_stream_costs_only_itself() {
        let mut c = Captured::default();
        c.push(b"A\xffB");
        c.push(&[b'm'; 3 * KEEP_EACH_END]);
        let shown = c.render(1_000_000);
        assert!(shown.starts_with("A\u{FFFD}Bmmm"), "{}", &shown[..20]);
    }

    #[tokio::test]
    async fn a_stream_is_read_to_its_end_once() {
        let mut stream = Some(&b"all of it"[..]);
        let mut c = Captured::default();
        read_ends(&mut stream, &mut c).await;
        assert_eq!(c.render(100), "all of it");
        assert!(stream.is_none());
        read_ends(&mut stream, &mut c).await;
        assert_eq!(c.render(100), "all of it");
    }
}
