# `draplane simulate` through the CLI (a few seconds; the trace part is skipped
# when ../shared/data is absent).
if(TARGET draplane AND TARGET draplane_sim)
  # The third argument says whether this build found cairo (PNG plots).
  if(CAIRO_FOUND)
    set(_sim_png png)
  else()
    set(_sim_png nopng)
  endif()
  add_test(NAME cli_simulate
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sim/simulate_cli_test.sh $<TARGET_FILE:draplane> ${CMAKE_SOURCE_DIR}
                   ${_sim_png})
  set_tests_properties(cli_simulate PROPERTIES LABELS "cli" TIMEOUT 120)
endif()
