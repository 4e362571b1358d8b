# Thin wrappers; the scripts do the work (they install what is missing first).
.PHONY: all build test fuzz demo bench clean
all: build
build:
	scripts/setup
test:
	scripts/test
# The libFuzzer targets (label fuzz), FUZZ_SECONDS each (default 300).
FUZZ_SECONDS ?= 300
fuzz:
	scripts/sanitize && cd build-san && DRAPLANE_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --output-on-failure -L fuzz
demo:
	scripts/setup && build/draplane up --demo --data-dir ./draplane-data
bench:
	scripts/setup && scripts/bench
clean:
	rm -rf build build-asan build-san
