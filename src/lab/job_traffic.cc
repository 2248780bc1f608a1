#include "lab/job_traffic.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "lab/recording/recorder.h"
#include "lab/traffic.h"

namespace zerodrop::lab {
namespace {

using record::Micros;
using Json = nlohmann::json;

const Router* router_named(const std::vector<std::unique_ptr<Router>>& routers,
                           const std::string& name) {
  for (const auto& r : routers) {
    if (r->name() == name) {
      return r.get();
    }
  }
  return nullptr;
}

void shift(record::RequestRecord& r, Micros offset) {
  r.intended += offset;
  r.done += offset;
  for (auto* t : {&r.sent, &r.first_byte, &r.backend_fate_at}) {
    if (*t) {
      **t += offset;
    }
  }
}

// Gives `r` the backend its router chose and that connection's fate, as the lab's own load is
// joined: the router's latest connection from r's source port accepted before r ended (a later
// one may have reused the port). False when the router knows none.
bool join(const Router& router, const Recorder& recorder, record::RequestRecord& r) {
  std::optional<ClientConnection> c =
      r.local_port == 0 ? std::nullopt
                        : router.connection_by(r.local_port, recorder.start() + r.done);
  if (!c) {
    return false;
  }
  join_report(router, c, recorder, r);
  return true;
}

// One agent's log: its requests on the recorder's timeline. False when it is no agent's.
bool read_agent_log(const std::string& path, int64_t wall_start_us,
                    const std::vector<std::unique_ptr<Router>>& routers, const Recorder& recorder,
                    JobTraffic& out) {
  std::ifstream in(path);
  std::string line;
  const Router* router = nullptr;
  Micros offset{0};
  for (size_t number = 1; std::getline(in, line); ++number) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("k")) {
      continue;  // the runtime's own words
    }
    if (j["k"] == "hello" && j.contains("node") && j.contains("wall_us")) {
      router = router_named(routers, j["node"].get<std::string>());
      offset = Micros(j["wall_us"].get<int64_t>() - wall_start_us);
    } else if (j["k"] == "req" && router != nullptr && j.contains("r")) {
      record::RequestRecord r;
      try {
        r = record::read_request(j["r"]);
      } catch (const Error& e) {
        throw Error(fmt::format("{}:{}: {}", path, number, e.what()));
      }
      shift(r, offset);
      r.router = router->name();
      out.unjoined += join(*router, recorder, r) ? 0 : 1;
      out.requests.push_back(std::move(r));
    }
  }
  return router != nullptr;
}

}  // namespace

JobTraffic read_job_traffic(const std::string& pods_dir, int64_t wall_start_us,
                            const std::vector<std::unique_ptr<Router>>& routers,
                            const Recorder& recorder) {
  JobTraffic traffic;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(pods_dir, ec)) {
    if (entry.path().extension() == ".log"
        && read_agent_log(entry.path().string(), wall_start_us, routers, recorder, traffic)) {
      ++traffic.agents;
    }
  }
  std::stable_sort(traffic.requests.begin(), traffic.requests.end(),
                   [](const auto& a, const auto& b) {
                     return std::tie(a.intended, a.router) < std::tie(b.intended, b.router);
                   });
  for (size_t i = 0; i < traffic.requests.size(); ++i) {
    traffic.requests[i].seq = i;
  }
  return traffic;
}

std::optional<record::RunRecord> agents_run(const record::RunRecord& run, JobTraffic traffic) {
  if (traffic.agents == 0) {
    return std::nullopt;
  }
  record::RunRecord agents = run;
  record::Event note;
  note.t = run.end;
  note.kind = record::EventKind::note;
  note.detail = fmt::format(
      "the requests of {} verify agents ({}), each joined to the backend its node's router chose{}",
      traffic.agents, traffic.requests.size(),
      traffic.unjoined == 0
          ? ""
          : fmt::format("; {} not joined: the router knew no such connection", traffic.unjoined));
  agents.events.push_back(std::move(note));
  agents.requests = std::move(traffic.requests);
  return agents;
}

}  // namespace zerodrop::lab
