#include "lab/routers/ingress_io.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::lab {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

int connect_to(const std::string& path, uint16_t port) {
  int fd = ::socket(path.empty() ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return -1;
  }
  timeval timeout{static_cast<time_t>(kIngressApplyTimeout / 1s), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  int rc = -1;
  if (path.empty()) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  } else {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof address.sun_path - 1);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  }
  if (rc != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& text) {
  return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

std::string read_until(int fd, std::string_view end) {
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((end.empty() || !text.ends_with(end)) && (n = ::read(fd, buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

std::optional<std::string> exchange_once(const std::string& path, uint16_t port,
                                         const std::string& request) {
  int fd = connect_to(path, port);
  if (fd < 0) {
    return std::nullopt;
  }
  std::optional<std::string> answer;
  if (send_all(fd, request)) {
    answer = read_until(fd, "");
  }
  ::close(fd);
  return answer;
}

void write_file(const std::string& path, const std::string& text) {
  std::string next = path + ".next";
  {
    std::ofstream out(next, std::ios::trunc);
    out << text;
    if (!out.flush()) {
      throw Error(fmt::format("cannot write {}", next));
    }
  }
  fs::rename(next, path);  // the program never reads a half-written file
}

std::istringstream read_log(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return std::istringstream(text.str());
}

}  // namespace zerodrop::lab
