# Shared build conventions for every folder.

# Warnings for the lab's own code.
# -Wsign-conversion: an int result kept in an unsigned (gaps/int_result_unsigned) does not compile quietly.
set(TLSLAB_WARNINGS -Wall -Wextra -Wshadow -Wsign-conversion -Wno-unused-parameter)
# gcc (only the coverage build, coverage/README.md) also warns on an int ?: added to a size_t, which
# clang-14 accepts: a warning there, not an error; under clang nothing changes.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  list(APPEND TLSLAB_WARNINGS -Wno-error=sign-conversion)
endif()

# ASan + UBSan, used for the unit tests and the fuzzers (Release builds stay unsanitized for measurements and valgrind).
# -DTLSLAB_SAN_FLAGS= (the coverage build) compiles the _san twins like the others: gcovr merges the
# twins' branches by index, and -O1 with UBSan gives the same line other branches.
if(NOT DEFINED TLSLAB_SAN_FLAGS)
  set(TLSLAB_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1)
endif()
set(TLSLAB_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1)

# Folders the gates read and write, all under the build tree (never in git).
set(TLSLAB_CERTS_DIR ${CMAKE_BINARY_DIR}/certs/out)
set(TLSLAB_WORK_DIR ${CMAKE_BINARY_DIR}/work)
file(MAKE_DIRECTORY ${TLSLAB_WORK_DIR})

# tlslab_gate(NAME <name> LABELS <label...> TIMEOUT <s> [CORES <n>] [COST <s>] [DRAWN] COMMAND <cmd...>)
# One gate = one CTest test. CORES: how many cores the gate keeps busy by itself (default 1: one
# process at a time, or a gate that mostly waits), its CTest PROCESSORS: harness/lab_gate.py runs
# every label in one CTest run at twice the machine's cores, so two busy gates or four waiting ones
# share the machine at most. No verdict depends on what runs beside a gate: its timing terms compare
# with controls of the same run (harness/README.md), its wall bounds sit 4x from the deadlines given.
# COST: about how many seconds the gate takes in the whole gate (`lab_gate.py --profile` prints them),
# CTest's scheduling hint on a tree with no timing of its own yet (a fresh clone): the long gates
# start first, so that none of them is left alone at the end. A wrong figure costs time, never a verdict.
# DRAWN: a client's sampled crossing, skipped (exit 77, CTest's SKIP_RETURN_CODE, with one line saying
# why) in a tree whose draw of clients does not take it and whose inputs are unchanged (harness/crossings.py).
# Every gate runs from the source root: a Python gate is a module of the folder it names
# (`${Python3_EXECUTABLE} -m faults.faults_gate ...`), importing the lab library as the package
# `harness`, with no PYTHONPATH and no link; by hand, the same command from the root.
# TLSLAB_GATE_TEST names the test: with TLSLAB_JUNIT_DIR set, the gate's JUnit file is named for it,
# and its scratch folder is TLSLAB_WORK/<name> (harness/args.py).
# A command that starts with ${Python3_EXECUTABLE} runs it through BUILD/harness/cpu_meter/python3
# (harness/cpu_meter.c): Debian's interpreter, exec'd as it is, unless TLSLAB_CPU_DIR is set
# (harness/lab_gate.py sets it), then the CPU-seconds of the gate's whole process tree are written
# to TLSLAB_CPU_DIR/<name>.json. The command keeps its shape (`.../python3 -m MODULE ...`), which
# mutants/ and unit harness_gate_lists read from CTest. Any other command runs as given (not measured).
function(tlslab_gate)
  cmake_parse_arguments(G "DRAWN" "NAME;TIMEOUT;CORES;COST" "LABELS;COMMAND" ${ARGN})
  if(NOT G_TIMEOUT)
    message(FATAL_ERROR "tlslab_gate(${G_NAME}): TIMEOUT is required")
  endif()
  if(NOT G_CORES)
    set(G_CORES 1)
  endif()
  list(GET G_COMMAND 0 program)
  if(program STREQUAL Python3_EXECUTABLE AND "harness" IN_LIST TLSLAB_FOLDERS)
    list(REMOVE_AT G_COMMAND 0)
    list(PREPEND G_COMMAND $<TARGET_FILE:tlslab_cpu_meter>)
  endif()
  add_test(NAME ${G_NAME} COMMAND ${G_COMMAND})
  set_tests_properties(${G_NAME} PROPERTIES
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    LABELS "${G_LABELS}"
    TIMEOUT ${G_TIMEOUT}
    PROCESSORS ${G_CORES}
    ENVIRONMENT "TLSLAB_CERTS=${TLSLAB_CERTS_DIR};TLSLAB_WORK=${TLSLAB_WORK_DIR};TLSLAB_GATE_TEST=${G_NAME}")
  if(G_COST)
    set_tests_properties(${G_NAME} PROPERTIES COST ${G_COST})
  endif()
  if(G_DRAWN)  # a client's sampled crossing: exit 77 (harness/crossings.py SKIPPED) when the tree does not draw it
    set_tests_properties(${G_NAME} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()

# tlslab_units(<target> [PREFIX <p>]): a GoogleTest program as one test of label unit, run once by
# harness/units.py, every case a line (and a JUnit case) named PREFIX + SUITE.CASE as CTest used to
# name them: one ASan start a program, not one a case (gtest_discover_tests: 248 starts, ~25 CPU-s).
function(tlslab_units target)
  cmake_parse_arguments(U "" "PREFIX" "" ${ARGN})
  if("harness" IN_LIST TLSLAB_FOLDERS)
    set(prefix)
    if(U_PREFIX)
      set(prefix --prefix ${U_PREFIX})
    endif()
    tlslab_gate(NAME ${target} LABELS unit TIMEOUT 240
      COMMAND ${Python3_EXECUTABLE} -m harness.units $<TARGET_FILE:${target}> ${prefix})
  else()
    include(GoogleTest)
    gtest_discover_tests(${target} TEST_PREFIX "${U_PREFIX}" PROPERTIES LABELS unit TIMEOUT 60 DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# tlslab_library_twins(<name> SOURCES <src...> [INCLUDES <dir...>] [TWINS <twins...>] [LINK <lib...>])
# Two static libraries of the same sources, warnings as errors: <name> (Release, for the programs
# and every measurement) and <name>_san (ASan + UBSan, for the units and the sanitized runs).
# TWINS: other twins linked twin to twin (<lib> into <name>, <lib>_san into <name>_san); LINK: the rest.
function(tlslab_library_twins name)
  cmake_parse_arguments(L "" "" "SOURCES;INCLUDES;TWINS;LINK" ${ARGN})
  foreach(lib ${name} ${name}_san)
    add_library(${lib} STATIC ${L_SOURCES})
    target_include_directories(${lib} PUBLIC ${L_INCLUDES})
    target_link_libraries(${lib} PUBLIC ${L_LINK})
    target_compile_options(${lib} PRIVATE ${TLSLAB_WARNINGS} -Werror)
  endforeach()
  target_link_libraries(${name} PUBLIC ${L_TWINS})
  list(TRANSFORM L_TWINS APPEND _san)
  target_link_libraries(${name}_san PUBLIC ${L_TWINS})
  target_compile_options(${name}_san PUBLIC ${TLSLAB_SAN_FLAGS})
  target_link_options(${name}_san PUBLIC ${TLSLAB_SAN_FLAGS})
endfunction()

# tlslab_clients_under_test(<var>): the rooms of clients/ with a profile, the reference's left out.
# Re-configured when a profile comes or goes.
function(tlslab_clients_under_test var)
  file(GLOB profiles ${CMAKE_SOURCE_DIR}/clients/*/profile.toml)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${profiles} ${CMAKE_SOURCE_DIR}/clients)
  set(names)
  foreach(profile IN LISTS profiles)
    get_filename_component(room ${profile} DIRECTORY)
    get_filename_component(client ${room} NAME)
    if(NOT client STREQUAL "tlsnb")
      list(APPEND names ${client})
    endif()
  endforeach()
  set(${var} ${names} PARENT_SCOPE)
endfunction()

# tlslab_needs(<folder> <target...>): a gate folder whose gates run targets of other folders (the
# client, the shims) registers nothing, with one line saying so, in a tree built without them
# (-DTLSLAB_FOLDERS=...). A macro: its return() leaves the folder's CMakeLists.txt.
macro(tlslab_needs folder)
  foreach(needed ${ARGN})
    if(NOT TARGET ${needed})
      message(STATUS "${folder}: needs the target ${needed} (its folder is not in TLSLAB_FOLDERS); no gate registered")
      return()
    endif()
  endforeach()
endmacro()
