# `draplane bench` at tiny sizes through the CLI (seconds): every workload in
# process, two through the API server and one e2e run (cli_bench_api). The real
# sizes are `make bench`.
if(TARGET draplane AND TARGET draplane_bench)
  foreach(part inprocess api)
    add_test(NAME cli_bench_${part}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_cli_test.sh $<TARGET_FILE:draplane> ${CMAKE_SOURCE_DIR} ${part})
    set_tests_properties(cli_bench_${part} PROPERTIES LABELS "cli" TIMEOUT 120)
  endforeach()
endif()
