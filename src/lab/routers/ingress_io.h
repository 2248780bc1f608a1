#pragma once

// Internal to the lab: how the ingress drivers (ingress_router.cc) talk to their programs: control
// sockets, the config files they rewrite and the logs they read back.

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "base/duration.h"

namespace zerodrop::lab {

// A reload's new workers, or one runtime API answer, within this; also a control socket's reads.
inline constexpr Duration kIngressApplyTimeout = std::chrono::seconds(10);

// A connected stream socket to `path` (unix) or 127.0.0.1:`port`, with the apply timeout on
// reads; -1 when nothing listens there (yet).
int connect_to(const std::string& path, uint16_t port);

// Whether all of `text` was sent.
bool send_all(int fd, const std::string& text);

// Reads until the peer closes or the text read ends with `end` (empty: until it closes).
std::string read_until(int fd, std::string_view end);

// One request on a new connection, answered and closed (HTTP/1.0, the runtime API's one-shot
// mode); nullopt when nothing listens there (yet).
std::optional<std::string> exchange_once(const std::string& path, uint16_t port,
                                         const std::string& request);

// Writes `text` to `path` through a temporary file renamed over it: the program never reads a
// half-written file. Throws Error naming the file it cannot write.
void write_file(const std::string& path, const std::string& text);

// The lines of `path`, read whole ("" when it cannot be read: the notes then say nothing).
std::istringstream read_log(const std::string& path);

}  // namespace zerodrop::lab
