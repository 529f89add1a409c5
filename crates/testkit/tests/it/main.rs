//! The testkit's own tests: processes killed or measured from outside (helper binaries of this
//! crate).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "a test crate: its helpers fail the calling test with a panic that says why, and say skips on stderr"
)]

mod crash;
mod memory;
