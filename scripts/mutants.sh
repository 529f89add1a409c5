#!/usr/bin/env bash
# Mutation testing of the guard files: the modules that protect the user's money, data and
# machine. Run it before touching one of them (too slow for .ci/run: a build per mutant).
#   scripts/mutants.sh              every guard file
#   scripts/mutants.sh budget       only the files whose path contains "budget"
# Needs `cargo install --locked cargo-mutants`. Exclusions, each with its reason, live in
# .cargo/mutants.toml. The report is in mutants.out/ (caught.txt, missed.txt, ...).
set -euo pipefail
cd "$(dirname "$0")/.."

# The guard files, in one place.
GUARDS=(
  crates/core/src/budget.rs
  crates/core/src/sessions/fork_point.rs
  crates/core/src/safety/switch.rs
  crates/core/src/tools/run_output.rs
  crates/core/src/tools/sandbox/open.rs
  crates/core/src/village/atomic.rs
)

files=()
for f in "${GUARDS[@]}"; do
  if [ -z "${1:-}" ] || [[ "$f" == *"$1"* ]]; then files+=(--file "$f"); fi
done
[ ${#files[@]} -gt 0 ] || { echo "no guard file matches '$1'" >&2; exit 2; }

exec cargo mutants --test-package fuseforks-core \
  --exclude-re 'sync_all|sync_parent|sync_dir|fsync' \
  "${files[@]}"
