// Asio's SSL streams' non-template code, compiled once (see cmake/asio_library.cc), in the
// zerodrop_tls library that links OpenSSL.
#include <boost/asio/ssl/impl/src.hpp>
