# The fake libnvidia-ml.so.1 (tests/node/fake_nvml): NVML's ABI over 8 simulated
# H100s, for the NVML backend's tests on machines without a GPU. Named exactly as
# the real library so that dlopen("libnvidia-ml.so.1") finds it through
# LD_LIBRARY_PATH, DRAPLANE_NVML_LIB or `--gpus nvml:PATH`.
add_library(fake_nvml SHARED ${CMAKE_CURRENT_SOURCE_DIR}/node/fake_nvml/fake_nvml.c)
set_target_properties(fake_nvml PROPERTIES
  PREFIX "lib" OUTPUT_NAME "nvidia-ml" SUFFIX ".so.1"
  C_STANDARD 11 C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/fake_nvml)
target_link_libraries(fake_nvml PRIVATE Threads::Threads)
if(TARGET node_test)
  add_dependencies(node_test fake_nvml)
  # On the one source that uses it: the other node tests keep their flags (and ccache hits).
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/node/nvml_test.cc PROPERTIES
    COMPILE_DEFINITIONS "DRAPLANE_FAKE_NVML=\"$<TARGET_FILE:fake_nvml>\"")
endif()
# `draplane agent --gpus nvml` finding the fake through LD_LIBRARY_PATH, the flag and the environment.
if(TARGET draplane)
  add_test(NAME cli_agent_nvml
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/agent_nvml_test.sh $<TARGET_FILE:draplane> $<TARGET_FILE:fake_nvml>)
  set_tests_properties(cli_agent_nvml PROPERTIES LABELS "cli" TIMEOUT 60)
endif()
# deploy/: draplane validate, kubectl client dry run (discovery stand-in), the image's entrypoint.
if(TARGET draplane)
  add_test(NAME deploy_manifests
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/manifests_test.sh $<TARGET_FILE:draplane> ${CMAKE_SOURCE_DIR}
                   $<TARGET_FILE:fake_nvml>)
  set_tests_properties(deploy_manifests PROPERTIES LABELS "cli" TIMEOUT 120 SKIP_RETURN_CODE 77)
endif()
# scripts/gpu-check without a GPU (exit 0, the reason) and through the fake library.
if(TARGET draplane)
  add_test(NAME gpu_check_script
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/gpu_check_test.sh $<TARGET_FILE:draplane> ${CMAKE_SOURCE_DIR}
                   $<TARGET_FILE:fake_nvml>)
  set_tests_properties(gpu_check_script PROPERTIES LABELS "cli" TIMEOUT 120)
endif()
# `draplane up` with a node on the fake NVML: slices, a pod, an injected XID -> taint and health.
find_program(KUBECTL kubectl)
if(TARGET draplane AND KUBECTL)
  add_test(NAME up_nvml_e2e
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/e2e/up_nvml.py $<TARGET_FILE:draplane>
                   $<TARGET_FILE:fake_nvml>)
  set_tests_properties(up_nvml_e2e PROPERTIES LABELS "e2e;up" TIMEOUT 120)
endif()
