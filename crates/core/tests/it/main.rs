//! Integration tests of `fuseforks-core`: real files in temporary folders, the original's
//! village fixture, broken-file corpora.

#![allow(clippy::unwrap_used)]

mod broken_files;
mod founding;
mod original_village;
mod other_files;
mod round_trip;
