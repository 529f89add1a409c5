//! `--map FROM=TO`: the path maps of `bake`. Longest prefix wins; a prefix
//! matches whole path components only; a Windows-form source (a drive letter or `\`) matches
//! case-insensitively and the rest of the path has its `\` turned into `/`.

use fuseforks_core::village::PathMap;

use super::error::BakeError;

/// One parsed map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Map {
    /// The source prefix as given.
    pub from: String,
    /// The target prefix as given.
    pub to: String,
    /// The source prefix normalised for comparison (`/` separators, no trailing separator,
    /// lower case when Windows-form).
    key: String,
    windows: bool,
}

impl Map {
    /// The record `bake.json` keeps.
    pub fn record(&self) -> PathMap {
        PathMap {
            from: self.from.clone(),
            to: self.to.clone(),
            extra: Default::default(),
        }
    }
}

/// Whether `text` is written in Windows form: a drive letter, or a backslash anywhere.
fn windows_form(text: &str) -> bool {
    has_drive(text) || text.contains('\\')
}

fn has_drive(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Whether `text` is an absolute path of either form: `/…`, `X:\…`, `X:/…`, `\\server\…`.
pub fn is_absolute(text: &str) -> bool {
    let b = text.as_bytes();
    text.starts_with('/')
        || text.starts_with("\\\\")
        || (has_drive(text) && b.len() >= 3 && (b[2] == b'\\' || b[2] == b'/'))
}

/// `from` as compared: separators `/`, no trailing one, lower case for Windows form.
fn normalise(from: &str, windows: bool) -> String {
    let mut key = if windows {
        from.replace('\\', "/").to_lowercase()
    } else {
        from.to_owned()
    };
    while key.len() > 1 && key.ends_with('/') {
        key.pop();
    }
    key
}

/// Parses the `--map` arguments: `FROM=TO`, both sides absolute, `TO` a container (POSIX)
/// path, no source given twice. Every refusal is a usage error (exit 2).
pub fn parse_maps(args: &[String]) -> Result<Vec<Map>, BakeError> {
    let mut maps: Vec<Map> = Vec::new();
    for arg in args {
        let Some((from, to)) = arg.split_once('=') else {
            return Err(usage(format!("--map {arg:?} has no `=`")));
        };
        if from.is_empty() || to.is_empty() {
            return Err(usage(format!("--map {arg:?} has an empty side")));
        }
        if !is_absolute(from) {
            return Err(usage(format!(
                "--map {arg:?}: the source {from:?} is not an absolute path"
            )));
        }
        if !to.starts_with('/') || to.contains('\\') {
            return Err(usage(format!(
                "--map {arg:?}: the target {to:?} is not an absolute container path (/…)"
            )));
        }
        if from.chars().chain(to.chars()).any(char::is_control) {
            return Err(usage(format!("--map {arg:?} holds a control character")));
        }
        let windows = windows_form(from);
        let key = normalise(from, windows);
        if maps.iter().any(|m| m.key == key) {
            return Err(usage(format!(
                "--map names the source {from:?} twice (compared {})",
                if windows {
                    "case-insensitively, \\ as /"
                } else {
                    "as written"
                }
            )));
        }
        maps.push(Map {
            from: from.to_owned(),
            to: to.to_owned(),
            key,
            windows,
        });
    }
    Ok(maps)
}

/// The maps of a `bake.json` (for `--update` without `--map`).
pub(super) fn maps_from_record(records: &[PathMap]) -> Result<Vec<Map>, BakeError> {
    let args: Vec<String> = records
        .iter()
        .map(|m| format!("{}={}", m.from, m.to))
        .collect();
    parse_maps(&args)
}

fn usage(message: String) -> BakeError {
    BakeError::Usage {
        code: "BAKE_MAP_INVALID",
        message,
        fix: "write --map FROM=TO with an absolute source path (C:\\work or /home/me/work) and an absolute container path (/work), each source once".into(),
    }
}

/// What rewriting one path field gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Rewrite {
    /// Not an absolute path: left as it is.
    Relative,
    /// Rewritten by a map.
    Mapped(String),
    /// Absolute, and no map covers it.
    Unmapped,
}

/// Rewrites `value` by the longest map whose source is a whole-component prefix of it.
pub(super) fn rewrite(maps: &[Map], value: &str) -> Rewrite {
    if !is_absolute(value) {
        return Rewrite::Relative;
    }
    let best = maps
        .iter()
        .filter_map(|m| prefix_rest(m, value).map(|rest| (m, rest)))
        .max_by_key(|(m, _)| m.key.len());
    match best {
        None => Rewrite::Unmapped,
        Some((m, rest)) => {
            let rest = if m.windows {
                rest.replace('\\', "/")
            } else {
                rest.to_owned()
            };
            let to = m.to.trim_end_matches('/');
            let rest = rest.trim_start_matches('/');
            Rewrite::Mapped(match (to.is_empty(), rest.is_empty()) {
                (true, true) => "/".to_owned(),
                (true, false) => format!("/{rest}"),
                (false, true) => to.to_owned(),
                (false, false) => format!("{to}/{rest}"),
            })
        }
    }
}

/// The part of `value` after `map`'s source, when the source is a whole-component prefix.
fn prefix_rest<'v>(map: &Map, value: &'v str) -> Option<&'v str> {
    let compared = normalise_value(value, map.windows);
    let key = map.key.as_str();
    // A root key ("/", "c:/" trimmed to "c:") matches everything below it.
    let boundary = if compared.len() == key.len() {
        compared == key
    } else {
        compared.starts_with(key)
            && (key.ends_with('/') || compared.as_bytes().get(key.len()) == Some(&b'/'))
    };
    // Lower-casing may change byte lengths outside ASCII; cut the original at the same char
    // count instead of the same byte offset.
    boundary.then(|| {
        let chars = key.chars().count();
        let cut = value
            .char_indices()
            .nth(chars)
            .map_or(value.len(), |(i, _)| i);
        &value[cut..]
    })
}

fn normalise_value(value: &str, windows: bool) -> String {
    if windows {
        value.replace('\\', "/").to_lowercase()
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maps(args: &[&str]) -> Vec<Map> {
        parse_maps(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn the_longest_whole_component_prefix_wins() {
        let m = maps(&[
            r"D:\Github=/work",
            r"D:\Github\Outcasts-MathLab=/work/mathlab",
        ]);
        assert_eq!(
            rewrite(&m, r"D:\Github\Outcasts-MathLab\src"),
            Rewrite::Mapped("/work/mathlab/src".into())
        );
        assert_eq!(
            rewrite(&m, r"d:\github\Other"),
            Rewrite::Mapped("/work/Other".into())
        );
        assert_eq!(rewrite(&m, r"D:\Git\x"), Rewrite::Unmapped);
        assert_eq!(rewrite(&m, r"D:\GithubX"), Rewrite::Unmapped);
        assert_eq!(rewrite(&m, r"D:\Github"), Rewrite::Mapped("/work".into()));
        assert_eq!(rewrite(&m, "relative/dir"), Rewrite::Relative);
        let posix = maps(&["/home/me=/work", "/=/root"]);
        assert_eq!(
            rewrite(&posix, "/home/me/p"),
            Rewrite::Mapped("/work/p".into())
        );
        assert_eq!(
            rewrite(&posix, "/home/Me/p"),
            Rewrite::Mapped("/root/home/Me/p".into())
        );
        assert_eq!(
            rewrite(&maps(&[r"C:\=/c"]), r"C:\x\y"),
            Rewrite::Mapped("/c/x/y".into())
        );
    }

    #[test]
    fn bad_maps_are_usage_errors() {
        for bad in [
            "noequals",
            "=/work",
            r"D:\x=",
            "relative=/work",
            r"D:\x=work",
            r"D:\x=C:\y",
        ] {
            assert!(parse_maps(&[bad.to_owned()]).is_err(), "{bad}");
        }
        let twice = parse_maps(&[r"D:\Work=/a".to_owned(), r"d:/work\=/b".to_owned()]);
        assert!(twice.is_err());
    }
}
