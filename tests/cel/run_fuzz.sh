#!/usr/bin/env bash
# Builds the libFuzzer target with clang (ASan + UBSan) and fuzzes the CEL engine
# for a bounded time, after replaying the regression inputs.
# Usage: run_fuzz.sh SOURCE_DIR BUILD_DIR [SECONDS] ($DRAPLANE_FUZZ_SECONDS overrides SECONDS)
set -euo pipefail
src="$1"; out="$2/cel-fuzz"; secs="${DRAPLANE_FUZZ_SECONDS:-${3:-60}}"
if ! command -v clang++ >/dev/null 2>&1; then
  echo "clang++ not found: skipping the CEL fuzz run"; exit 77
fi
mkdir -p "$out/corpus"
bin="$out/fuzz_cel"
sources=("$src"/src/cel/*.cc "$src/src/api/quantity.cc" "$src/src/api/field_error.cc" "$src/src/api/validation_formats.cc" "$src"/src/common/*.cc
         "$src/tests/cel/fuzz_cel.cc")
newest=$(ls -t "${sources[@]}" "$src"/src/cel/*.h | head -1)
if [ ! -x "$bin" ] || [ "$newest" -nt "$bin" ]; then
  # One object per source, compiled $JOBS at a time (one clang++ for all of them
  # used a single core for minutes), then linked.
  rm -rf "$out/obj"; mkdir -p "$out/obj"
  flags="-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -I$src/src $(pkg-config --cflags re2)"
  printf '%s\n' "${sources[@]}" | xargs -P "${JOBS:-$(nproc)}" -I{} sh -c \
    'o="$0/obj/$(basename "$(dirname "$1")")_$(basename "$1" .cc).o"; clang++ $2 -fsanitize=fuzzer-no-link -c "$1" -o "$o"' \
    "$out" {} "$flags"
  clang++ -fsanitize=fuzzer,address,undefined "$out"/obj/*.o $(pkg-config --libs re2) -o "$bin"
fi
# Regressions first (each file is one input that once crashed).
if compgen -G "$src/tests/cel/fuzz_regressions/*" >/dev/null; then
  "$bin" -runs=1 "$src"/tests/cel/fuzz_regressions/*
fi
seed=()
[ -n "${DRAPLANE_FUZZ_SEED:-}" ] && seed=(-seed="$DRAPLANE_FUZZ_SEED")  # fixed in scripts/test
"$bin" "${seed[@]}" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  "$out/corpus" "$src/tests/cel/fuzz_corpus"
