#include "shim/front_proxy.h"

#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "testing/misbehaving_server.h"
#include "testing/raw_client.h"
#include "zerodrop/lifecycle/shutdown.h"

namespace zerodrop::shim {
namespace {

using zerodrop::testing::Behaviour;
using zerodrop::testing::occurrences;
using zerodrop::testing::raw_exchange;

// zerodrop run's front proxy on its own thread, in front of an app played by a MisbehavingServer.
struct Front {
  explicit Front(Behaviour behaviour)
      : app({behaviour, 200, "app"}),
        proxy(io, shutdown, {"127.0.0.1", 0}, {"127.0.0.1", app.port()}),
        thread([this] { io.run(); }) {}

  ~Front() {
    io.stop();
    thread.join();
  }

  lifecycle::Shutdown shutdown;  // outlives the io_context, whose handlers hold its connections
  boost::asio::io_context io;
  zerodrop::testing::MisbehavingServer app;
  FrontProxy proxy;
  std::thread thread;
};

TEST(FrontProxy, RelaysAHeadResponseWithContentLengthAndNoBody) {
  Front front(Behaviour::head_length);
  zerodrop::testing::expect_head_then_get(
      raw_exchange(front.proxy.port(), zerodrop::testing::kHeadThenGet));
}

TEST(FrontProxy, DropsHopByHopHeadersBothWays) {
  Front front(Behaviour::echo);
  std::string response =
      raw_exchange(front.proxy.port(),
                   "GET / HTTP/1.1\r\nHost: t\r\nConnection: close, X-Client-Hop\r\n"
                   "X-Client-Hop: 1\r\nKeep-Alive: 300\r\nProxy-Connection: x\r\n"
                   "TE: trailers\r\nUpgrade: h2c\r\nX-End-To-End: kept\r\n\r\n");
  size_t body = response.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos) << response;
  std::string headers = response.substr(0, body);
  std::string upstream = response.substr(body + 4);  // the request as the app received it
  EXPECT_NE(upstream.find("X-End-To-End: kept"), std::string::npos) << upstream;
  for (const char* hop : {"X-Client-Hop", "Keep-Alive", "Proxy-Connection", "TE:", "Upgrade"}) {
    EXPECT_EQ(upstream.find(hop), std::string::npos) << hop << " reached the app: " << upstream;
  }
  for (const char* hop : {"X-Hop", "Keep-Alive", "Proxy-Connection", "X-Zerodrop-Router-Error"}) {
    EXPECT_EQ(headers.find(hop), std::string::npos) << hop << " reached the client: " << headers;
  }
}

TEST(FrontProxy, ConsumesInterimResponses) {
  Front front(Behaviour::interim);
  std::string response =
      raw_exchange(front.proxy.port(), "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK")) << response;
  EXPECT_EQ(response.find(" 100 "), std::string::npos) << response;
  EXPECT_TRUE(response.ends_with("ok")) << response;
}

TEST(FrontProxy, AnswersAnHttp10ClientInHttp10) {
  Front front(Behaviour::chunked);  // the app's chunked body is reframed: 1.0 has no chunks
  std::string response = raw_exchange(front.proxy.port(), "GET / HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(response.starts_with("HTTP/1.0 200 OK")) << response;
  EXPECT_NE(response.find("Content-Length: 2\r\n"), std::string::npos) << response;
  EXPECT_EQ(response.find("chunked"), std::string::npos) << response;
  EXPECT_TRUE(response.ends_with("\r\n\r\nok")) << response;
}

TEST(FrontProxy, Answers502WhenTheAppSendsNoResponse) {
  Front front(Behaviour::garbage);
  std::string response = raw_exchange(front.proxy.port(), "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 502")) << response;
  EXPECT_NE(response.find("Connection: close"), std::string::npos) << response;
  EXPECT_TRUE(response.ends_with("\r\n\r\n")) << "no body after HEAD: " << response;
}

}  // namespace
}  // namespace zerodrop::shim
