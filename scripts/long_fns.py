#!/usr/bin/env python3
"""List production functions longer than a limit (issue 12: none over 120 lines).

A function's length counts its lines from the line of `fn` to the line of its matching closing
brace, both included. Production code is `crates/{core,host,cli}/src/**/*.rs` (and `build.rs`),
less `#[cfg(test)]` modules — inline ones and the files they name — and `tests.rs` files and
the files of a `tests/` folder beside the code.
Comments, strings and char literals are blanked before braces are matched.

Usage: python3 scripts/long_fns.py [--limit N] [--all]
  --limit N  report functions longer than N lines (default 120); exit 1 when there is one
  --all      list every function, longest first, and exit 0
"""
import os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = ("core", "host", "cli")


def blank(src):
    """`src` with comments, strings and char literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(src)

    def keep_lines(text):
        return "".join("\n" if c == "\n" else " " for c in text)

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(keep_lines(src[i:j]))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep_lines(src[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', src[i:i + 300])) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            end = '"' + m.group(1)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(keep_lines(src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(keep_lines(src[i:j + 1]))
            i = j + 1
        elif c == "'":
            # a char literal ('x', '\n', '\u{..}') — not a lifetime ('a)
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", src[i:i + 12])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def match_brace(text, open_at):
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def test_ranges(text):
    """Spans of inline `#[cfg(test)] mod x { .. }`, and names of `#[cfg(test)] mod x;` files."""
    spans, files = [], []
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([{;])", text):
        if m.group(2) == "{":
            spans.append((m.start(), match_brace(text, m.end() - 1)))
        else:
            files.append(m.group(1))
    return spans, files


def functions(path):
    with open(path, encoding="utf-8") as f:
        text = blank(f.read())
    spans, test_files = test_ranges(text)
    found = []
    for m in re.finditer(r"\bfn\s+(\w+)", text):
        if any(a <= m.start() <= b for a, b in spans):
            continue
        depth, j = 0, m.end()
        while j < len(text):
            ch = text[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch in "{;":
                break
            j += 1
        if j >= len(text) or text[j] == ";":
            continue  # a declaration without a body
        end = match_brace(text, j)
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, end) + 1
        found.append((last - first + 1, m.group(1), first))
    return found, test_files


def production_files():
    for crate in CRATES:
        base = os.path.join(ROOT, "crates", crate)
        build = os.path.join(base, "build.rs")
        if os.path.exists(build):
            yield build
        for dirpath, dirnames, filenames in os.walk(os.path.join(base, "src")):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".rs"):
                    yield os.path.join(dirpath, name)


def main(argv):
    limit, list_all = 120, "--all" in argv
    if "--limit" in argv:
        limit = int(argv[argv.index("--limit") + 1])
    rows, excluded = [], set()
    files = list(production_files())
    for path in files:
        _, test_files = functions(path)
        folder = os.path.dirname(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        own = folder if stem in ("mod", "lib", "main") else os.path.join(folder, stem)
        for t in test_files:
            excluded.add(os.path.join(own, t + ".rs"))
            excluded.add(os.path.join(own, t, "mod.rs"))
    for path in files:
        if path in excluded or os.path.basename(path) == "tests.rs" or "/tests/" in path:
            continue
        found, _ = functions(path)
        rel = os.path.relpath(path, ROOT)
        rows += [(lines, f"{rel}:{line}", name) for lines, name, line in found]
    rows.sort(key=lambda r: (-r[0], r[1]))
    shown = rows if list_all else [r for r in rows if r[0] > limit]
    for lines, where, name in shown:
        print(f"{lines:5}  {name}  {where}")
    if not list_all:
        print(f"{len(shown)} production function(s) over {limit} lines; longest {rows[0][0] if rows else 0}")
    return 1 if shown and not list_all else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
