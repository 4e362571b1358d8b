# CEL conformance: the cel-spec tests (npm @bufbuild/cel-spec, installed into the
# build tree on first run) through the engine. A fixture fetches the data; the
# runner reports a CTest skip (77) when npm was unavailable.
if(TARGET draplane_cel)
  add_executable(cel_conformance ${CMAKE_CURRENT_SOURCE_DIR}/cel/conformance_runner.cc)
  target_link_libraries(cel_conformance PRIVATE draplane_cel)
  add_test(NAME cel_conformance_fetch
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cel/fetch_conformance.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(cel_conformance_fetch PROPERTIES FIXTURES_SETUP cel_spec_data LABELS "conformance")
  add_test(NAME cel_conformance
           COMMAND cel_conformance ${CMAKE_BINARY_DIR}/cel-spec/conformance.json
                   ${CMAKE_CURRENT_SOURCE_DIR}/cel/conformance_skip.txt)
  set_tests_properties(cel_conformance PROPERTIES FIXTURES_REQUIRED cel_spec_data SKIP_RETURN_CODE 77
                       LABELS "unit;conformance;cel")
endif()
# The CEL engine's libFuzzer run is registered with the other fuzz targets (fuzz.cmake).
