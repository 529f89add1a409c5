//! Reading the source village for `bake`: only regular files (a link, folder or FIFO where a
//! file belongs stops the bake: a link could carry a file from outside the village into the
//! copy), at most [`MAX_FILE_BYTES`] each.

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::Path;

use super::error::BakeError;

/// The largest file `bake` copies (icons and Markdown are far smaller).
pub(super) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Whether `path` is a regular file (`Ok(false)` when absent); anything else there is an error.
pub(super) fn plain_file(path: &Path) -> Result<bool, BakeError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => {
            if meta.len() > MAX_FILE_BYTES {
                Err(BakeError::SourceFile(
                    path.to_owned(),
                    format!("larger than {MAX_FILE_BYTES} bytes"),
                ))
            } else {
                Ok(true)
            }
        }
        Ok(meta) => Err(BakeError::SourceFile(
            path.to_owned(),
            format!(
                "not a regular file (a {})",
                if meta.file_type().is_symlink() {
                    "symbolic link"
                } else if meta.is_dir() {
                    "folder"
                } else {
                    "special file"
                }
            ),
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(BakeError::SourceFile(path.to_owned(), e.to_string())),
    }
}

/// The bytes of a regular file; `None` when absent.
pub(super) fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, BakeError> {
    if !plain_file(path)? {
        return Ok(None);
    }
    let file =
        fs::File::open(path).map_err(|e| BakeError::SourceFile(path.to_owned(), e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BakeError::SourceFile(path.to_owned(), e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(BakeError::SourceFile(
            path.to_owned(),
            format!("larger than {MAX_FILE_BYTES} bytes"),
        ));
    }
    Ok(Some(bytes))
}
