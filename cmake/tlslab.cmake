# Shared build conventions for every folder.

# Warnings for the lab's own code.
# -Wsign-conversion: an int result kept in an unsigned (gaps/int_result_unsigned) does not compile quietly.
set(TLSLAB_WARNINGS -Wall -Wextra -Wshadow -Wsign-conversion -Wno-unused-parameter)

# ASan + UBSan, used for the unit tests and the fuzzers (Release builds stay unsanitized for measurements and valgrind).
set(TLSLAB_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1)
set(TLSLAB_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1)

# Folders the gates read and write, all under the build tree (never in git).
set(TLSLAB_CERTS_DIR ${CMAKE_BINARY_DIR}/certs/out)
set(TLSLAB_WORK_DIR ${CMAKE_BINARY_DIR}/work)
file(MAKE_DIRECTORY ${TLSLAB_WORK_DIR})

# tlslab_gate(NAME <name> LABELS <label...> TIMEOUT <s> COMMAND <cmd...>)
# One gate = one CTest test. Python gates run with Debian's interpreter; they import the lab
# library (harness/) through the `harness` link in their folder, so no PYTHONPATH is set.
function(tlslab_gate)
  cmake_parse_arguments(G "" "NAME;TIMEOUT" "LABELS;COMMAND" ${ARGN})
  if(NOT G_TIMEOUT)
    message(FATAL_ERROR "tlslab_gate(${G_NAME}): TIMEOUT is required")
  endif()
  add_test(NAME ${G_NAME} COMMAND ${G_COMMAND})
  set_tests_properties(${G_NAME} PROPERTIES
    LABELS "${G_LABELS}"
    TIMEOUT ${G_TIMEOUT}
    ENVIRONMENT "TLSLAB_CERTS=${TLSLAB_CERTS_DIR};TLSLAB_WORK=${TLSLAB_WORK_DIR}")
endfunction()
