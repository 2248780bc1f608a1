// The signal helpers declared in subprocess.h: names and the dispositions /proc shows.
#include <signal.h>
#include <string.h>

#include <fstream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "base/subprocess.h"

namespace zerodrop {

std::optional<SignalDisposition> signal_disposition(pid_t pid, int signal) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  if (!in) {
    return std::nullopt;
  }
  SignalDisposition d;
  uint64_t bit = uint64_t{1} << (signal - 1);
  for (std::string line; std::getline(in, line);) {
    bool caught = line.starts_with("SigCgt:");
    if (caught || line.starts_with("SigIgn:")) {
      uint64_t mask = std::stoull(line.substr(7), nullptr, 16);
      (caught ? d.caught : d.ignored) = (mask & bit) != 0;
    }
  }
  return d;
}

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? abbrev : std::to_string(signal);
}

std::string signal_full_name(int signal) {
  return "SIG" + signal_name(signal);
}

std::optional<int> signal_from_name(const std::string& name) {
  std::string_view n = name;
  if (n.starts_with("SIG")) {
    n.remove_prefix(3);
  }
  if (!n.empty() && n.size() <= 3 && n.find_first_not_of("0123456789") == std::string_view::npos) {
    int number = std::stoi(std::string(n));
    return number > 0 && number < NSIG ? std::optional<int>(number) : std::nullopt;
  }
  for (int s = 1; s < NSIG; ++s) {
    const char* abbrev = ::sigabbrev_np(s);
    if (abbrev != nullptr && n == abbrev) {
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace zerodrop
