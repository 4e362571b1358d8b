# libFuzzer runs of the request decoders (tests/fuzz: JSON and YAML bodies of
# every kind, protobuf bodies, query strings, label and field selectors) and of
# the CEL engine, label "fuzz". Built only in the sanitizer configuration
# (DRAPLANE_FUZZ: clang, ASan + UBSan, libFuzzer coverage; scripts/sanitize
# configures it in build-san), from the same sanitized module libraries as that
# configuration's unit tests. Each fuzzes for DRAPLANE_FUZZ_SECONDS (the
# environment variable overrides the cache value: scripts/test runs them ~10 s
# each, `make fuzz` minutes each).
if(NOT DRAPLANE_FUZZ)
  return()
endif()
set(DRAPLANE_FUZZ_SECONDS 10 CACHE STRING "Seconds each fuzz CTest fuzzes")
# The server pieces the decoders' targets reach, with the default strategy for
# every kind (strategy_stubs.cc) instead of the server's real ones.
set(_srv ${CMAKE_SOURCE_DIR}/src/server)
add_library(draplane_fuzz_server STATIC
  ${_srv}/json_util.cc ${_srv}/protobuf_body.cc ${_srv}/protobuf_wire.cc ${_srv}/api_util.cc
  ${_srv}/api_error.cc ${_srv}/resources.cc ${_srv}/strategy.cc ${_srv}/selectors.cc
  ${_srv}/query_params.cc ${_srv}/event_conversion.cc ${_srv}/query_string.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/strategy_stubs.cc)
target_link_libraries(draplane_fuzz_server PUBLIC draplane_api)
foreach(target json yaml protobuf query selectors)
  add_executable(fuzz_${target} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${target}.cc)
  target_link_libraries(fuzz_${target} PRIVATE draplane_fuzz_server draplane_api)
  target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer)
  add_test(NAME fuzz_${target}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.sh ${target} $<TARGET_FILE:fuzz_${target}>
                   ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${DRAPLANE_FUZZ_SECONDS})
  set_tests_properties(fuzz_${target} PROPERTIES LABELS "fuzz" TIMEOUT 3600)
endforeach()
add_executable(fuzz_cel ${CMAKE_CURRENT_SOURCE_DIR}/cel/fuzz_cel.cc)
target_link_libraries(fuzz_cel PRIVATE draplane_cel)
target_link_options(fuzz_cel PRIVATE -fsanitize=fuzzer)
add_test(NAME cel_fuzz
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cel/run_fuzz.sh $<TARGET_FILE:fuzz_cel> ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR} ${DRAPLANE_FUZZ_SECONDS})
set_tests_properties(cel_fuzz PROPERTIES LABELS "fuzz" TIMEOUT 3600)
