// The kernel's account of who ended a connection: a close() of the process's own, or its exit;
// with a FIN (all it received, it had read) or a reset (data sat unread). Root only.
#include "lab/routers/socket_trace.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;

// The test's own loopback address: nothing else on the host uses it.
constexpr const char* kAddress = "127.77.0.1";

uint32_t address() {
  in_addr a{};
  inet_pton(AF_INET, kAddress, &a);
  return a.s_addr;
}

SocketAddress name_of(int fd, bool peer) {
  sockaddr_in a{};
  socklen_t n = sizeof a;
  peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&a), &n)
       : getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  return {a.sin_addr.s_addr, ntohs(a.sin_port)};
}

int listener() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = address();
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(listen(fd, 16), 0);
  return fd;
}

int connect_to(int listening) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  socklen_t n = sizeof a;
  getsockname(listening, reinterpret_cast<sockaddr*>(&a), &n);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

class SocketTraceTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    trace_ = SocketTrace::start([](uint32_t ip) { return ip == address(); }, &why);
    if (!trace_) {
      GTEST_SKIP() << "the kernel's socket trace is not available here: " << why;
    }
  }

  // The close of the server end `server` (local, peer), waiting for the kernel's record.
  // Waits up to 10 s: the trace's reader thread may be starved for long on a loaded machine.
  std::optional<SocketClose> close_of(SocketAddress local, SocketAddress peer) {
    for (int i = 0; i < 2000; ++i) {
      if (auto c = trace_->close_of(local, peer)) {
        return c;
      }
      std::this_thread::sleep_for(5ms);
    }
    return std::nullopt;
  }

  std::unique_ptr<SocketTrace> trace_;
};

TEST_F(SocketTraceTest, AnIdleCloseIsTheProcesssOwnFin) {
  int l = listener();
  int client = connect_to(l);
  int server = accept(l, nullptr, nullptr);
  SocketAddress local = name_of(server, false);
  SocketAddress peer = name_of(server, true);
  close(server);
  auto c = close_of(local, peer);
  ASSERT_TRUE(c) << "records lost: " << trace_->lost();
  EXPECT_FALSE(c->by_exit);
  EXPECT_FALSE(c->reset);
  EXPECT_EQ(c->tid, gettid());
  close(client);
  close(l);
}

TEST_F(SocketTraceTest, ACloseWithARequestUnreadIsAReset) {
  int l = listener();
  int client = connect_to(l);
  int server = accept(l, nullptr, nullptr);
  ASSERT_EQ(write(client, "GET / HTTP/1.1\r\n\r\n", 18), 18);
  std::this_thread::sleep_for(20ms);  // in the server's socket, unread
  SocketAddress local = name_of(server, false);
  SocketAddress peer = name_of(server, true);
  close(server);
  auto c = close_of(local, peer);
  ASSERT_TRUE(c) << "records lost: " << trace_->lost();
  EXPECT_FALSE(c->by_exit);
  EXPECT_TRUE(c->reset);
  close(client);
  close(l);
}

// A process that exits holding connections: its exit closed them, whether a request sat unread
// in one (a reset) or not (a FIN).
TEST_F(SocketTraceTest, AnExitClosesWhatTheProcessHeld) {
  int l = listener();
  int idle_client = connect_to(l);
  int busy_client = connect_to(l);
  int idle = accept(l, nullptr, nullptr);
  int busy = accept(l, nullptr, nullptr);
  SocketAddress idle_local = name_of(idle, false);
  SocketAddress idle_peer = name_of(idle, true);
  SocketAddress busy_local = name_of(busy, false);
  SocketAddress busy_peer = name_of(busy, true);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  if (child == 0) {
    char c;
    close(go[1]);
    (void)!read(go[0], &c, 1);  // exits once the request sits unread, however slow the host
    _exit(0);
  }
  close(go[0]);
  close(idle);  // the child holds the only descriptors now
  close(busy);
  ASSERT_EQ(write(busy_client, "GET / HTTP/1.1\r\n\r\n", 18), 18);
  std::this_thread::sleep_for(20ms);  // in the child's socket, unread
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
  auto i = close_of(idle_local, idle_peer);
  auto b = close_of(busy_local, busy_peer);
  ASSERT_TRUE(i) << "records lost: " << trace_->lost();
  ASSERT_TRUE(b) << "records lost: " << trace_->lost();
  EXPECT_TRUE(i->by_exit);
  EXPECT_FALSE(i->reset);
  EXPECT_TRUE(b->by_exit);
  EXPECT_TRUE(b->reset);
  EXPECT_EQ(b->tid, child);
  close(idle_client);
  close(busy_client);
  close(l);
}

// A connection the kernel accepted into the backlog, reset when the process closed its listener.
TEST_F(SocketTraceTest, ABacklogConnectionIsResetByTheListenersClose) {
  int l = listener();
  int client = connect_to(l);
  ASSERT_EQ(write(client, "GET / HTTP/1.1\r\n\r\n", 18), 18);
  SocketAddress peer = name_of(client, false);
  SocketAddress local = name_of(client, true);
  std::this_thread::sleep_for(10ms);
  close(l);
  auto c = close_of(local, peer);
  ASSERT_TRUE(c) << "records lost: " << trace_->lost();
  EXPECT_FALSE(c->by_exit);
  EXPECT_TRUE(c->reset);
  close(client);
}

}  // namespace
}  // namespace zerodrop::lab
