# Allocator conformance: the scenarios translated from the upstream allocator test
# table, run through `draplane allocate` (CI clones the repo with shared/ beside it).
set(DRAPLANE_ALLOC_RUNNER ${CMAKE_SOURCE_DIR}/../shared/conformance/run_allocator.py)
if(TARGET draplane AND EXISTS ${DRAPLANE_ALLOC_RUNNER})
  add_test(NAME alloc_conformance
           COMMAND /usr/bin/python3 ${DRAPLANE_ALLOC_RUNNER} --bin $<TARGET_FILE:draplane>)
  set_tests_properties(alloc_conformance PROPERTIES LABELS "conformance;alloc" TIMEOUT 900)
endif()
