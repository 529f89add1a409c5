#!/usr/bin/env bash
# Every figure of the performance table (docs/performance.md), min/median/max of several runs,
# printed as one table at the end:
#   scripts/bench_ask.py          ask with one tool round (release), its fsync count, the peer
#   scripts/bench_serve_rss.py    serve's RSS, one agent and per extra running agent
#   scripts/bench_orchestrator.py cargo bench --bench orchestrator: per-round overhead, crowd
# Usage: scripts/bench_all.sh
# Environment:
#   FUSEFORKS_BIN          the binary (default target/release/fuseforks-cli; not built here)
#   FUSEFORKS_PEER_PYTHON  a Python with openai-agents for the peer (default python3)
#   BENCH_ASK_RUNS (30), BENCH_RSS_RUNS (3), BENCH_RSS_AGENTS (1001), BENCH_CARGO_RUNS (3)
#   BENCH_SKIP_CARGO=1     skip the cargo bench (it builds the bench profile, optimised, once)
#   BENCH_CARGO_ARGS       more cargo arguments for it (`--profile dev`: a check, not the figures)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${FUSEFORKS_BIN:-target/release/fuseforks-cli}
if [ ! -x "$bin" ]; then
  echo "no binary at $bin: cargo build --release -p fuseforks-cli, or set FUSEFORKS_BIN" >&2
  exit 2
fi
export FUSEFORKS_BIN
FUSEFORKS_BIN=$(realpath "$bin")

figures=$(mktemp)
trap 'rm -f "$figures"' EXIT

printf '%s; %s CPUs; load average at start: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'binary: %s (%s)\n' "$FUSEFORKS_BIN" "$("$FUSEFORKS_BIN" --version)"

echo "== ask, one tool round (scripts/bench_ask.py)"
python3 scripts/bench_ask.py "${BENCH_ASK_RUNS:-30}" | tee -a "$figures" | grep -v '^FIGURE|'

echo "== serve RSS (scripts/bench_serve_rss.py)"
python3 scripts/bench_serve_rss.py "${BENCH_RSS_RUNS:-3}" "${BENCH_RSS_AGENTS:-1001}" \
  | tee -a "$figures" | grep -v '^FIGURE|'

echo "== orchestrator and crowd (scripts/bench_orchestrator.py)"
if [ "${BENCH_SKIP_CARGO:-0}" = 1 ]; then
  echo "skipped (BENCH_SKIP_CARGO=1)"
  for f in "round_median_us|orchestrator overhead per tool round, median|<= 200" \
           "round_p99_us|orchestrator overhead per tool round, p99|<= 400" \
           "crowd_ratio|100 agents at once, 0 ms stub: slowest in the crowd / alone|<= 1.2"; do
    IFS='|' read -r key label goal <<<"$f"
    echo "FIGURE|$key|$label|-|-|-|skipped|$goal" >>"$figures"
  done
else
  python3 scripts/bench_orchestrator.py "${BENCH_CARGO_RUNS:-3}" | tee -a "$figures" | grep -v '^FIGURE|'
fi

printf '\nload average at the end: %s\n\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
grep '^FIGURE|' "$figures" | awk -F'|' '
  BEGIN { printf "%-66s %9s %9s %9s  %-6s %s\n", "figure", "min", "median", "max", "unit", "goal" }
  { printf "%-66s %9s %9s %9s  %-6s %s\n", $3, $4, $5, $6, $7, $8 }'
