# Thin wrappers; the scripts do the work (they install what is missing first).
.PHONY: all build test demo bench clean
all: build
build:
	scripts/setup
test:
	scripts/test
demo:
	scripts/setup && build/draplane up --demo --data-dir ./draplane-data
bench:
	scripts/setup && scripts/bench
clean:
	rm -rf build build-asan
