#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "lab/pods/spec.h"

namespace zerodrop::lab {

// Internal to the lab (includes Asio): one probe or hook action and the periodic prober.

// Where checks go and what environment exec checks get (the pod's PORT, POD_IP, POD_NAME).
struct CheckTarget {
  std::string ip;
  uint16_t port = 0;
  std::vector<std::pair<std::string, std::string>> env;
  std::string log_path;  // exec output; empty = /dev/null
  // A container's pod: exec checks run as this prefix + the command ("podman exec NAME"), with
  // exec_env on top of the lab's environment, and a failure quotes the runtime's last words.
  std::vector<std::string> exec_prefix;
  std::vector<std::pair<std::string, std::string>> exec_env;
};

// One check in flight: an HTTP GET (200-399 passes), a TCP connect, or a command (exit 0
// passes), bounded by `timeout`. `done(ok, why)` runs once on the io_context's thread, unless
// cancel() came first (then never). cancel() kills an exec command.
class Check : public std::enable_shared_from_this<Check> {
public:
  using Done = std::function<void(bool ok, std::string why)>;
  static std::shared_ptr<Check> start(boost::asio::io_context& io, const ProbeSpec& spec,
                                      const CheckTarget& target, Duration timeout, Done done);
  virtual ~Check() = default;
  virtual void cancel() = 0;
};

// Runs a probe like kubelet's prober worker: first after `initial_delay`, then every `period`;
// reports each failure and each crossing of the success or failure threshold. Runs on the
// io_context's thread; stop() (or destruction) cancels everything.
class Prober {
public:
  using OnFailure = std::function<void(const std::string& why)>;
  using OnState = std::function<void(bool healthy)>;
  Prober(boost::asio::io_context& io, ProbeSpec spec, CheckTarget target, bool initially_healthy,
         OnFailure on_failure, OnState on_state);
  ~Prober();
  void start();
  void stop();

  bool healthy() const { return healthy_; }

private:
  void schedule(Duration delay);
  void run_once();
  void on_result(bool ok, const std::string& why);

  boost::asio::io_context& io_;
  ProbeSpec spec_;
  CheckTarget target_;
  bool healthy_;
  OnFailure on_failure_;
  OnState on_state_;
  boost::asio::steady_timer timer_;
  std::shared_ptr<Check> check_;
  int successes_ = 0;
  int failures_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace zerodrop::lab
