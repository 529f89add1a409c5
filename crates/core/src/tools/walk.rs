//! The one folder walk of `grep`, `fd` and `rag`: ripgrep's `ignore` walker with every ignore
//! source of its own turned off, and `.ignore` / `.gitignore` read here, through the jail.
//!
//! `ignore::WalkBuilder` reads `.ignore`, `.gitignore`, the parent folders' ignore files,
//! `.git/info/exclude` and the user's global gitignore by path, following links, unbounded (a
//! `.ignore -> /dev/zero` took gigabytes, a FIFO one held the tool, one linked out of the work
//! folder was obeyed). Here, for each folder the walk meets — the folders it enters and those
//! between the jail's root and its start — that folder's `.ignore` and `.gitignore` are read
//! with [`WorkDir::read_text_at`]: beneath the folder handle, no link leaving it, a FIFO or a
//! device refused without blocking, at most 64 KiB, and 256 KiB for the whole walk. One that
//! cannot be read so (a link out, not a regular file, larger than 64 KiB, past the walk's
//! 256 KiB, not UTF-8) is treated as absent, and the answer says so
//! in one `note:` line. The rules are gitignore's (`GitignoreBuilder::add_line`; a malformed
//! line is skipped): the deepest folder with a matching line decides, `.ignore` before
//! `.gitignore` in one folder, the last matching line of a file wins (so `!` whitelists), a
//! folder left out is not entered. `.gitignore` applies whether or not the folder is a git
//! repository. Never read: `.git/info/exclude`, the global gitignore, ignore files above the
//! jail's root. Links are not followed, `.git` folders are skipped, the start itself is always
//! walked, and each caller opens every file it reads through the jail itself.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, Match};

use super::cap;
use super::sandbox::{ReadError, SandboxError, WorkDir};
use crate::sync::LockOrRecover;

/// The ignore files of a folder, in the order they are asked.
const IGNORE_FILES: [&str; 2] = [".ignore", ".gitignore"];
/// The most bytes read of one ignore file; a longer one is treated as absent.
const IGNORE_MAX_BYTES: u64 = 64 * 1024;
/// The most bytes of ignore files one walk reads in all (building the rules of 64 KiB of costly
/// globs takes ≈ 0.7 s and ≈ 50 MB in a debug build); past it, ignore files are treated as absent.
const WALK_MAX_BYTES: u64 = 256 * 1024;
/// The most `note:` lines one answer carries, and their characters in all.
const MAX_NOTES: usize = 20;
const NOTES_MAX_CHARS: usize = 2_000;

/// Whether files and folders whose names start with `.` are walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hidden {
    /// Walked (`grep`, `fd`).
    Shown,
    /// Left out (`rag`).
    Skipped,
}

/// A walk from a folder (or a file) inside a jail; yields the entries the rules keep.
pub(crate) struct Walk {
    entries: ignore::Walk,
    rules: Arc<Mutex<Rules>>,
}

impl Walk {
    /// Walks `start`, a path beneath `jail`'s root.
    pub(crate) fn new(jail: &WorkDir, start: &Path, hidden: Hidden) -> Self {
        let rules = Arc::new(Mutex::new(Rules::new(jail.clone())));
        let filter = Arc::clone(&rules);
        let entries = ignore::WalkBuilder::new(start)
            .standard_filters(false)
            .ignore(false)
            .git_ignore(false)
            .git_global(false)
            .git_exclude(false)
            .parents(false)
            .hidden(hidden == Hidden::Skipped)
            .follow_links(false)
            .filter_entry(move |e| e.file_name() != ".git" && filter.lock_or_recover().keeps(e))
            .build();
        Self { entries, rules }
    }

    /// The `note:` lines of the ignore files treated as absent so far.
    pub(crate) fn notes(&self) -> Vec<String> {
        let rules = self.rules.lock_or_recover();
        let mut notes = rules.notes.clone();
        if rules.more > 0 {
            notes.push(format!("note: {} more ignore files ignored", rules.more));
        }
        notes
    }
}

impl Iterator for Walk {
    type Item = DirEntry;

    fn next(&mut self) -> Option<DirEntry> {
        self.entries.by_ref().find_map(Result::ok)
    }
}

/// `body`, then the notes (if any), each on its own line.
pub(crate) fn with_notes(body: String, notes: &[String]) -> String {
    if notes.is_empty() {
        return body;
    }
    format!("{body}\n{}", cap(&notes.join("\n"), NOTES_MAX_CHARS))
}

/// The rules of the folders met so far, read once each, and the notes.
struct Rules {
    jail: WorkDir,
    folders: HashMap<PathBuf, Arc<[Gitignore]>>,
    notes: Vec<String>,
    more: usize,
    /// Bytes of ignore files read so far.
    spent: u64,
}

impl Rules {
    fn new(jail: WorkDir) -> Self {
        Self {
            jail,
            folders: HashMap::new(),
            notes: Vec::new(),
            more: 0,
            spent: 0,
        }
    }

    /// Whether `entry` is walked: the deepest folder with a matching line decides.
    fn keeps(&mut self, entry: &DirEntry) -> bool {
        let Ok(rel) = entry.path().strip_prefix(self.jail.root()) else {
            return true;
        };
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        // The walk goes depth first: only the rules of this entry's folders are needed again.
        self.folders.retain(|folder, _| rel.starts_with(folder));
        for folder in rel.ancestors().skip(1) {
            let Ok(inside) = rel.strip_prefix(folder) else {
                continue;
            };
            for rules in self.folder(folder).iter() {
                match rules.matched(inside, is_dir) {
                    Match::Ignore(_) => return false,
                    Match::Whitelist(_) => return true,
                    Match::None => {}
                }
            }
        }
        true
    }

    /// The rules of `folder` (relative to the root), in the order they are asked.
    fn folder(&mut self, folder: &Path) -> Arc<[Gitignore]> {
        if let Some(known) = self.folders.get(folder) {
            return Arc::clone(known);
        }
        let read: Arc<[Gitignore]> = IGNORE_FILES
            .iter()
            .filter_map(|name| self.read(&folder.join(name)))
            .collect();
        self.folders.insert(folder.to_path_buf(), Arc::clone(&read));
        read
    }

    /// One ignore file through the jail; `None` (and a note unless it is simply absent) when
    /// it cannot be read whole as text.
    fn read(&mut self, rel: &Path) -> Option<Gitignore> {
        let left = WALK_MAX_BYTES.saturating_sub(self.spent);
        let why = match self.jail.read_text_at(rel, IGNORE_MAX_BYTES.min(left)) {
            Ok(read) if !read.truncated => {
                self.spent += read.text.len() as u64;
                match parse(&self.jail.root().join(rel), &read.text) {
                    Some(rules) => return Some(rules),
                    None => "its patterns could not be built",
                }
            }
            Ok(read) if read.size > IGNORE_MAX_BYTES => "larger than 64 KiB",
            Ok(_) => "past the 256 KiB of ignore files one search reads",
            Err(ReadError::Refused(SandboxError::NotFound)) => return None,
            Err(e) => reason(&e),
        };
        self.note(rel, why);
        None
    }

    fn note(&mut self, rel: &Path, why: &str) {
        if self.notes.len() >= MAX_NOTES {
            self.more += 1;
            return;
        }
        let shown: String = rel
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        self.notes.push(format!("note: {shown} ignored ({why})"));
    }
}

/// Why an ignore file that is there could not be read.
fn reason(e: &ReadError) -> &'static str {
    match e {
        ReadError::NotText => "not UTF-8 text",
        ReadError::Refused(SandboxError::NotRegular) => "not a regular file",
        ReadError::Refused(SandboxError::Escapes) => "a link out of the folder",
        ReadError::Refused(SandboxError::Link) => "a link",
        ReadError::Refused(_) => "unreadable",
    }
}

/// The rules of one ignore file at `path`; a malformed line is skipped, as git does.
fn parse(path: &Path, text: &str) -> Option<Gitignore> {
    let folder = path.parent().unwrap_or(path);
    let mut builder = GitignoreBuilder::new(folder);
    for line in text.lines() {
        let _ = builder.add_line(None, line);
    }
    builder.build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path, list: &[(&str, &str)]) {
        for (path, text) in list {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn walked(jail: &WorkDir, start: &str, hidden: Hidden) -> Vec<String> {
        let mut names: Vec<String> = Walk::new(jail, &jail.root().join(start), hidden)
            .filter(|e| e.depth() > 0)
            .map(|e| {
                let rel = e.path().strip_prefix(jail.root()).unwrap();
                rel.to_string_lossy().into_owned()
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_deepest_folder_decides_and_ignore_beats_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        files(
            dir.path(),
            &[
                (".gitignore", "*.log\na.txt\n"),
                (".ignore", "!a.txt\n"),
                ("a.txt", ""),
                ("b.log", ""),
                ("d/.gitignore", "!c.log\n"),
                ("d/c.log", ""),
                ("d/e.log", ""),
            ],
        );
        let jail = WorkDir::new(dir.path()).unwrap();
        assert_eq!(
            walked(&jail, ".", Hidden::Skipped),
            ["a.txt", "d", "d/c.log"]
        );
        assert_eq!(
            walked(&jail, "d", Hidden::Shown),
            ["d/.gitignore", "d/c.log"]
        );
    }

    #[test]
    fn notes_are_bounded_and_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let jail = WorkDir::new(dir.path()).unwrap();
        let mut rules = Rules::new(jail);
        for i in 0..MAX_NOTES + 3 {
            rules.note(Path::new(&format!("f{i}\n/.ignore")), "why");
        }
        assert_eq!(rules.notes[0], "note: f0?/.ignore ignored (why)");
        assert_eq!(rules.notes.len(), MAX_NOTES);
        assert_eq!(rules.more, 3);
        assert_eq!(with_notes("body".into(), &[]), "body");
    }
}
