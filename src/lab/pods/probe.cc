// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/pods/probe.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/subprocess.h"
#include "lab/pods/grpc_check.h"

namespace zerodrop::lab {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string why_of(const beast::error_code& ec) {
  if (ec == beast::error::timeout) {
    return "timed out";
  }
  return ec.message();
}

// A TCP connect, optionally followed by an HTTP GET.
class NetworkCheck final : public Check {
public:
  NetworkCheck(asio::io_context& io, const ProbeSpec& spec, const CheckTarget& target,
               Duration timeout, Done done)
      : stream_(io), spec_(spec), target_(target), timeout_(timeout), done_(std::move(done)) {}

  void begin() {
    beast::error_code ec;
    tcp::endpoint endpoint(asio::ip::make_address(target_.ip, ec), target_.port);
    stream_.expires_after(timeout_);
    stream_.async_connect(endpoint, [self = shared()](beast::error_code e) { self->connected(e); });
  }

  void cancel() override {
    done_ = nullptr;
    stream_.cancel();
  }

private:
  std::shared_ptr<NetworkCheck> shared() {
    return std::static_pointer_cast<NetworkCheck>(shared_from_this());
  }

  void finish(bool ok, std::string why) {
    beast::error_code ignored;
    stream_.socket().close(ignored);
    if (done_) {
      auto done = std::move(done_);
      done_ = nullptr;
      done(ok, std::move(why));
    }
  }

  void connected(beast::error_code ec) {
    if (ec || spec_.kind == ProbeSpec::Kind::tcp) {
      finish(!ec, ec ? why_of(ec) : "");
      return;
    }
    request_ = {http::verb::get, spec_.path, 11};
    request_.set(http::field::host, fmt::format("{}:{}", target_.ip, target_.port));
    request_.set(http::field::user_agent, "kube-probe/zerodrop-lab");
    request_.set(http::field::connection, "close");
    http::async_write(stream_, request_, [self = shared()](beast::error_code e, size_t) {
      if (e) {
        self->finish(false, why_of(e));
        return;
      }
      http::async_read(self->stream_, self->buffer_, self->response_,
                       [self](beast::error_code e2, size_t) { self->got_response(e2); });
    });
  }

  void got_response(beast::error_code ec) {
    if (ec) {
      finish(false, why_of(ec));
      return;
    }
    int status = static_cast<int>(response_.result_int());
    bool ok = status >= 200 && status < 400;
    finish(ok, ok ? "" : fmt::format("HTTP status {}", status));
  }

  beast::tcp_stream stream_;
  ProbeSpec spec_;
  CheckTarget target_;
  Duration timeout_;
  Done done_;
  http::request<http::empty_body> request_;
  beast::flat_buffer buffer_;
  http::response<http::string_body> response_;
};

// A command: passes when it exits 0 within the timeout; killed (whole group) otherwise.
class ExecCheck final : public Check {
public:
  ExecCheck(asio::io_context& io, Subprocess process, Duration timeout, Done done,
            std::string words_path)
      : process_(std::move(process)),
        watch_(io, ::dup(process_.status_fd())),
        timer_(io),
        timeout_(timeout),
        done_(std::move(done)),
        words_path_(std::move(words_path)) {}

  ~ExecCheck() override {
    if (!words_path_.empty()) {
      ::unlink(words_path_.c_str());
    }
  }

  void begin() {
    timer_.expires_after(timeout_);
    timer_.async_wait([self = shared()](beast::error_code ec) {
      if (!ec && self->done_) {
        self->process_.send_signal(SIGKILL);
        self->finish(false, fmt::format("timed out after {}", format_duration(self->timeout_)));
      }
    });
    wait();
  }

  void cancel() override {
    done_ = nullptr;
    timer_.cancel();
    watch_.cancel();
    process_.send_signal(SIGKILL);
  }

private:
  std::shared_ptr<ExecCheck> shared() {
    return std::static_pointer_cast<ExecCheck>(shared_from_this());
  }

  void wait() {
    watch_.async_wait(
        asio::posix::descriptor_base::wait_read, [self = shared()](beast::error_code ec) {
          if (ec) {
            return;
          }
          std::optional<ExitStatus> status = self->process_.try_wait();
          if (!status) {
            self->wait();
            return;
          }
          self->finish(status->success(), status->success() ? "" : self->failure(*status));
        });
  }

  // "exit code 127", with the runtime's last words when it ran the command in a container.
  std::string failure(const ExitStatus& status) const {
    std::string why = status.describe();
    if (words_path_.empty()) {
      return why;
    }
    std::ifstream in(words_path_);
    std::string line, last;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") != std::string::npos) {
        last = line;
      }
    }
    return last.empty() ? why : fmt::format("{}: {}", why, last);
  }

  void finish(bool ok, std::string why) {
    timer_.cancel();
    watch_.cancel();
    if (done_) {
      auto done = std::move(done_);
      done_ = nullptr;
      done(ok, std::move(why));
    }
  }

  Subprocess process_;
  asio::posix::stream_descriptor watch_;
  asio::steady_timer timer_;
  Duration timeout_;
  Done done_;
  std::string words_path_;
};

// A file for the output of one exec in a container (the runtime's and the command's): beside
// the pod's log in the run folder, so that a lab killed mid-exec leaves it there, not in /tmp.
std::string words_file(const std::string& log_path) {
  std::filesystem::path dir = log_path.empty() ? std::filesystem::temp_directory_path()
                                               : std::filesystem::path(log_path).parent_path();
  std::string path = (dir / "zerodrop-exec-XXXXXX").string();
  int fd = ::mkstemp(path.data());
  if (fd < 0) {
    return "";
  }
  ::close(fd);
  return path;
}

}  // namespace

std::shared_ptr<Check> Check::start(asio::io_context& io, const ProbeSpec& spec,
                                    const CheckTarget& target, Duration timeout, Done done) {
  if (spec.kind == ProbeSpec::Kind::exec) {
    bool inside = !target.exec_prefix.empty();
    std::string words = inside ? words_file(target.log_path) : "";
    try {
      std::vector<std::string> argv = target.exec_prefix;
      argv.insert(argv.end(), spec.command.begin(), spec.command.end());
      // In a container, all the runtime prints goes to the words: docker writes its own errors
      // ("OCI runtime exec failed: … executable file not found") to stdout, podman to stderr,
      // and the kubelet quotes a failed exec's whole output, never the container's log.
      std::string out = words.empty() ? target.log_path : words;
      Subprocess process = Subprocess::spawn(
          {argv, inside ? target.exec_env : target.env, inside ? out : target.log_path, out});
      auto check = std::make_shared<ExecCheck>(io, std::move(process), timeout, std::move(done),
                                               std::move(words));
      check->begin();
      return check;
    } catch (const Error& e) {
      if (!words.empty()) {
        ::unlink(words.c_str());
      }
      // Like kubelet: a command that cannot run is a failed check, reported asynchronously.
      auto check = std::make_shared<NetworkCheck>(io, spec, target, timeout, nullptr);
      asio::post(io, [done = std::move(done), why = std::string(e.what())] { done(false, why); });
      return check;
    }
  }
  if (spec.kind == ProbeSpec::Kind::grpc) {
    CheckTarget to = target;
    to.port = spec.port != 0 ? spec.port : target.port;
    return start_grpc_check(io, spec, to, timeout, std::move(done));
  }
  auto check = std::make_shared<NetworkCheck>(io, spec, target, timeout, std::move(done));
  check->begin();
  return check;
}

Prober::Prober(asio::io_context& io, ProbeSpec spec, CheckTarget target, bool initially_healthy,
               OnFailure on_failure, OnState on_state)
    : io_(io),
      spec_(std::move(spec)),
      target_(std::move(target)),
      healthy_(initially_healthy),
      on_failure_(std::move(on_failure)),
      on_state_(std::move(on_state)),
      timer_(io) {}

Prober::~Prober() {
  stop();
}

void Prober::start() {
  if (spec_.kind == ProbeSpec::Kind::none) {
    return;
  }
  schedule(spec_.initial_delay);
}

void Prober::stop() {
  *alive_ = false;
  alive_ = std::make_shared<bool>(true);
  timer_.cancel();
  if (check_) {
    check_->cancel();
    check_.reset();
  }
}

void Prober::schedule(Duration delay) {
  timer_.expires_after(delay);
  timer_.async_wait([this, alive = alive_](beast::error_code ec) {
    if (!ec && *alive) {
      run_once();
    }
  });
}

void Prober::run_once() {
  check_ = Check::start(io_, spec_, target_, spec_.timeout,
                        [this, alive = alive_](bool ok, std::string why) {
                          if (*alive) {
                            on_result(ok, why);
                          }
                        });
  schedule(spec_.period);  // kubelet probes on a fixed period, whatever the last check took
}

void Prober::on_result(bool ok, const std::string& why) {
  successes_ = ok ? successes_ + 1 : 0;
  failures_ = ok ? 0 : failures_ + 1;
  if (!ok) {
    on_failure_(why);
  }
  if (!healthy_ && ok && successes_ >= spec_.success_threshold) {
    healthy_ = true;
    on_state_(true);
  } else if (healthy_ && !ok && failures_ >= spec_.failure_threshold) {
    healthy_ = false;
    on_state_(false);
  }
}

}  // namespace zerodrop::lab
