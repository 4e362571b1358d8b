#!/usr/bin/env bash
# Installs the npm package @bufbuild/cel-spec (the cel-spec conformance tests) into
# a build-time folder once and dumps its conformance suite as JSON for the C++
# runner. Offline afterwards. Exits 0 without output file when npm/node are
# missing (the runner then reports a CTest skip).
# Usage: fetch_conformance.sh BUILD_DIR
set -euo pipefail
out_dir="$1/cel-spec"
json="$out_dir/conformance.json"
[ -s "$json" ] && exit 0
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "npm or node not found: CEL conformance tests will be skipped"
  exit 0
fi
mkdir -p "$out_dir"
pkg="$out_dir/npm/node_modules/@bufbuild/cel-spec/dist/cjs/testdata/conformance.js"
if [ ! -f "$pkg" ]; then
  npm install --silent --no-audit --no-fund --prefix "$out_dir/npm" @bufbuild/cel-spec@0.6.1
fi
node -e 'require("fs").writeFileSync(process.argv[2], JSON.stringify(require(process.argv[1]).tests))' "$pkg" "$json.tmp"
mv "$json.tmp" "$json"
