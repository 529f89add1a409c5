//! The toolchains a confined `run` may read and execute besides the folders on its `PATH`,
//! derived from those folders alone: a version manager's root above its `shims`, one installed
//! version above its `bin`, rustup's home beside its proxies, and what the links of a user's
//! own `PATH` folder point at — never the home folder, an ancestor of it, or a folder of the
//! user's keys and settings (`docs/threat-model.md`, "Toolchains on PATH").

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A `bin` folder is one installed version when one of its next folders up has such a name
/// (nvm `versions/node/v20/bin`, asdf and mise `installs/python/3.12/bin`, rustup
/// `toolchains/stable-…/bin`).
const VERSION_PARENTS: [&str; 3] = ["versions", "installs", "toolchains"];
/// How far above an installed version's folder that name may be.
const VERSION_DEPTH: usize = 3;
/// The most entries read of one folder when looking for links.
const LINKS_SCANNED: usize = 256;
/// Folders of the home folder that hold keys, tokens or settings: never granted, nor
/// anything beneath them.
const HOME_SECRETS: [&str; 9] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config",
    ".password-store",
    ".local/share/keyrings",
];
/// Folders of the home folder shared by many programs (one holds `credentials.toml`, others
/// the user's data): never granted whole, though a toolchain beneath one may be.
const HOME_SHARED: [&str; 6] = [
    ".local",
    ".local/share",
    ".local/state",
    ".cache",
    ".cargo",
    ".npm",
];

/// What the toolchains on `path_var` need beyond its folders. `home` is the user's home
/// folder (for the guards and rustup's default home), `rustup_home` our `RUSTUP_HOME`.
pub(crate) fn toolchain_roots(
    path_var: &OsStr,
    home: Option<&Path>,
    rustup_home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for entry in std::env::split_paths(path_var).filter(|p| p.is_absolute()) {
        let name = entry.file_name().and_then(OsStr::to_str).unwrap_or("");
        if name == "shims" || (name == "bin" && installed_version(&entry)) {
            // The root holds what the shims or links run: no need to read the folder.
            roots.extend(entry.parent().map(Path::to_path_buf));
            continue;
        }
        if entry.join("rustup").is_file() {
            let default = home.map(|h| h.join(".rustup"));
            roots.extend(rustup_home.map(Path::to_path_buf).or(default));
        } else if home.is_some_and(|h| entry.starts_with(h)) {
            for target in link_roots(&entry) {
                // A virtual environment's interpreter is a link to an installed one.
                roots.extend(link_roots(&target.join("bin")));
                roots.push(target);
            }
        }
    }
    roots.retain(|r| grantable(r, home));
    roots.sort();
    roots.dedup();
    roots
}

/// Whether `bin` is the `bin` of one installed version.
fn installed_version(bin: &Path) -> bool {
    bin.ancestors()
        .skip(2)
        .take(VERSION_DEPTH)
        .filter_map(Path::file_name)
        .any(|n| VERSION_PARENTS.iter().any(|v| n == OsStr::new(v)))
}

/// Where the links in `folder` point: the folder holding each target, or the one above it
/// when that is a `bin` (a virtual environment or an installed version).
fn link_roots(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .take(LINKS_SCANNED)
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .filter_map(|e| std::fs::canonicalize(e.path()).ok())
        .filter_map(|target| {
            let parent = target.parent()?;
            match parent.file_name() {
                Some(n) if n == "bin" => parent.parent().map(Path::to_path_buf),
                _ => Some(parent.to_path_buf()),
            }
        })
        .collect()
}

/// Whether `root` may be granted: not the root of the file system, not the home folder or
/// above it, not a shared folder of the home, nothing beneath a folder of secrets.
fn grantable(root: &Path, home: Option<&Path>) -> bool {
    if !root.is_absolute() || root.parent().is_none() {
        return false;
    }
    let Some(home) = home else {
        return true;
    };
    !home.starts_with(root)
        && !HOME_SHARED.iter().any(|s| root == home.join(s))
        && !HOME_SECRETS.iter().any(|s| root.starts_with(home.join(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for p in paths {
            let path = dir.path().join(p);
            if p.ends_with('/') {
                std::fs::create_dir_all(&path).unwrap();
            } else {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, "").unwrap();
            }
        }
        dir
    }

    fn roots(home: &Path, path: &[&str]) -> Vec<PathBuf> {
        let joined = std::env::join_paths(path.iter().map(|p| home.join(p))).unwrap();
        toolchain_roots(&joined, Some(home), None)
    }

    #[test]
    fn a_managers_root_above_its_shims_and_an_installed_version_above_its_bin() {
        let home = tree(&[
            ".pyenv/shims/python3",
            ".nvm/versions/node/v20.1.0/bin/node",
            "tools/bin/x",
        ]);
        let h = home.path();
        let got = roots(
            h,
            &[
                ".pyenv/shims",
                ".nvm/versions/node/v20.1.0/bin",
                "tools/bin",
            ],
        );
        assert_eq!(
            got,
            vec![h.join(".nvm/versions/node/v20.1.0"), h.join(".pyenv")],
            "a plain bin gives nothing above it"
        );
    }

    #[test]
    fn rustups_home_beside_its_proxies_but_never_cargos_home() {
        let home = tree(&[".cargo/bin/rustup", ".cargo/credentials.toml"]);
        let h = home.path();
        assert_eq!(roots(h, &[".cargo/bin"]), vec![h.join(".rustup")]);
    }

    #[test]
    fn never_the_home_its_shared_folders_or_its_secrets() {
        let home = tree(&[
            "shims/x",
            ".local/shims/x",
            ".ssh/shims/x",
            ".config/a/shims/x",
        ]);
        let h = home.path();
        let path = ["shims", ".local/shims", ".ssh/shims", ".config/a/shims"];
        assert!(roots(h, &path).is_empty(), "{:?}", roots(h, &path));
        assert!(!grantable(Path::new("/"), Some(h)));
        assert!(!grantable(h.parent().unwrap(), Some(h)));
    }

    #[test]
    fn the_links_of_a_users_own_folder_and_a_virtual_environments_interpreter() {
        let home = tree(&[
            ".local/bin/",
            ".local/share/uv/tools/ruff/bin/ruff",
            ".local/share/uv/python/cpython-3.12/bin/python3.12",
            ".ssh/id_ed25519",
        ]);
        let h = home.path();
        let link = |target: &str, at: &str| {
            std::os::unix::fs::symlink(h.join(target), h.join(at)).unwrap();
        };
        link(".local/share/uv/tools/ruff/bin/ruff", ".local/bin/ruff");
        link(
            ".local/share/uv/python/cpython-3.12/bin/python3.12",
            ".local/share/uv/tools/ruff/bin/python",
        );
        link(".ssh/id_ed25519", ".local/bin/key");
        let h = std::fs::canonicalize(h).unwrap();
        assert_eq!(
            roots(&h, &[".local/bin"]),
            vec![
                h.join(".local/share/uv/python/cpython-3.12"),
                h.join(".local/share/uv/tools/ruff"),
            ],
            "the link to a key gives nothing"
        );
    }
}
