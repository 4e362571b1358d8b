#!/usr/bin/env bash
# Fuzzes the CEL engine (fuzz_cel, built by CMake in the sanitizer
# configuration: clang, ASan + UBSan) for a bounded time, after replaying the
# regression inputs.
# Usage: run_fuzz.sh BINARY SOURCE_DIR BUILD_DIR [SECONDS] ($DRAPLANE_FUZZ_SECONDS overrides SECONDS)
set -euo pipefail
bin="$1"; src="$2"; out="$3/cel-fuzz"; secs="${DRAPLANE_FUZZ_SECONDS:-${4:-60}}"
mkdir -p "$out/corpus"
# Regressions first (each file is one input that once crashed).
if compgen -G "$src/tests/cel/fuzz_regressions/*" >/dev/null; then
  "$bin" -runs=1 "$src"/tests/cel/fuzz_regressions/*
fi
seed=()
[ -n "${DRAPLANE_FUZZ_SEED:-}" ] && seed=(-seed="$DRAPLANE_FUZZ_SEED")  # fixed in scripts/test
"$bin" "${seed[@]}" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  "$out/corpus" "$src/tests/cel/fuzz_corpus"
