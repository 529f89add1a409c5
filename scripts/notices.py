#!/usr/bin/env python3
"""Writes THIRD-PARTY-NOTICES.md: the licence of every crate the fuseforks-cli binary is built
from on Linux (normal dependencies only, the closure of `cargo metadata`), with each crate's
own licence and notice files, identical texts printed once; then the vendored CodeMirror
bundle's notices (gui/vendor/LICENSE-codemirror.txt), which the binary embeds with the GUI.

  scripts/notices.py          rewrite the file
  scripts/notices.py --check  exit 1 when the file differs from what would be written (CI)

Needs the crates' sources in the cargo registry (any `cargo build` or `cargo fetch` puts them
there). A crate without a licence file gets its SPDX expression and a line saying so.
"""

import hashlib
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "THIRD-PARTY-NOTICES.md"
TARGET = "x86_64-unknown-linux-gnu"
BINARY = "fuseforks-cli"
LICENCE_PREFIXES = ("LICENSE", "LICENCE", "COPYING", "NOTICE", "COPYRIGHT", "UNLICENSE")


def metadata():
    text = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", TARGET],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(text)


def shipped(meta):
    """The packages the binary links: normal dependencies reachable from the binary's crate."""
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    packages = {p["id"]: p for p in meta["packages"]}
    start = next(p["id"] for p in meta["packages"] if p["name"] == BINARY)
    seen, todo = set(), [start]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        for dep in nodes[pid]["deps"]:
            if any(k["kind"] is None for k in dep["dep_kinds"]):
                todo.append(dep["pkg"])
    ours = {p["id"] for p in meta["packages"] if p["source"] is None}
    return sorted((packages[i] for i in seen - ours), key=lambda p: (p["name"], p["version"]))


def licence_files(package):
    folder = pathlib.Path(package["manifest_path"]).parent
    files = []
    if package.get("license_file"):
        files.append(folder / package["license_file"])
    for f in sorted(folder.iterdir()):
        if f.is_file() and f.name.upper().startswith(LICENCE_PREFIXES) and f not in files:
            files.append(f)
    return files


def render():
    meta = metadata()
    texts = {}  # digest -> (text, [crate names])
    lines = [
        "# Third-party notices",
        "",
        f"The `{BINARY}` binary is built from the crates below (on Linux; normal dependencies",
        "only) and embeds the GUI's vendored CodeMirror bundle. Each crate's licence is its",
        "SPDX expression from its manifest; the texts follow, each printed once with the crates",
        "that carry it. Written by `scripts/notices.py`; CI checks it is current.",
        "",
        "| crate | version | licence |",
        "|---|---|---|",
    ]
    for p in shipped(meta):
        lines.append(f"| {p['name']} | {p['version']} | {p.get('license') or 'see its file'} |")
        files = licence_files(p)
        if not files:
            digest = f"none:{p.get('license')}"
            texts.setdefault(digest, (f"(no licence file in the package; SPDX: {p.get('license')})", []))
            texts[digest][1].append(f"{p['name']} {p['version']}")
        for f in files:
            body = f.read_text(encoding="utf-8", errors="replace").strip()
            digest = hashlib.sha256(body.encode()).hexdigest()
            texts.setdefault(digest, (body, []))
            texts[digest][1].append(f"{p['name']} {p['version']} ({f.name})")
    lines += ["", "## Licence texts", ""]
    for body, crates in sorted(texts.values(), key=lambda t: t[1][0]):
        lines += [f"### {', '.join(crates)}", "", "```text", body.replace("```", "'''"), "```", ""]
    vendor = ROOT / "gui/vendor/LICENSE-codemirror.txt"
    lines += ["## The GUI's vendored CodeMirror bundle", "", "```text",
              vendor.read_text(encoding="utf-8").strip().replace("```", "'''"), "```", ""]
    return "\n".join(lines)


def main():
    text = render()
    if "--check" in sys.argv[1:]:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.name} is not current: run scripts/notices.py and commit it", file=sys.stderr)
            return 1
        print(f"{OUT.name} is current")
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.name} ({len(text) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
