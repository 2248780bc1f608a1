#pragma once
// Whether a request may be sent again after a failure without changing what the server did.

// Boost 1.81's verb.hpp writes to a std::ostream having included only <iosfwd>: a file that
// includes this header first would not compile without <ostream> before it.
#include <ostream>

#include <boost/beast/http/verb.hpp>

namespace zerodrop::http {

// The idempotent methods of RFC 9110 section 9.2.2: a proxy may retry them on another backend, or
// after a broken connection, without a user-visible effect.
inline bool idempotent(boost::beast::http::verb method) {
  using boost::beast::http::verb;
  switch (method) {
    case verb::get:
    case verb::head:
    case verb::put:
    case verb::delete_:
    case verb::options:
    case verb::trace:
      return true;
    default:
      return false;
  }
}

}  // namespace zerodrop::http
