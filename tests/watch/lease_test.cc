// Leader election: decide()'s rules, MicroTime, and two Electors against a fake Lease API (the API
// server's create/get/update with resourceVersion conflicts, on a unix socket).
#include "watch/lease.h"

#include <cstdlib>
#include <mutex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/unix_http_server.h"

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

TEST(LeaseOwner, OnlyAPodInTheLeasesNamespaceOwnsIt) {
  ::setenv("POD_NAME", "watch-7f9", 1);
  ::setenv("POD_UID", "0b1e", 1);
  ::setenv("POD_NAMESPACE", "zerodrop", 1);
  std::optional<PodOwner> owner = own_pod("zerodrop");
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->name, "watch-7f9");
  EXPECT_EQ(owner->uid, "0b1e");
  // An owner in another namespace would be unresolvable: the collector would delete the Lease.
  EXPECT_FALSE(own_pod("elsewhere"));
  ::unsetenv("POD_UID");
  EXPECT_FALSE(own_pod("zerodrop"));  // no uid: a laptop's watch owns nothing
  ::unsetenv("POD_NAME");
  ::unsetenv("POD_NAMESPACE");
  EXPECT_FALSE(lease_object("zerodrop", "zerodrop-watch", LeaseRecord{})["metadata"].contains(
      "ownerReferences"));
}

// One Lease, as the API server keeps it: 404 before it exists, 409 on a create that lost or an
// update with a stale resourceVersion.
class FakeLeaseApi {
public:
  std::string path() const { return server_.path(); }

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

  std::mutex mutex_;
  Json lease_;
  int version_ = 0;
  testing::UnixHttpServer server_{"lease", [this](const testing::UnixRequest& request) {
                                    auto [status, json] = answer(
                                        request.method, Json::parse(request.body, nullptr, false));
                                    return testing::http_answer(status, json.dump());
                                  }};
};

TEST(Elector, TheSecondReplicaTakesOverOnceTheLeaderStopsRenewing) {
  FakeLeaseApi api;
  verify::ApiClient client(api.path());
  Elector a(client, {"zerodrop", "zerodrop-watch", "watch-a", seconds(15), seconds(10),
                     PodOwner{"watch-a", "uid-a"}});
  Elector b(client, {"zerodrop", "zerodrop-watch", "watch-b", seconds(15), seconds(10),
                     PodOwner{"watch-b", "uid-b"}});
  EXPECT_TRUE(a.tick(at(0)));  // creates it
  // Owned by the holder's Pod: the garbage collector deletes it with that Pod.
  EXPECT_EQ(api.lease()["metadata"]["ownerReferences"][0]["uid"], "uid-a");
  EXPECT_EQ(api.lease()["metadata"]["ownerReferences"][0]["kind"], "Pod");
  EXPECT_FALSE(b.tick(at(1)));
  EXPECT_EQ(b.holder(), "watch-a");
  EXPECT_TRUE(a.tick(at(2)));    // renews
  EXPECT_FALSE(b.tick(at(16)));  // renewed at 2: valid until 17
  EXPECT_TRUE(b.tick(at(18)));   // a stopped renewing: b takes over
  Json lease = api.lease();
  EXPECT_EQ(lease["spec"]["holderIdentity"], "watch-b");
  EXPECT_EQ(lease["spec"]["leaseTransitions"], 1);
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 15);
  ASSERT_EQ(lease["metadata"]["ownerReferences"].size(), 1u);  // the new holder's Pod, alone
  EXPECT_EQ(lease["metadata"]["ownerReferences"][0]["name"], "watch-b");
  EXPECT_FALSE(a.tick(at(19)));  // a sees b's valid lease and follows
  EXPECT_FALSE(a.leading());
}

}  // namespace
}  // namespace zerodrop::watch
