#include "lab/kernel/node_network.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/netns.h"
#include "base/subprocess.h"

namespace zerodrop::lab {
namespace {

// iproute2's `ip ARGS`; "" or its error.
std::string ip(Dataplane dataplane, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_tool(dataplane, argv, "", "iproute2");
}

void ip_or_throw(Dataplane dataplane, const std::vector<std::string>& args) {
  if (std::string error = ip(dataplane, args); !error.empty()) {
    throw Error(
        fmt::format("{}: ip {}: {}", dataplane_flag(dataplane), fmt::join(args, " "), error));
  }
}

// Runs `work` on a thread in the namespace `netns` (-1: a new one), so that the `ip` it runs
// works there; rethrows its Error.
void in_namespace(Dataplane dataplane, int netns, const std::function<void()>& work) {
  std::exception_ptr error;
  std::thread([&] {
    try {
      if (netns < 0 ? ::unshare(CLONE_NEWNET) != 0 : !enter_namespace(netns)) {
        throw Error(fmt::format("{}: cannot enter a network namespace: {}",
                                dataplane_flag(dataplane), std::strerror(errno)));
      }
      work();
    } catch (...) {
      error = std::current_exception();
    }
  }).join();
  if (error) {
    std::rethrow_exception(error);
  }
}

}  // namespace

std::string run_tool(Dataplane dataplane, const std::vector<std::string>& args,
                     const std::string& input, const std::string& package) {
  Captured run;
  try {
    run = run_captured({.argv = args}, input);
  } catch (const Error& e) {
    throw Error(fmt::format("{} needs {} ({}); apt install {}", dataplane_flag(dataplane), args[0],
                            e.what(), package));
  }
  if (run.status.success()) {
    return {};
  }
  while (!run.err.empty() && run.err.back() == '\n') {
    run.err.pop_back();
  }
  return run.err.empty() ? "failed" : run.err;
}

std::unique_ptr<NodeNetwork> NodeNetwork::create(int nodes, Dataplane dataplane) {
  if (::geteuid() != 0) {
    throw Error(dataplane_flag(dataplane)
                + " needs root: each node is a network namespace with kube-proxy's rules and "
                  "conntrack");
  }
  std::unique_ptr<NodeNetwork> network(new NodeNetwork());
  network->dataplane_ = dataplane;
  network->host_ = own_namespace();
  for (int i = 1; i <= nodes; ++i) {
    network->add_node(i);
  }
  network->claim_prefix();
  for (int i = 1; i <= nodes; ++i) {
    network->address_node(i);
  }
  return network;
}

NodeNetwork::~NodeNetwork() {
  for (Node& n : nodes_) {
    ::close(n.fd);
  }
  ::close(host_);
}

LoopbackClaim claim_loopback_prefix(int first) {
  constexpr int kCount = 200;
  for (int k = 0; k < kCount; ++k) {
    int b = 20 + (first + k) % kCount;
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      throw Error(fmt::format("cannot claim pod addresses 127.{}.0.0/16: socket: {}", b,
                              std::strerror(errno)));
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::string name = fmt::format("zerodrop-lab-127.{}", b);
    std::memcpy(address.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract
    auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0) {
      return {b, fd};
    }
    int error = errno;
    ::close(fd);
    if (error != EADDRINUSE) {
      throw Error(fmt::format("cannot claim pod addresses 127.{}.0.0/16: bind @{}: {}", b, name,
                              std::strerror(error)));
    }
  }
  throw Error("every pod address range 127.B.0.0/16 (B 20..219) is held by other labs");
}

// A new namespace with lo up and a veth pair whose other end is in the host's namespace.
void NodeNetwork::add_node(int index) {
  Node node;
  // Runs of one process (--runs) number their veths apart: the kernel removes an ended run's
  // namespaces, and their veths, a moment after the run has closed them.
  static std::atomic<int> generation{0};
  if (index == 1) {
    generation_ = generation++ % 100;
  }
  node.host_veth = fmt::format("zd{}.{}.{}", ::getpid(), generation_, index);
  std::string host = fmt::format("/proc/{}/fd/{}", ::getpid(), host_);
  in_namespace(dataplane_, -1, [&] {
    node.fd = own_namespace();
    ip_or_throw(dataplane_, {"link", "set", "lo", "up"});
    ip_or_throw(dataplane_, {"link", "add", "eth0", "type", "veth", "peer", "name", node.host_veth,
                             "netns", host});
  });
  nodes_.push_back(node);
}

// The first 10.B.0.0/17 no other lab holds: adding the same local route twice fails.
void NodeNetwork::claim_prefix() {
  for (int k = 0; k < 50; ++k) {
    int b = 200 + (::getpid() + k) % 50;
    std::string error = ip(dataplane_, {"route", "add", "local", fmt::format("10.{}.0.0/17", b),
                                        "dev", nodes_.front().host_veth});
    if (error.empty()) {
      b_ = b;
      pod_prefix_ = fmt::format("10.{}.", b);
      return;
    }
    if (error.find("File exists") == std::string::npos) {
      throw Error(fmt::format("{}: ip route add local 10.{}.0.0/17: {}", dataplane_flag(dataplane_),
                              b, error));
    }
  }
  throw Error(dataplane_flag(dataplane_)
              + ": every 10.B.0.0/17 (B 200..249) is taken by other labs");
}

void NodeNetwork::address_node(int index) {
  Node& node = nodes_.at(static_cast<size_t>(index - 1));
  std::string gateway = fmt::format("10.{}.254.{}", b_, index);
  node.address = fmt::format("10.{}.255.{}", b_, index);
  ip_or_throw(dataplane_, {"addr", "add", gateway + "/32", "dev", node.host_veth});
  ip_or_throw(dataplane_, {"link", "set", node.host_veth, "up"});
  ip_or_throw(dataplane_, {"route", "add", node.address + "/32", "dev", node.host_veth});
  in_namespace(dataplane_, node.fd, [&] {
    ip_or_throw(dataplane_, {"addr", "add", node.address + "/32", "dev", "eth0"});
    ip_or_throw(dataplane_, {"link", "set", "eth0", "up"});
    ip_or_throw(dataplane_, {"route", "add", gateway + "/32", "dev", "eth0"});
    ip_or_throw(dataplane_, {"route", "add", "default", "via", gateway, "dev", "eth0"});
  });
}

}  // namespace zerodrop::lab
