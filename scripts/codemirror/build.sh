#!/bin/sh
# Rebuilds gui/vendor/codemirror.js (one minified ES module) and its licence file from the exact
# versions in package-lock.json. Needs Node and npm; the binary's own build never runs this.
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../../gui/vendor
mkdir -p "$out"
npx esbuild entry.mjs --bundle --format=esm --minify --legal-comments=none \
  --target=es2020 --outfile="$out/codemirror.js"
{
  echo "gui/vendor/codemirror.js bundles these packages (MIT licence), unmodified:"
  for p in node_modules/@codemirror/* node_modules/@lezer/* node_modules/style-mod \
    node_modules/w3c-keyname node_modules/crelt node_modules/@marijn/*; do
    [ -f "$p/package.json" ] || continue
    node -e 'const p=require("./'"$p"'/package.json");console.log("\n== "+p.name+" "+p.version)'
    cat "$p/LICENSE" 2>/dev/null || cat "$p/LICENSE.md" 2>/dev/null || true
  done
} > "$out/LICENSE-codemirror.txt"
ls -l "$out"
