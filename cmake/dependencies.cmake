# Every dependency is a Debian bookworm package; scripts/setup.sh installs them.
# ZERODROP_STATIC (the release build, images FROM scratch) links their static archives instead.
set(Boost_USE_STATIC_LIBS ${ZERODROP_STATIC})
find_package(Boost 1.81 REQUIRED COMPONENTS url)
find_package(Threads REQUIRED)
find_package(fmt 9 REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
set(OPENSSL_USE_STATIC_LIBS ${ZERODROP_STATIC})
find_package(OpenSSL 3 REQUIRED)

# fmt: Debian has no libfmt.a, so zerodrop_fmt compiles fmt's implementation from Debian's headers
# (cmake/fmt_library.cc says why this beats FMT_HEADER_ONLY). Every build links fmt this same way.
add_library(zerodrop_fmt STATIC ${CMAKE_SOURCE_DIR}/cmake/fmt_library.cc)
target_include_directories(zerodrop_fmt SYSTEM PUBLIC
                           $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)

find_package(CLI11 REQUIRED)
if(ZERODROP_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(ZERODROP_BENCH)
  find_package(benchmark QUIET)
endif()

# Asio and Beast in separate compilation: their non-template code is compiled once, in
# zerodrop_asio (cmake/asio_library.cc says why and what it saves), rather than in every file
# that includes them. The macros are defined for every file of the build, so that no file
# compiles its own inline copies beside the library's; a target that includes Asio or Beast
# without linking zerodrop_asio (zerodrop_tls for SSL streams) fails to link rather than
# silently compiling them again. The installed lifecycle headers are untouched: their users
# include Asio as they choose.
# The other two macros are the same for every file too, so that every file reads Asio alike (and
# one precompiled header serves them all: cmake/precompiled_headers.cmake).
add_compile_definitions(BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION
                        BOOST_ASIO_NO_DEPRECATED BOOST_ASIO_DISABLE_BOOST_COROUTINE)
add_library(zerodrop_asio STATIC ${CMAKE_SOURCE_DIR}/cmake/asio_library.cc)
target_link_libraries(zerodrop_asio PUBLIC Boost::headers Threads::Threads)

# TLS for `zerodrop load https://`: Asio's SSL streams over Debian's OpenSSL (libssl-dev).
add_library(zerodrop_tls STATIC ${CMAKE_SOURCE_DIR}/cmake/asio_ssl_library.cc)
target_link_libraries(zerodrop_tls PUBLIC zerodrop_asio OpenSSL::SSL OpenSSL::Crypto
                      ${CMAKE_DL_LIBS})

# HTTP/2 for `zerodrop load --http2/--grpc`: Debian's libnghttp2 (libnghttp2-dev), which has no
# dependencies; the static release links its libnghttp2.a.
find_package(PkgConfig REQUIRED)
pkg_check_modules(NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2>=1.52)
add_library(zerodrop_nghttp2 INTERFACE)
if(ZERODROP_STATIC)
  find_library(NGHTTP2_STATIC NAMES libnghttp2.a REQUIRED HINTS ${NGHTTP2_LIBRARY_DIRS})
  target_include_directories(zerodrop_nghttp2 SYSTEM INTERFACE ${NGHTTP2_INCLUDE_DIRS})
  target_link_libraries(zerodrop_nghttp2 INTERFACE ${NGHTTP2_STATIC})
else()
  target_link_libraries(zerodrop_nghttp2 INTERFACE PkgConfig::NGHTTP2)
endif()
