#include "lab/kernel/conntrack_events.h"

#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::lab {
namespace {

// The attributes of one nesting level, by type (the last of each type wins).
struct Attributes {
  static constexpr size_t kMax = 32;
  std::array<const nlattr*, kMax> by_type{};

  Attributes(const char* data, size_t size) {
    while (size >= sizeof(nlattr)) {
      const auto* a = reinterpret_cast<const nlattr*>(data);
      if (a->nla_len < sizeof(nlattr) || a->nla_len > size) {
        return;
      }
      size_t type = a->nla_type & NLA_TYPE_MASK;
      if (type < kMax) {
        by_type[type] = a;
      }
      size_t step = NLA_ALIGN(a->nla_len);
      if (step >= size) {
        return;
      }
      data += step;
      size -= step;
    }
  }

  std::optional<Attributes> nested(int type) const {
    const nlattr* a = by_type[static_cast<size_t>(type)];
    if (a == nullptr) {
      return std::nullopt;
    }
    return Attributes(reinterpret_cast<const char*>(a) + NLA_HDRLEN, a->nla_len - NLA_HDRLEN);
  }

  template <typename T>
  std::optional<T> value(int type) const {
    const nlattr* a = by_type[static_cast<size_t>(type)];
    if (a == nullptr || a->nla_len < NLA_HDRLEN + sizeof(T)) {
      return std::nullopt;
    }
    T v;
    std::memcpy(&v, reinterpret_cast<const char*>(a) + NLA_HDRLEN, sizeof v);
    return v;
  }
};

struct Tuple {
  uint32_t src = 0, dst = 0;
  uint16_t src_port = 0, dst_port = 0;  // host order
};

// A TCP/IPv4 tuple (CTA_TUPLE_ORIG or CTA_TUPLE_REPLY), or nothing.
std::optional<Tuple> tuple_of(const Attributes& message, int which) {
  auto tuple = message.nested(which);
  auto ip = tuple ? tuple->nested(CTA_TUPLE_IP) : std::nullopt;
  auto proto = tuple ? tuple->nested(CTA_TUPLE_PROTO) : std::nullopt;
  if (!ip || !proto || proto->value<uint8_t>(CTA_PROTO_NUM) != IPPROTO_TCP) {
    return std::nullopt;
  }
  auto src = ip->value<uint32_t>(CTA_IP_V4_SRC);
  auto dst = ip->value<uint32_t>(CTA_IP_V4_DST);
  auto sport = proto->value<uint16_t>(CTA_PROTO_SRC_PORT);
  auto dport = proto->value<uint16_t>(CTA_PROTO_DST_PORT);
  if (!src || !dst || !sport || !dport) {
    return std::nullopt;
  }
  return Tuple{*src, *dst, ntohs(*sport), ntohs(*dport)};
}

}  // namespace

void parse_conntrack_events(const char* data, size_t size,
                            const std::function<void(const NewConnection&)>& on) {
  constexpr size_t kHead = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  while (size >= sizeof(nlmsghdr)) {
    const auto* h = reinterpret_cast<const nlmsghdr*>(data);
    if (h->nlmsg_len < sizeof(nlmsghdr) || h->nlmsg_len > size) {
      return;
    }
    bool ct = (h->nlmsg_type >> 8) == NFNL_SUBSYS_CTNETLINK
              && (h->nlmsg_type & 0xff) == IPCTNL_MSG_CT_NEW;
    if (ct && h->nlmsg_len >= kHead) {
      Attributes message(data + kHead, h->nlmsg_len - kHead);
      auto orig = tuple_of(message, CTA_TUPLE_ORIG);
      auto reply = tuple_of(message, CTA_TUPLE_REPLY);
      if (orig && reply) {
        on({orig->src_port, orig->dst, orig->dst_port, reply->src, reply->src_port, reply->dst,
            reply->dst_port});
      }
    }
    size_t step = NLMSG_ALIGN(h->nlmsg_len);
    if (step >= size) {
      return;
    }
    data += step;
    size -= step;
  }
}

ConntrackEvents::ConntrackEvents(Dataplane dataplane) {
  fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_NETFILTER);
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = NF_NETLINK_CONNTRACK_NEW;
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    std::string why = std::strerror(errno);
    if (fd_ >= 0) {
      ::close(fd_);
    }
    throw Error(
        fmt::format("{}: cannot listen to the kernel's conntrack events "
                    "(nf_conntrack_netlink): {}",
                    dataplane_flag(dataplane), why));
  }
  // Events are small, but a burst of new connections must not overflow the socket: ENOBUFS
  // loses them, and with them the pods of those connections.
  int size = 16 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
}

ConntrackEvents::~ConntrackEvents() {
  ::close(fd_);
}

bool ConntrackEvents::drain(const std::function<void(const NewConnection&)>& on) {
  static thread_local std::array<char, 1 << 16> buffer;
  bool complete = true;
  for (;;) {
    ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n > 0) {
      parse_conntrack_events(buffer.data(), static_cast<size_t>(n), on);
    } else if (n < 0 && errno == ENOBUFS) {
      complete = false;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return complete;  // EAGAIN: nothing more queued
    }
  }
}

}  // namespace zerodrop::lab
