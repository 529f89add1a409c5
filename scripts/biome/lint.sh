#!/bin/sh
# Lints the GUI's own JavaScript (gui/, not gui/vendor/) with Biome at the exact version of
# package-lock.json: the recommended rules, plus undeclared and unused names (biome.json).
# Warnings fail too. Needs Node and npm; the binary's own build never runs this.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
npm ci --no-audit --no-fund --silent
cd ../..
"$here/node_modules/.bin/biome" lint --config-path="$here" --error-on-warnings gui
