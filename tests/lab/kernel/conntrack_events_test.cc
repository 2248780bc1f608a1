#include "lab/kernel/conntrack_events.h"

#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

// A netlink message built as the kernel writes one: attributes appended, nests closed by length.
class Message {
public:
  explicit Message(uint16_t type) {
    put(nlmsghdr{0, type, 0, 0, 0});
    put(nfgenmsg{AF_INET, 0, 0});
  }

  size_t open(uint16_t type) {
    size_t at = bytes_.size();
    put(nlattr{0, static_cast<uint16_t>(type | NLA_F_NESTED)});
    return at;
  }

  void close(size_t at) { length_at(at, bytes_.size() - at); }

  template <typename T>
  void attribute(uint16_t type, T value) {
    put(nlattr{static_cast<uint16_t>(NLA_HDRLEN + sizeof value), type});
    put(value);
    bytes_.resize(NLA_ALIGN(bytes_.size()));
  }

  void tuple(uint16_t which, const char* src, const char* dst, uint16_t sport, uint16_t dport,
             uint8_t proto = IPPROTO_TCP) {
    size_t t = open(which);
    size_t ip = open(CTA_TUPLE_IP);
    attribute(CTA_IP_V4_SRC, ::inet_addr(src));
    attribute(CTA_IP_V4_DST, ::inet_addr(dst));
    close(ip);
    size_t p = open(CTA_TUPLE_PROTO);
    attribute(CTA_PROTO_NUM, proto);
    attribute(CTA_PROTO_SRC_PORT, htons(sport));
    attribute(CTA_PROTO_DST_PORT, htons(dport));
    close(p);
    close(t);
  }

  std::vector<char> done() {
    length_at(0, bytes_.size());
    return bytes_;
  }

private:
  template <typename T>
  void put(const T& value) {
    const char* p = reinterpret_cast<const char*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof value);
    bytes_.resize(NLA_ALIGN(bytes_.size()));
  }

  void length_at(size_t at, size_t length) {
    if (at == 0) {
      uint32_t n = static_cast<uint32_t>(length);
      std::memcpy(bytes_.data(), &n, sizeof n);
    } else {
      uint16_t n = static_cast<uint16_t>(length);
      std::memcpy(bytes_.data() + at, &n, sizeof n);
    }
  }

  std::vector<char> bytes_;
};

constexpr uint16_t kNew = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;

std::vector<NewConnection> parse(const std::vector<char>& bytes) {
  std::vector<NewConnection> out;
  parse_conntrack_events(bytes.data(), bytes.size(),
                         [&](const NewConnection& c) { out.push_back(c); });
  return out;
}

TEST(ConntrackEvents, ReadsTheDialledServiceAndThePodThatAnswers) {
  Message m(kNew);
  m.tuple(CTA_TUPLE_ORIG, "10.200.255.1", "10.96.0.10", 40000, 80);
  m.tuple(CTA_TUPLE_REPLY, "10.200.0.3", "10.200.255.1", 8080, 40000);
  std::vector<NewConnection> got = parse(m.done());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].client_port, 40000);
  EXPECT_EQ(got[0].dialled, ::inet_addr("10.96.0.10"));
  EXPECT_EQ(got[0].dialled_port, 80);
  EXPECT_EQ(got[0].answered_by, ::inet_addr("10.200.0.3"));
  EXPECT_EQ(got[0].answered_by_port, 8080);
  EXPECT_EQ(got[0].replied_to, ::inet_addr("10.200.255.1"));
  EXPECT_EQ(got[0].replied_to_port, 40000);
}

// A source port the kernel's NAT changed: the pod's socket has the reply's destination as peer.
TEST(ConntrackEvents, ReadsTheClientAsThePodSeesIt) {
  Message m(kNew);
  m.tuple(CTA_TUPLE_ORIG, "10.200.255.1", "10.96.0.10", 40000, 80);
  m.tuple(CTA_TUPLE_REPLY, "10.200.0.3", "10.200.254.1", 8080, 1025);
  std::vector<NewConnection> got = parse(m.done());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].client_port, 40000);
  EXPECT_EQ(got[0].replied_to, ::inet_addr("10.200.254.1"));
  EXPECT_EQ(got[0].replied_to_port, 1025);
}

TEST(ConntrackEvents, ReadsEveryMessageOfADatagram) {
  std::vector<char> both;
  for (uint16_t port : {40001, 40002}) {
    Message m(kNew);
    m.tuple(CTA_TUPLE_ORIG, "10.200.255.1", "10.96.0.10", port, 80);
    m.tuple(CTA_TUPLE_REPLY, "10.200.0.2", "10.200.255.1", 8080, port);
    std::vector<char> one = m.done();
    both.insert(both.end(), one.begin(), one.end());
  }
  std::vector<NewConnection> got = parse(both);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].client_port, 40002);
}

TEST(ConntrackEvents, SkipsOtherProtocolsAndTruncatedMessages) {
  Message udp(kNew);
  udp.tuple(CTA_TUPLE_ORIG, "10.200.255.1", "10.96.0.10", 53000, 53, IPPROTO_UDP);
  udp.tuple(CTA_TUPLE_REPLY, "10.200.0.2", "10.200.255.1", 53, 53000, IPPROTO_UDP);
  EXPECT_TRUE(parse(udp.done()).empty());

  Message tcp(kNew);
  tcp.tuple(CTA_TUPLE_ORIG, "10.200.255.1", "10.96.0.10", 40000, 80);
  tcp.tuple(CTA_TUPLE_REPLY, "10.200.0.2", "10.200.255.1", 8080, 40000);
  std::vector<char> bytes = tcp.done();
  bytes.resize(bytes.size() - 12);  // the reply's ports cut off: the length no longer fits
  EXPECT_TRUE(parse(bytes).empty());
}

}  // namespace
}  // namespace zerodrop::lab
