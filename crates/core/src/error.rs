//! [`Coded`], the one way every error of the workspace gives its code and fix to an edge. A
//! leaf: the errors of every floor implement it (ARCHITECTURE.md, "Core's floors").

/// An error with a stable machine code (UPPER_SNAKE) and, where it has one, what to change.
/// Its `Display` is the message alone: no `[CODE] ` prefix and no `Fix:` text, so that an
/// edge (the CLI, the door, the GUI) renders code, message and fix from these fields and never
/// parses text.
pub trait Coded: std::error::Error {
    /// The stable machine code.
    fn code(&self) -> &'static str;
    /// What to change, when the error has a fix.
    fn fix(&self) -> Option<String> {
        None
    }
}
