# libFuzzer runs of the request decoders (tests/fuzz: JSON and YAML bodies of
# every kind, protobuf bodies, query strings, label and field selectors), built
# with clang (ASan + UBSan) by run_fuzz.sh, label "fuzz". Each fuzzes for
# DRAPLANE_FUZZ_SECONDS (the environment variable overrides the cache value:
# scripts/test runs them ~10 s each, `make fuzz` minutes each); a CTest skip (77)
# where clang's libFuzzer is missing. They share one object directory, hence
# the lock.
set(DRAPLANE_FUZZ_SECONDS 10 CACHE STRING "Seconds each decoder fuzz CTest fuzzes")
foreach(target json yaml protobuf query selectors)
  add_test(NAME fuzz_${target}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.sh ${target} ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
                   ${DRAPLANE_FUZZ_SECONDS})
  set_tests_properties(fuzz_${target} PROPERTIES LABELS "fuzz" SKIP_RETURN_CODE 77 TIMEOUT 3600
                       RESOURCE_LOCK draplane_fuzz_objects)
endforeach()
