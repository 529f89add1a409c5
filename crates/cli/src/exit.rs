//! Exit codes of `fuseforks-cli` (reference §3.11), in one place.

/// Success.
pub const OK: u8 = 0;
/// Boot failure: a village file is broken, missing, or could not be written.
pub const BOOT_FAILED: u8 = 5;
/// The output already holds state (`init`: a village exists at `--data-dir`).
pub const OUTPUT_EXISTS: u8 = 11;

/// The exit code for a village error.
pub fn for_village_error(err: &fuseforks_core::village::VillageError) -> u8 {
    match err {
        fuseforks_core::village::VillageError::AlreadyExists { .. } => OUTPUT_EXISTS,
        _ => BOOT_FAILED,
    }
}
