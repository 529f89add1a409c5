//! The village's `attachments/` folder as the startup block reports it: how many files, how
//! many bytes, by kind. Read only: nothing here removes a file (see
//! `docs/formats/log-lines.md`, "The startup block").

use std::path::Path;

/// The most entries looked at; a folder beyond it is reported as far as it was read.
const MAX_ENTRIES: usize = 100_000;

/// The kinds of attachment the original's village stores, in the line's order.
const KINDS: [&str; 4] = ["image", "audio", "video", "pdf"];

/// What `attachments/` holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttachmentSurvey {
    /// Regular files found.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Bytes per kind, in [`KINDS`] order (files of no known kind count in `bytes` only).
    pub kind_bytes: [u64; 4],
    /// Files removed by this run (none: attachments are not sent yet, so nothing is collected).
    pub removed: u64,
}

impl AttachmentSurvey {
    /// Surveys `workspace/attachments` without following links; a missing or unreadable
    /// folder is an empty survey.
    pub fn of(workspace: &Path) -> Self {
        let mut survey = Self::default();
        let Ok(entries) = std::fs::read_dir(workspace.join("attachments")) else {
            return survey;
        };
        for entry in entries.take(MAX_ENTRIES).flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            survey.files += 1;
            survey.bytes += meta.len();
            if let Some(kind) = kind_of(&entry.path()) {
                survey.kind_bytes[kind] += meta.len();
            }
        }
        survey
    }

    /// The startup block's `attachment gc:` line.
    pub fn line(&self) -> String {
        let kinds: Vec<String> = KINDS
            .iter()
            .zip(self.kind_bytes)
            .map(|(kind, bytes)| format!("{kind}:{bytes}"))
            .collect();
        format!(
            "attachment gc: removed={} remaining={} bytes={} kinds={}",
            self.removed,
            self.files,
            self.bytes,
            kinds.join(",")
        )
    }
}

/// The index in [`KINDS`] of a file's kind, by its extension.
fn kind_of(path: &Path) -> Option<usize> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "webp" | "png" | "jpg" | "jpeg" | "gif" => Some(0),
        "mp3" | "wav" | "ogg" | "m4a" => Some(1),
        "mp4" | "webm" | "mov" => Some(2),
        "pdf" => Some(3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_is_an_empty_line() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            AttachmentSurvey::of(dir.path()).line(),
            "attachment gc: removed=0 remaining=0 bytes=0 kinds=image:0,audio:0,video:0,pdf:0"
        );
    }

    #[test]
    fn files_are_counted_by_kind_and_links_and_folders_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("attachments");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("a.webp"), [0u8; 10]).unwrap();
        std::fs::write(folder.join("b.PDF"), [0u8; 7]).unwrap();
        std::fs::write(folder.join("c.bin"), [0u8; 3]).unwrap();
        std::fs::create_dir(folder.join("d.mp4")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", folder.join("e.mp3")).unwrap();
        let survey = AttachmentSurvey::of(dir.path());
        assert_eq!(
            survey.line(),
            "attachment gc: removed=0 remaining=3 bytes=20 kinds=image:10,audio:0,video:0,pdf:7"
        );
    }
}
