#pragma once

#include <cstdint>
#include <nghttp2/nghttp2.h>

namespace zerodrop::load {

// The nghttp2 callbacks every Http2Session shares: their user data is the session, a stream's
// user data its Slot. The session's reactions to what they report are in http2_frames.cc too.
nghttp2_session_callbacks* http2_callbacks();

// nghttp2's data source of a request body: the plan's body from the slot's offset, EOF at its
// end (at once for a stream given up).
ssize_t read_http2_body(nghttp2_session* s, int32_t id, uint8_t* buf, size_t length,
                        uint32_t* flags, nghttp2_data_source* source, void* user);

}  // namespace zerodrop::load
