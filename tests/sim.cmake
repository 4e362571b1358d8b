# `draplane simulate` through the CLI (a few seconds; the trace part is skipped
# when ../shared/data is absent).
if(TARGET draplane AND TARGET draplane_sim)
  add_test(NAME cli_simulate
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sim/simulate_cli_test.sh $<TARGET_FILE:draplane> ${CMAKE_SOURCE_DIR})
  set_tests_properties(cli_simulate PROPERTIES LABELS "cli" TIMEOUT 120)
endif()
