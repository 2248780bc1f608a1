// Leader election: decide()'s rules, MicroTime, and two Electors against a fake Lease API (a unix
// socket speaking the API server's create/get/update with resourceVersion conflicts).
#include "watch/lease.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace zerodrop::watch {
namespace {

using Json = nlohmann::json;
using std::chrono::seconds;

SystemTime at(int s) {
  return SystemTime(seconds(1'800'000'000 + s));
}

TEST(LeaseDecide, ClientGosRules) {
  EXPECT_EQ(decide(std::nullopt, "a", at(0)), LeaseStep::create);
  LeaseRecord held{"a", 15, at(0), at(0), 0, "1"};
  EXPECT_EQ(decide(held, "a", at(100)), LeaseStep::renew);
  EXPECT_EQ(decide(held, "b", at(10)), LeaseStep::follow);
  EXPECT_EQ(decide(held, "b", at(15)), LeaseStep::follow);  // not yet past the duration
  EXPECT_EQ(decide(held, "b", at(16)), LeaseStep::take_over);
  LeaseRecord released{"", 15, at(0), at(0), 0, "1"};
  EXPECT_EQ(decide(released, "b", at(1)), LeaseStep::take_over);
}

TEST(LeaseTime, MicroTimeRoundTrips) {
  SystemTime t = at(0) + std::chrono::microseconds(123456);
  EXPECT_EQ(micro_time(t), "2027-01-15T08:00:00.123456Z");
  EXPECT_EQ(parse_time(micro_time(t)), t);
  EXPECT_EQ(parse_time("2027-01-15T08:00:00Z"), at(0));
  EXPECT_EQ(parse_time("2027-01-15T09:00:00+01:00"), at(0));
  EXPECT_EQ(parse_time("yesterday"), std::nullopt);
}

// One Lease, as the API server keeps it: 404 before it exists, 409 on a create that lost or an
// update with a stale resourceVersion.
class FakeLeaseApi {
public:
  FakeLeaseApi() {
    path_ = std::filesystem::path(::testing::TempDir())
            / ("lease-" + std::to_string(::getpid()) + ".sock");
    std::filesystem::remove(path_);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    thread_ = std::thread([this] { serve(); });
  }

  ~FakeLeaseApi() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    std::filesystem::remove(path_);
  }

  std::string path() const { return path_; }

  Json lease() {
    std::lock_guard lock(mutex_);
    return lease_;
  }

private:
  std::pair<int, Json> answer(const std::string& method, const Json& body) {
    std::lock_guard lock(mutex_);
    if (method == "GET") {
      return lease_.is_null() ? std::pair{404, Json{{"kind", "Status"}, {"message", "not found"}}}
                              : std::pair{200, lease_};
    }
    if (method == "POST" && !lease_.is_null()) {
      return {409, {{"kind", "Status"}, {"message", "already exists"}}};
    }
    if (method == "PUT"
        && body["metadata"].value("resourceVersion", "") != std::to_string(version_)) {
      return {409, {{"kind", "Status"}, {"message", "the object has been modified"}}};
    }
    lease_ = body;
    lease_["metadata"]["resourceVersion"] = std::to_string(++version_);
    return {method == "POST" ? 201 : 200, lease_};
  }

  void serve() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) {
        return;
      }
      std::string request;
      char buf[4096];
      size_t length = 0;
      size_t head_end = std::string::npos;
      while (head_end == std::string::npos || request.size() < head_end + 4 + length) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) {
          break;
        }
        request.append(buf, static_cast<size_t>(n));
        head_end = request.find("\r\n\r\n");
        size_t cl = request.find("Content-Length: ");
        if (cl != std::string::npos && cl < head_end) {
          length = std::stoul(request.substr(cl + 16));
        }
      }
      std::string method = request.substr(0, request.find(' '));
      Json body = Json::parse(request.substr(head_end + 4), nullptr, false);
      auto [status, json] = answer(method, body);
      std::string text = json.dump();
      std::string all = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: "
                        + std::to_string(text.size()) + "\r\nConnection: close\r\n\r\n" + text;
      [[maybe_unused]] ssize_t w = ::send(c, all.data(), all.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }

  std::string path_;
  int fd_ = -1;
  std::thread thread_;
  std::mutex mutex_;
  Json lease_;
  int version_ = 0;
};

TEST(Elector, TheSecondReplicaTakesOverOnceTheLeaderStopsRenewing) {
  FakeLeaseApi api;
  verify::ApiClient client(api.path());
  Elector a(client, {"zerodrop", "zerodrop-watch", "watch-a", seconds(15), seconds(10)});
  Elector b(client, {"zerodrop", "zerodrop-watch", "watch-b", seconds(15), seconds(10)});
  EXPECT_TRUE(a.tick(at(0)));  // creates it
  EXPECT_FALSE(b.tick(at(1)));
  EXPECT_EQ(b.holder(), "watch-a");
  EXPECT_TRUE(a.tick(at(2)));    // renews
  EXPECT_FALSE(b.tick(at(16)));  // renewed at 2: valid until 17
  EXPECT_TRUE(b.tick(at(18)));   // a stopped renewing: b takes over
  Json lease = api.lease();
  EXPECT_EQ(lease["spec"]["holderIdentity"], "watch-b");
  EXPECT_EQ(lease["spec"]["leaseTransitions"], 1);
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 15);
  EXPECT_FALSE(a.tick(at(19)));  // a sees b's valid lease and follows
  EXPECT_FALSE(a.leading());
}

}  // namespace
}  // namespace zerodrop::watch
