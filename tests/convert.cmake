# `draplane convert` end to end (v1beta1/v1beta2 -> v1, v1alpha2 rejection).
if(TARGET draplane)
  add_test(NAME convert_cli
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/convert/convert_cli_test.sh $<TARGET_FILE:draplane> ${CMAKE_SOURCE_DIR})
  set_tests_properties(convert_cli PROPERTIES LABELS "unit;cli" TIMEOUT 120)
endif()
