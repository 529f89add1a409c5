//! Embeds the GUI's static files (`gui/` at the workspace root) into the binary: every file
//! with a known type becomes one row of `ASSETS` (`$OUT_DIR/gui_assets.rs`: URL path, content
//! type, bytes through `include_bytes!`), so that `cargo build` alone builds the GUI.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The content type of a file the GUI serves; `None`: not served (READMEs, licences).
fn content_type(path: &Path) -> Option<&'static str> {
    match path.extension()?.to_str()? {
        "html" => Some("text/html; charset=utf-8"),
        "js" => Some("text/javascript; charset=utf-8"),
        "css" => Some("text/css; charset=utf-8"),
        "json" => Some("application/json"),
        "svg" => Some("image/svg+xml"),
        "png" => Some("image/png"),
        "ico" => Some("image/x-icon"),
        _ => None,
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "tests") {
                walk(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let gui = manifest.join("../../gui");
    println!("cargo:rerun-if-changed={}", gui.display());
    let mut files = Vec::new();
    walk(&gui, &mut files);
    files.sort();
    let mut code = String::from(
        "/// The GUI's files: (URL path, content type, bytes).\npub static ASSETS: &[(&str, &str, &[u8])] = &[\n",
    );
    for file in files {
        println!("cargo:rerun-if-changed={}", file.display());
        let (Some(kind), Ok(rel)) = (content_type(&file), file.strip_prefix(&gui)) else {
            continue;
        };
        let url = format!("/{}", rel.to_string_lossy().replace('\\', "/"));
        let _ = writeln!(
            code,
            "    ({url:?}, {kind:?}, include_bytes!({:?})),",
            file.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("gui_assets.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
}
