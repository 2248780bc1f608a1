#include "verify/agent.h"

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "base/error.h"
#include "base/exit_code.h"
#include "base/version.h"

namespace zerodrop::verify {
namespace {

using Json = nlohmann::json;  // not `json`: other files of the unity build name variables so

// "my-svc" -> "MY_SVC", as kubelet names a Service's link variables.
std::string link_name(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

int64_t wall_us(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// The stream on stdout: numbered lines, whole lines only, flushed as they are written (verify
// reads them live through the log follow).
class Stream {
public:
  explicit Stream(std::ostream& out) : out_(out) {}

  void line(Json j) {
    std::lock_guard lock(mutex_);
    j["n"] = n_++;
    out_ << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n' << std::flush;
  }

  // A req line: the request in requests.ndjson's form under "r".
  void request(const record::RequestRecord& r) {
    std::ostringstream text;
    record::write_ndjson(text, r);
    std::string body = text.str();
    body.pop_back();  // its '\n'
    std::lock_guard lock(mutex_);
    out_ << R"({"k":"req","n":)" << n_++ << R"(,"r":)" << body << "}\n" << std::flush;
  }

  uint64_t lines() const {
    std::lock_guard lock(mutex_);
    return n_;
  }

private:
  std::ostream& out_;
  mutable std::mutex mutex_;
  uint64_t n_ = 0;
};

}  // namespace

std::string agent_target(const AgentOptions& o,
                         const std::function<const char*(const char*)>& env) {
  if (!o.url.empty()) {
    return o.url;
  }
  if (o.service.empty()) {
    throw Error("verify-agent needs --url or --service");
  }
  std::string_view text = o.service;
  std::string name = link_name(text.substr(0, text.find(':')));
  std::string port_name =
      text.find(':') == std::string_view::npos ? "" : link_name(text.substr(text.find(':') + 1));
  std::string host_var = name + "_SERVICE_HOST";
  std::string port_var = name + "_SERVICE_PORT" + (port_name.empty() ? "" : "_" + port_name);
  const char* host = env(host_var.c_str());
  const char* port = env(port_var.c_str());
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    throw Error(
        fmt::format("verify-agent: ${} and ${} are not set: the pod was started before "
                    "Service {} existed, or enableServiceLinks is false; give --url",
                    host_var, port_var, o.service));
  }
  bool v6 = std::string_view(host).find(':') != std::string_view::npos;
  return fmt::format("http://{}{}{}:{}{}", v6 ? "[" : "", host, v6 ? "]" : "", port, o.path);
}

int run_agent(const AgentOptions& o, std::ostream& out) {
  std::string target = agent_target(o, [](const char* name) { return std::getenv(name); });
  load::Options options = o.load;
  options.targets = {{"GET", target}};
  options.duration = o.duration;
  Stream stream(out);
  load::Hooks hooks;
  hooks.stop = o.stop;
  hooks.on_start = [&](std::chrono::steady_clock::time_point start) {
    auto wall = std::chrono::system_clock::now()
                - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                    std::chrono::steady_clock::now() - start);
    stream.line({{"k", "hello"},
                 {"pod", o.pod},
                 {"node", o.node},
                 {"index", o.index},
                 {"count", o.count},
                 {"target", target},
                 {"rate", options.rate},
                 {"wall_us", wall_us(wall)},
                 {"version", std::string(base::version())}});
  };
  hooks.on_record = [&](const record::RequestRecord& r) {
    stream.request(r);
  };
  load::Summary s = load::run(options, hooks);
  stream.line({{"k", "summary"},
               {"requests", s.requests},
               {"ok", s.ok},
               {"failed", s.failed},
               {"late", s.late},
               {"unsent", s.unsent},
               {"interrupted", s.interrupted}});
  stream.line({{"k", "bye"}, {"lines", stream.lines() + 1}});
  return to_int(ExitCode::ok);
}

std::optional<AgentLine> parse_agent_line(std::string_view text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("k") || !j["k"].is_string()
      || !j.contains("n") || !j["n"].is_number_unsigned()) {
    return std::nullopt;
  }
  AgentLine line;
  line.kind = j["k"].get<std::string>();
  line.n = j["n"].get<uint64_t>();
  if (line.kind == "req") {
    if (!j.contains("r") || !j["r"].is_object()) {
      throw Error(fmt::format("agent line {}: a req line without its request", line.n));
    }
    line.request = record::read_request(j["r"]);
  }
  line.body = std::move(j);
  return line;
}

}  // namespace zerodrop::verify
