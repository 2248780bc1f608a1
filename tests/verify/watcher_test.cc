// Watcher and ApiClient against a scripted server on a unix socket: list, watch from the list's
// version, resume from the last version (bookmarks count), relist on 410, stop on cancel.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"
#include "testing/unix_http_server.h"
#include "verify/watch.h"

namespace zerodrop::verify {
namespace {

namespace fs = std::filesystem;

// Answers each connection's request with script(target), then closes (a close-delimited body);
// an answer starting "410:" is sent with status 410. Keeps the targets asked for, in order.
class ScriptedServer {
public:
  explicit ScriptedServer(std::function<std::string(const std::string&)> script,
                          std::atomic<bool>* hold = nullptr)
      : server_(
          "api",
          [this, script = std::move(script)](const testing::UnixRequest& request) {
            {
              std::lock_guard lock(mutex_);
              targets_.push_back(request.target);
            }
            std::string body = script(request.target);
            return body.starts_with("410:") ? testing::close_delimited(410, "Gone", body.substr(4))
                                            : testing::close_delimited(200, "OK", body);
          },
          [hold] {
            while (hold && hold->load()) {  // a watch that stays open after its first event
              std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
          }) {}

  std::string path() const { return server_.path(); }

  std::vector<std::string> targets() {
    std::lock_guard lock(mutex_);
    return targets_;
  }

private:
  std::mutex mutex_;
  std::vector<std::string> targets_;
  testing::UnixHttpServer server_;  // last: its thread stops before the targets go
};

std::string list_of(const std::string& version, const std::string& pod) {
  return R"({"kind":"PodList","metadata":{"resourceVersion":")" + version
         + R"("},"items":[{"metadata":{"name":")" + pod + R"("}}]})";
}

TEST(Watcher, ResumesFromTheLastVersionAndListsAgainWhenItIsGone) {
  std::atomic<int> watches{0};
  ScriptedServer server([&](const std::string& target) -> std::string {
    if (target.find("watch=true") == std::string::npos) {
      return watches.load() == 0 ? list_of("5", "a") : list_of("20", "c");
    }
    switch (watches++) {
      case 0:  // an event split by nothing in particular, then a bookmark
        return R"({"type":"ADDED","object":{"metadata":{"name":"b","resourceVersion":"7"}}})"
               "\n"
               R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})"
               "\n";
      case 1:
        return R"({"type":"ERROR","object":{"kind":"Status","code":410}})"
               "\n";
      default:
        return "";
    }
  });
  ApiClient client(server.path());
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> seen;
  std::vector<std::string> notes;
  Watcher watcher(
      client, {"pods", "/api/v1/namespaces/shop/pods", "labelSelector=app%3Dweb"},
      [&](const WatchEvent& e) {
        std::lock_guard lock(mutex);
        seen.push_back(e.object["metadata"].value("name", "") + ":"
                       + std::to_string(static_cast<int>(e.type)));
        changed.notify_all();
      },
      [&](const std::string& note) {
        std::lock_guard lock(mutex);
        notes.push_back(note);
      });
  watcher.list();
  std::thread thread([&] { watcher.watch(); });
  {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(changed.wait_for(lock, std::chrono::seconds(20), [&] { return seen.size() >= 3; }));
  }
  watcher.stop();
  thread.join();
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen[0], "a:0");  // listed
  EXPECT_EQ(seen[1], "b:1");  // added
  EXPECT_EQ(seen[2], "c:0");  // listed again after 410
  EXPECT_EQ(watcher.relists(), 1);
  auto targets = server.targets();
  ASSERT_GE(targets.size(), 4u);
  EXPECT_EQ(targets[0], "/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb");
  EXPECT_NE(targets[1].find("watch=true&allowWatchBookmarks=true"), std::string::npos);
  EXPECT_NE(targets[1].find("resourceVersion=5"), std::string::npos);
  EXPECT_NE(targets[2].find("resourceVersion=9"), std::string::npos);  // from the bookmark
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("410"), std::string::npos);
}

// A watch event must reach the caller while the stream stays open, not when a buffer fills or
// the server ends the watch.
TEST(ApiClient, StreamsEachPieceAsItArrives) {
  std::atomic<bool> hold{true};
  ScriptedServer server(
      [](const std::string&) {
        return std::string(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})") + "\n";
      },
      &hold);
  ApiClient client(server.path());
  Cancel cancel;
  std::atomic<bool> got{false};
  std::thread reader([&] {
    client.stream(
        "/api/v1/pods?watch=true",
        [&](std::string_view data) {
          got.store(got.load() || data.find("\"a\"") != std::string_view::npos);
          return true;
        },
        cancel);
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!got.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  bool delivered_while_open = got.load();
  cancel.cancel();
  hold.store(false);
  reader.join();
  EXPECT_TRUE(delivered_while_open);
}

TEST(ApiClient, NamesTheSocketThatDoesNotAnswer) {
  ApiClient client((fs::path(::testing::TempDir()) / "no-such.sock").string());
  try {
    client.get("/version");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach the API server through kubectl proxy"),
              std::string::npos);
  }
}

TEST(ErrorText, StatusMessageElseTheFirstLine) {
  EXPECT_EQ(error_text({403, R"({"kind":"Status","message":"pods is forbidden"})"}),
            "pods is forbidden");
  EXPECT_EQ(error_text({502, "dial tcp 127.0.0.1:1: connect: connection refused\nmore"}),
            "dial tcp 127.0.0.1:1: connect: connection refused");
  EXPECT_EQ(error_text({500, ""}), "HTTP 500");
  EXPECT_EQ(query_escape("app=web,tier in (a)"), "app%3Dweb%2Ctier%20in%20%28a%29");
}

}  // namespace
}  // namespace zerodrop::verify
