#pragma once

// One nghttp2 header field that points at `name` and `value`: they must outlive the submit that
// takes it (nghttp2 copies them then). Shared by the load engine, both sides of the HTTP/2 proxy
// and the lab's gRPC probe.

#include <cstdint>
#include <nghttp2/nghttp2.h>
#include <string_view>

namespace zerodrop::http {

inline nghttp2_nv h2_nv(std::string_view name, std::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace zerodrop::http
