# Language level, warnings and sanitizers, as INTERFACE targets linked PRIVATE everywhere.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

# No -Wnull-dereference: g++ 12 reports it inside inlined Asio, CLI11 and libstdc++ code (false
# positives that the system-header exemption misses after inlining).
add_library(zerodrop_warnings INTERFACE)
# -Wcast-align: g++ warns only for targets that trap on a misaligned access; clang on every target,
# also inside the kernel's own netlink macros (NLMSG_NEXT), so it is g++'s alone.
target_compile_options(zerodrop_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor $<$<CXX_COMPILER_ID:GNU>:-Wcast-align>
  -Woverloaded-virtual -Wimplicit-fallthrough -Wno-missing-field-initializers)
# The Makefile's builds (and so CI, which runs `make test`) turn it on: a new warning fails there.
if(ZERODROP_WERROR)
  target_compile_options(zerodrop_warnings INTERFACE -Werror)
endif()

add_library(zerodrop_settings INTERFACE)
target_include_directories(zerodrop_settings INTERFACE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(zerodrop_settings INTERFACE zerodrop_warnings)

# LLVM's lld (Debian's lld, scripts/setup.sh) links the 128 MB static zerodrop in 1.8 s of CPU
# where GNU ld takes 6.2 s, and so every test binary; GNU ld when it is not installed.
find_program(ZERODROP_LLD ld.lld)
if(ZERODROP_LLD)
  add_link_options(-fuse-ld=lld)
endif()

if(ZERODROP_SANITIZE AND ZERODROP_STATIC)
  message(FATAL_ERROR "ZERODROP_SANITIZE and ZERODROP_STATIC cannot be combined: the sanitizer "
                      "runtimes link only dynamically. Use one of them.")
endif()
if(ZERODROP_SANITIZE)
  # Applied globally so that every library, test and example agrees on the instrumented ABI.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  # clang 14's `function` check (a call through a pointer of the wrong function type; g++ has no
  # such check) fails to assemble C++20 coroutines ("Cannot represent a difference across
  # sections"): off, which leaves clang's checks a superset of g++'s.
  add_compile_options($<$<CXX_COMPILER_ID:Clang>:-fno-sanitize=function>)
  # libstdc++'s own checks too: front() or pop_front() of an empty deque, an index out of range.
  add_compile_definitions(_GLIBCXX_ASSERTIONS)
  add_link_options(-fsanitize=address,undefined)
  # Executables not position-independent: a PIE zerodrop carries 3.5 million relative relocations
  # (the sanitizers' metadata for every global and check site), which the loader applied at every
  # start: 0.74 s of CPU before main against 0.38 s without. Tests start it thousands of times.
  # An executable linked -static (zerodrop-sleep) sets ZERODROP_LINKS_STATIC: -no-pie means
  # nothing to it, and clang says so on every link.
  add_link_options(
    "$<$<AND:$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>,$<NOT:$<BOOL:$<TARGET_PROPERTY:ZERODROP_LINKS_STATIC>>>>:-no-pie>")
endif()

# zerodrop_add_component(NAME sources... DEPS targets...): the static library zerodrop_NAME for src/NAME.
function(zerodrop_add_component name)
  cmake_parse_arguments(arg "" "" "SOURCES;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(zerodrop_${name} STATIC ${arg_SOURCES})
  target_link_libraries(zerodrop_${name} PUBLIC zerodrop_settings ${arg_PUBLIC_DEPS} PRIVATE ${arg_DEPS})
endfunction()

# One CTest test per GoogleTest case (ZERODROP_TEST_PER_CASE, the default) or per binary. Every
# ASan+UBSan process start costs ~0.18 s of CPU with clang (~0.34 s with g++ 12, whose UBSan check
# sites are 1.2 million globals that ASan registers), so
# the sanitized build runs each binary once, all its cases in one process; a failing case still
# prints its name and output (GTEST_BRIEF: only failures and the summary), and
# `BINARY --gtest_filter=Suite.Case` reruns one case.
if(ZERODROP_SANITIZE)
  set(per_case_default OFF)
else()
  set(per_case_default ON)
endif()
option(ZERODROP_TEST_PER_CASE "One CTest test per GoogleTest case, not per binary"
       ${per_case_default})

# zerodrop_add_test(NAME sources... DEPS targets... [COST seconds]): one GoogleTest binary,
# registered with CTest. COST, the binary's time under ASan (roughly), lets a fresh build folder
# (no ctest timings yet) start a long one first rather than finish on it.
function(zerodrop_add_test name)
  cmake_parse_arguments(arg "" "COST" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  set_property(GLOBAL APPEND PROPERTY ZERODROP_UNIT_TESTS ${name})
  target_link_libraries(${name} PRIVATE zerodrop_settings zerodrop_testing ${arg_DEPS}
                        GTest::gtest GTest::gmock GTest::gtest_main)
  set(labels unit ${arg_LABELS})
  if(ZERODROP_TEST_PER_CASE)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${labels}" TIMEOUT 300)
  else()
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 900
                         ENVIRONMENT GTEST_BRIEF=1)
    if(arg_COST)
      set_tests_properties(${name} PROPERTIES COST ${arg_COST})
    endif()
  endif()
endfunction()

# zerodrop_collect_targets(DIR OUT): every target defined in DIR and the folders under it, for a
# call deferred to the end of the top-level directory (once every target exists).
function(zerodrop_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    zerodrop_collect_targets(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()
