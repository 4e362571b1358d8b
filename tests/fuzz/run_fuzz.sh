#!/usr/bin/env bash
# Builds one libFuzzer target of tests/fuzz with clang (ASan + UBSan) and fuzzes
# it for a bounded time: first the regression inputs (each once crashed),
# then new inputs, seeded from the project's test data and examples.
# Usage: run_fuzz.sh TARGET SOURCE_DIR BUILD_DIR [SECONDS] [RSS_LIMIT_MB]
#   TARGET: json | yaml | protobuf | query | selectors
#   $DRAPLANE_FUZZ_SECONDS, when set, overrides SECONDS (scripts/test, make fuzz).
# Exit 77 (CTest skip) when clang or its libFuzzer runtime is missing.
set -euo pipefail
target="$1"; src="$2"; out="$3/fuzz"; secs="${DRAPLANE_FUZZ_SECONDS:-${4:-10}}"; rss="${5:-2048}"
if ! command -v clang++ >/dev/null 2>&1; then
  echo "clang++ not found: skipping the $target fuzz run (scripts/setup installs clang)"; exit 77
fi
mkdir -p "$out/obj" "$out/corpus/$target"
if [ ! -f "$out/have_libfuzzer" ]; then
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$out/probe.cc"
  if ! clang++ -fsanitize=fuzzer "$out/probe.cc" -o "$out/probe" 2>/dev/null; then
    echo "clang's libFuzzer runtime not found: skipping the $target fuzz run (libclang-rt-dev)"; exit 77
  fi
  touch "$out/have_libfuzzer"
fi

api=("$src"/src/api/*.cc)
server_json=("$src/src/server/json_util.cc")
# The resource registry with the default strategy for every kind (strategy_stubs.cc).
registry=("$src/src/server/resources.cc" "$src/src/server/strategy.cc" "$src/tests/fuzz/strategy_stubs.cc")
case "$target" in
  json|yaml) sources=("${api[@]}" "${server_json[@]}") ;;
  protobuf) sources=("${api[@]}" "${server_json[@]}" "$src/src/server/protobuf_body.cc"
                     "$src/src/server/protobuf_wire.cc" "$src/src/server/api_util.cc" "$src/src/server/api_error.cc"
                     "${registry[@]}") ;;
  query|selectors) sources=("${api[@]}" "${server_json[@]}" "$src/src/server/selectors.cc" "$src/src/server/query_params.cc" "$src/src/server/event_conversion.cc" "$src/src/server/api_error.cc"
                            "$src/src/server/api_util.cc" "${registry[@]}" "$src/src/server/query_string.cc") ;;
  *) echo "unknown fuzz target $target"; exit 2 ;;
esac
sources+=("$src"/src/common/*.cc)

# pointer-overflow is off: RapidJSON 1.1's internal stack adds to a null pointer
# before its first allocation (stack.h), benign and outside the project.
flags=(-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -fno-sanitize=pointer-overflow -I"$src/src")
# Objects are shared by the targets; one is rebuilt when its source or any
# header of the project is newer, all of them when the flags change.
if [ "$(cat "$out/obj/flags" 2>/dev/null)" != "${flags[*]}" ]; then
  rm -f "$out"/obj/*.o
  printf '%s' "${flags[*]}" > "$out/obj/flags"
fi
newest_header=$(ls -t "$src"/src/*/*.h "$src"/src/*/internal/*.h 2>/dev/null | head -1 || true)
objects=()
stale=()
for s in "${sources[@]}"; do
  o="$out/obj/$(basename "$(dirname "$s")")_$(basename "$s" .cc).o"
  objects+=("$o")
  if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ "$newest_header" -nt "$o" ]; then stale+=("$s"); fi
done
if [ ${#stale[@]} -gt 0 ]; then
  printf '%s\n' "${stale[@]}" | xargs -P "${JOBS:-2}" -I{} sh -c \
    's="$1"; shift; o="$0/obj/$(basename "$(dirname "$s")")_$(basename "$s" .cc).o"; clang++ "$@" -c "$s" -o "$o"' \
    "$out" {} -fsanitize=fuzzer-no-link "${flags[@]}"
fi
bin="$out/fuzz_$target"
main="$src/tests/fuzz/fuzz_$target.cc"
newest=$(ls -t "$main" "${objects[@]}" | head -1 || true)
if [ ! -x "$bin" ] || [ "$newest" -nt "$bin" ]; then
  clang++ -fsanitize=fuzzer "${flags[@]}" "$main" "${objects[@]}" -lyaml-cpp $(pkg-config --libs fmt 2>/dev/null) \
    -o "$bin"
fi

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
