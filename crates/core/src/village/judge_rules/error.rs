//! What is wrong with a judge file: located findings (`INVALID_JUDGE_FILE`, line:col, fix).

use std::fmt;

use crate::error::Coded;

/// The code of every finding in a judge file.
pub const INVALID_JUDGE_FILE: &str = "INVALID_JUDGE_FILE";

/// One located problem of a `judge.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What is wrong (no file content beyond names and short literals).
    pub message: String,
    /// What to change.
    pub fix: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} {INVALID_JUDGE_FILE} {}",
            self.line, self.col, self.message
        )
    }
}

impl std::error::Error for Finding {}

impl Coded for Finding {
    fn code(&self) -> &'static str {
        INVALID_JUDGE_FILE
    }
    fn fix(&self) -> Option<crate::error::Fix> {
        Some(self.fix.clone().into())
    }
}

/// Maps byte offsets of a text to 1-based line and column (columns in characters). Line
/// starts are found once, so each lookup is a binary search plus one line's characters.
#[derive(Debug, Clone)]
pub struct Locator<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Locator<'a> {
    /// A locator over `text`.
    pub fn new(text: &'a str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self { text, line_starts }
    }

    /// Line and column of a byte offset (clamped to the text, rounded down to a char boundary).
    pub fn at(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|s| *s <= offset);
        let start = self.line_starts[line.saturating_sub(1)];
        let col = self.text[start..offset].chars().count() + 1;
        (line.max(1), col)
    }

    /// A finding at a byte offset.
    pub fn finding(
        &self,
        offset: usize,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        let (line, col) = self.at(offset);
        Finding {
            line,
            col,
            message: message.into(),
            fix: fix.into(),
        }
    }
}
