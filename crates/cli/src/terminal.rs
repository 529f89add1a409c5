//! Untrusted text (a model's answer, a server's message) on its way out. On **stderr** —
//! a terminal, a pipe or a log file read later — escape sequences, other control characters
//! and the invisible bidi and format controls are always removed, so that a line can neither
//! move the cursor, retitle the window, hide what came before nor show its words reordered.
//! On **stdout** the same holds on a terminal; text for a pipe or a file (an answer, the
//! product) is left exactly as it is. Newlines and tabs stay.

use std::borrow::Cow;
use std::io::IsTerminal;

/// `text` as it may be shown on stdout.
pub(crate) fn for_stdout(text: &str) -> Cow<'_, str> {
    if std::io::stdout().is_terminal() {
        strip(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` as it may be written to stderr, whatever stderr is.
pub(crate) fn for_stderr(text: &str) -> Cow<'_, str> {
    strip(text)
}

/// Bidi embeddings, overrides and isolates, marks, and the other invisible format characters
/// that reorder or hide text (`Cf` characters that show nothing).
fn is_invisible_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

/// Removes ANSI escape sequences (CSI, OSC, DCS and two-byte ones), C1 controls, every other
/// control character but newline and tab, and the invisible bidi and format controls.
pub(crate) fn strip(text: &str) -> Cow<'_, str> {
    let keep = |c: char| (!c.is_control() || c == '\n' || c == '\t') && !is_invisible_control(c);
    if text.chars().all(keep) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_sequence(&mut chars),
            '\u{9b}' => skip_csi(&mut chars),
            c if keep(c) => out.push(c),
            _ => {}
        }
    }
    Cow::Owned(out)
}

fn skip_sequence(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        // OSC, DCS, SOS, PM, APC: up to BEL or ST (ESC \).
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        }
        _ => {}
    }
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn escape_sequences_and_controls_are_removed() {
        assert_eq!(strip("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(strip("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(strip("\u{1b}]0;evil title\u{7}after"), "after");
        assert_eq!(strip("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(strip("a\rb\u{8}c\u{9b}2Jd"), "abcd");
        assert_eq!(
            strip("kid \u{202e}\u{2066}evil\u{2069}\u{200f}\u{feff}"),
            "kid evil"
        );
        assert_eq!(strip("日本語 ok"), "日本語 ok", "visible text stays");
    }
}
