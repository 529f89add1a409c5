//! The testkit's own tests: processes killed or measured from outside (helper binaries of this
//! crate).

#![allow(clippy::unwrap_used)]

mod crash;
mod memory;
