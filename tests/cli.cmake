# CLI contract tests (DESIGN.md): help/version and usage errors, `draplane cel eval`,
# `draplane allocate` (policies, node choice, explanations, input errors).
if(TARGET draplane)
  foreach(t help_version cel_eval allocate agent_print_slices driver)
    add_test(NAME cli_${t}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/${t}_test.sh $<TARGET_FILE:draplane> ${CMAKE_SOURCE_DIR})
    set_tests_properties(cli_${t} PROPERTIES LABELS "cli" TIMEOUT 120)
  endforeach()
endif()
