# `draplane validate` end to end (examples and the invalid manifests, with CEL).
if(TARGET draplane)
  add_test(NAME validate_cli
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/validate/validate_cli_test.sh $<TARGET_FILE:draplane> ${CMAKE_SOURCE_DIR})
  set_tests_properties(validate_cli PROPERTIES LABELS "unit;cli" TIMEOUT 120)
endif()
