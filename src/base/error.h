#pragma once

#include <stdexcept>
#include <string>

namespace zerodrop {

// The one error type for setup, configuration and user errors (flags, files, YAML, bind).
// The message is lower-case, names the culprit and is printed by main() as
// "zerodrop: error: <message>" with exit code 2. Never thrown from asynchronous I/O handlers.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace zerodrop
