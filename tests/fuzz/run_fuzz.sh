#!/usr/bin/env bash
# Fuzzes one libFuzzer target of tests/fuzz (built by CMake in the sanitizer
# configuration: clang, ASan + UBSan) for a bounded time: first the regression
# inputs (each once crashed), then new inputs, seeded from the project's test
# data and examples.
# Usage: run_fuzz.sh TARGET BINARY SOURCE_DIR BUILD_DIR [SECONDS] [RSS_LIMIT_MB]
#   TARGET: json | yaml | protobuf | query | selectors
#   $DRAPLANE_FUZZ_SECONDS, when set, overrides SECONDS (scripts/test, make fuzz).
set -euo pipefail
target="$1"; bin="$2"; src="$3"; out="$4/fuzz"; secs="${DRAPLANE_FUZZ_SECONDS:-${5:-10}}"; rss="${6:-2048}"
mkdir -p "$out/corpus/$target"

# Seeds: the test data and examples (JSON targets get them converted to JSON).
seeds="$out/seeds/$target"
rm -rf "$seeds"; mkdir -p "$seeds"
case "$target" in
  json)
    python3 - "$src" "$seeds" <<'PY' || cp "$src"/tests/api/testdata/*/*.yaml "$seeds"/
import glob, json, os, sys
import yaml
src, out = sys.argv[1], sys.argv[2]
n = 0
for f in sorted(glob.glob(src + "/tests/api/testdata/*/*.yaml") + glob.glob(src + "/examples/*/*.yaml")):
    try:
        docs = [d for d in yaml.safe_load_all(open(f)) if d is not None]
    except Exception:
        continue
    for d in docs:
        n += 1
        with open(os.path.join(out, "seed%03d.json" % n), "w") as w:
            json.dump(d, w, default=str)
PY
    ;;
  yaml) cp "$src"/tests/api/testdata/*/*.yaml "$seeds"/; for f in "$src"/examples/*/*.yaml; do cp "$f" "$seeds/$(basename "$(dirname "$f")")_$(basename "$f")"; done ;;
esac
dirs=("$out/corpus/$target" "$seeds")
[ -d "$src/tests/fuzz/corpus/$target" ] && dirs+=("$src/tests/fuzz/corpus/$target")

# ASan's redzones make stack frames several times bigger: inputs nested to the
# decoders' bound (10000 levels) need more than the default 8 MiB to be walked.
ulimit -s 262144 2>/dev/null || ulimit -s unlimited 2>/dev/null || true
# Inputs up to 16 KiB: deep enough to pass yaml-cpp's depth and most of JSON's
# (the bounds themselves are unit-tested), small enough that a nested object's
# block YAML (indented once a level) stays within the time limit.
common=(-rss_limit_mb="$rss" -malloc_limit_mb="$rss" -timeout=20 -max_len=16384 -artifact_prefix="$out/$target-")
if compgen -G "$src/tests/fuzz/regressions/$target/*" >/dev/null; then
  "$bin" "${common[@]}" -runs=1 "$src"/tests/fuzz/regressions/"$target"/*
fi
# $DRAPLANE_FUZZ_SEED fixes libFuzzer's seed (scripts/test: CI explores the same
# inputs each run, so a red CI is reproducible); unset: a new seed each run.
seed=()
[ -n "${DRAPLANE_FUZZ_SEED:-}" ] && seed=(-seed="$DRAPLANE_FUZZ_SEED")
"$bin" "${common[@]}" "${seed[@]}" -max_total_time="$secs" -print_final_stats=1 "${dirs[@]}"
