#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace zerodrop::kubeapi {

class Api;

// Where the API listens: a loopback address only.
struct Listen {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: a free port
};

// Reads `--kube-api`'s ADDR: "", "HOST", "HOST:PORT", "PORT" or "[::1]:PORT". Throws Error
// naming the flag when the address is malformed or not a loopback address: the lab's API must
// not be reachable from other machines.
Listen parse_listen(const std::string& text);

// The HTTPS (HTTP/1.1) server of the lab's Kubernetes API, with a certificate made for this run
// (kubectl sends a bearer token only over https): one thread accepts, one thread per
// connection runs blocking Beast I/O (a handful of kubectl and verify connections; watches
// stream for minutes). Stops and joins every thread when destroyed.
class Server {
public:
  // Listens and starts accepting. Throws Error when it cannot listen.
  static std::unique_ptr<Server> start(const Listen& listen, Api& api);
  virtual ~Server() = default;

  virtual uint16_t port() const = 0;
  // "https://127.0.0.1:PORT"
  virtual std::string url() const = 0;
  // The run's self-signed certificate, PEM: the only CA a client needs to trust.
  virtual const std::string& ca_pem() const = 0;
};

// A kubeconfig for `url` trusting `ca_pem`, with the bearer token, namespace "default" and the
// context "zerodrop-lab", written to `path` with mode 0600. Throws Error naming the file.
void write_kubeconfig(const std::string& path, const std::string& url, const std::string& ca_pem,
                      const std::string& token);

// A random token (32 hex digits) from the system's random source.
std::string make_token();

}  // namespace zerodrop::kubeapi
