# Every dependency is a Debian bookworm package; scripts/setup.sh installs them.
find_package(Boost 1.81 REQUIRED COMPONENTS url)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
if(ZERODROP_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(ZERODROP_BENCH)
  find_package(benchmark QUIET)
endif()

# Asio and Beast, header-only: settings every user of them shares.
add_library(zerodrop_asio INTERFACE)
target_link_libraries(zerodrop_asio INTERFACE Boost::headers Threads::Threads)
target_compile_definitions(zerodrop_asio INTERFACE BOOST_ASIO_NO_DEPRECATED BOOST_ASIO_DISABLE_BOOST_COROUTINE)
