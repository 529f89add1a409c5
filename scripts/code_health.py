#!/usr/bin/env python3
"""The code-health figures of the closing notes, measured the same way each time.

Prints, per crate: items declared `pub` against those `pub(crate)`/`pub(super)`
(non-test code), the cycles between top-level modules; then the locks declared in the
orchestrator's `Inner`, `json!` in the GUI server outside tests, and `sleep(` in test code.
Counts are by reading the text (no compiler): good for before/after, not for proofs.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CRATES = ["core", "host", "cli", "testkit"]


def rs_files(folder):
    for base, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith(".rs"):
                yield os.path.join(base, name)


def production(text):
    """The code before the first `#[cfg(test)]` (test modules sit at the end by convention),
    without its comments."""
    cut = text.find("#[cfg(test)]")
    return without_comments(text if cut < 0 else text[:cut])


def without_comments(text):
    """Drops whole-line comments and the `// …` ending a line (after a space: not a URL)."""
    kept = []
    for line in text.splitlines():
        if line.lstrip().startswith("//"):
            continue
        kept.append(re.sub(r"\s//\s.*$", "", line))
    return "\n".join(kept)


ITEM = re.compile(r"^(?:async |const |unsafe )*(?:fn|struct|enum|trait|type|const|static|mod|use) ")


def visibility(crate):
    """Items (fn, struct, enum, trait, type, const, static, mod, use) declared `pub` and those
    declared `pub(crate)`/`pub(super)`/`pub(in …)`; fields are not counted."""
    public = private = 0
    for path in rs_files(os.path.join(ROOT, "crates", crate, "src")):
        for line in production(open(path, encoding="utf-8").read()).splitlines():
            stripped = line.lstrip()
            restricted = re.match(r"^pub\((?:crate|super|in [^)]*)\) ", stripped)
            if restricted and ITEM.match(stripped[restricted.end():]):
                private += 1
            elif stripped.startswith("pub ") and ITEM.match(stripped[4:]):
                public += 1
    return public, private


def top_modules(crate):
    src = os.path.join(ROOT, "crates", crate, "src")
    modules = {}
    for name in os.listdir(src):
        path = os.path.join(src, name)
        stem = name[:-3] if name.endswith(".rs") else name
        if stem in ("lib", "main"):
            continue
        if os.path.isdir(path):
            modules.setdefault(stem, []).extend(rs_files(path))
        elif name.endswith(".rs"):
            modules.setdefault(stem, []).append(path)
    return modules


def cycles(crate):
    modules = top_modules(crate)
    edges = {m: set() for m in modules}
    for module, files in modules.items():
        for path in files:
            text = production(open(path, encoding="utf-8").read())
            names = re.findall(r"crate::([a-z_0-9]+)", text)
            for group in re.findall(r"crate::\{([^}]*)\}", text):
                names += re.findall(r"(?:^|,)\s*([a-z_0-9]+)", group)
            edges[module].update(n for n in names if n in edges and n != module)
    return strongly_connected(edges)


def strongly_connected(edges):
    sys.setrecursionlimit(10000)
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def inner_locks():
    path = os.path.join(ROOT, "crates/core/src/orchestrator/inner.rs")
    text = open(path, encoding="utf-8").read()
    match = re.search(r"struct Inner \{(.*?)\n\}", text, re.S)
    if not match:
        return None, None
    body = match.group(1)
    fields = re.findall(r"^\s*(?:pub(?:\([a-z]+\))? )?[a-z_]+:", body, re.M)
    locks = re.findall(r"\b(?:Mutex|RwLock)<", body)
    return len(fields), len(locks)


def count_in(folder, pattern, tests_only):
    total = 0
    for path in rs_files(folder):
        text = open(path, encoding="utf-8").read()
        if tests_only is False:
            text = production(text)
        elif tests_only is True and "/tests/" not in path and "testkit" not in path:
            cut = text.find("#[cfg(test)]")
            text = "" if cut < 0 else text[cut:]
        total += len(re.findall(pattern, text))
    return total


def main():
    for crate in CRATES:
        public, private = visibility(crate)
        print(f"{crate}: items pub {public}, pub(crate|super) {private}, cycles {cycles(crate) or 0}")
    fields, locks = inner_locks()
    print(f"orchestrator Inner: {fields} fields, {locks} locks declared in it")
    gui = count_in(os.path.join(ROOT, "crates/host/src/gui"), r"json!", False)
    print(f"json! in the GUI server outside tests: {gui}")
    sleeps = count_in(os.path.join(ROOT, "crates"), r"\bsleep\(", True)
    print(f"sleep( in test code: {sleeps}")


if __name__ == "__main__":
    main()
