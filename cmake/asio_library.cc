// Asio's and Beast's non-template code, compiled once for the whole build.
//
// Why this file exists: header-only, Asio and Beast define their non-template functions (the
// epoll reactor, the scheduler, socket operations, error categories, Beast's HTTP parser) inline
// in every translation unit that includes them, and the optimiser compiles them again in each:
// at -O2 -g1 the lab's largest unity file took 44.9 s of CPU header-only and 36.1 s with
// BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION (shim's 41.2 -> 30.3 s,
// graceful's 38.3 -> 33.4 s). Both libraries document this mode: the macros are defined for
// every file of the build (cmake/dependencies.cmake), and this file is the one that includes
// their sources. TLS has its own (cmake/asio_ssl_library.cc), built only where OpenSSL is linked.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
