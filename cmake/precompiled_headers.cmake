# Precompiled headers, with clang only: the standard library, fmt, nlohmann/json and Asio
# (included by most files) parsed once per build rather than once per unity file, and gtest
# besides for the unit-test binaries. Two headers in all, each built once and reused by every
# target (REUSE_FROM), which is why every file gets the same compile definitions
# (cmake/dependencies.cmake).
#
# Measured at clang 14 -O0 -g1 with ASan+UBSan (the sanitized build), CPU per unity file: lab's
# fourth 23.3 -> 17.5 s, kubeapi's first 14.3 -> 11.8 s, audit's first 13.7 -> 10.4 s; building
# the header costs 5.4 s once; a clean sanitized build 669 -> 462 s of CPU. At -O2 -g1 (the
# release build, clang since 2026-12-03): lab's fourth 21.0 -> 18.9 s, verify's first 14.7 ->
# 14.5 s (g++ 12: 24.6 and 19.9 s); what make test builds there 375 s of CPU against 580 s with
# g++. Not with g++: at -O2 its time goes to optimisation and debug info, not parsing
# (docs/ARCHITECTURE.md, "Build time": 12.3 s against 12.6 s, a 380 MB .gch).
# A file that forgets an include still compiles here; `make check-includes` (every source and
# header alone, no precompiled header, no unity batch) fails on it.
option(ZERODROP_PCH "Precompile the common headers (clang only)" ON)

set(zerodrop_pch_headers
  <algorithm> <array> <atomic> <chrono> <cstdint> <filesystem> <fstream> <functional> <map>
  <memory> <mutex> <optional> <set> <string> <string_view> <thread> <unordered_map> <vector>
  <fmt/format.h> <nlohmann/json.hpp> <boost/asio.hpp>)

# Left out: the libraries that compile fmt's, Asio's and Beast's own implementation files (those
# files include their headers in an order of their own), and zerodrop-sleep, compiled without the
# sanitizers (static: src/shim/CMakeLists.txt), which a sanitized header cannot serve.
set(zerodrop_pch_skip zerodrop_fmt zerodrop_asio zerodrop_tls zerodrop-sleep)

function(zerodrop_use_precompiled_headers)
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/zerodrop_pch.cc CONTENT "")  # written once
  add_library(zerodrop_pch OBJECT ${CMAKE_BINARY_DIR}/zerodrop_pch.cc)
  target_link_libraries(zerodrop_pch PRIVATE zerodrop_settings zerodrop_fmt zerodrop_asio
                        nlohmann_json::nlohmann_json)
  target_precompile_headers(zerodrop_pch PRIVATE ${zerodrop_pch_headers})
  get_property(unit_tests GLOBAL PROPERTY ZERODROP_UNIT_TESTS)
  if(unit_tests)
    add_library(zerodrop_pch_tests OBJECT ${CMAKE_BINARY_DIR}/zerodrop_pch.cc)
    target_link_libraries(zerodrop_pch_tests PRIVATE zerodrop_settings zerodrop_fmt zerodrop_asio
                          nlohmann_json::nlohmann_json GTest::gtest)
    target_precompile_headers(zerodrop_pch_tests PRIVATE ${zerodrop_pch_headers} <gtest/gtest.h>)
  endif()
  zerodrop_collect_targets(${CMAKE_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$"
       OR target MATCHES "^zerodrop_pch" OR target IN_LIST zerodrop_pch_skip)
      continue()
    endif()
    # Asio's headers define objects that need its compiled half: every file now includes them.
    target_link_libraries(${target} PRIVATE zerodrop_asio zerodrop_fmt)
    if(target IN_LIST unit_tests)
      target_precompile_headers(${target} REUSE_FROM zerodrop_pch_tests)
    else()
      target_precompile_headers(${target} REUSE_FROM zerodrop_pch)
    endif()
  endforeach()
endfunction()

if(ZERODROP_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL zerodrop_use_precompiled_headers)
endif()
