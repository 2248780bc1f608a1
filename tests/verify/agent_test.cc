#include "verify/agent.h"

#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "verify/agents.h"
#include "verify/propagation.h"

namespace zerodrop::verify {
namespace {

using nlohmann::json;
using record::Micros;
using std::chrono::milliseconds;

TEST(AgentTarget, ServiceLinkVariablesNameTheTarget) {
  std::map<std::string, std::string> env = {{"MY_WEB_SERVICE_HOST", "10.0.0.7"},
                                            {"MY_WEB_SERVICE_PORT", "80"},
                                            {"MY_WEB_SERVICE_PORT_GRPC", "9090"}};
  auto lookup = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  AgentOptions o;
  o.service = "my-web";
  o.path = "/healthz";
  EXPECT_EQ(agent_target(o, lookup), "http://10.0.0.7:80/healthz");
  o.service = "my-web:grpc";
  EXPECT_EQ(agent_target(o, lookup), "http://10.0.0.7:9090/healthz");
  o.service = "other";
  EXPECT_THROW(agent_target(o, lookup), std::exception);
  o.url = "http://x/";
  EXPECT_EQ(agent_target(o, lookup), "http://x/");
}

TEST(AgentLine, RequestLinesRoundTripAndOtherTextIsSkipped) {
  record::RequestRecord r;
  r.seq = 7;
  r.intended = Micros(1500);
  r.sent = Micros(1600);
  r.done = Micros(2500);
  r.status = 200;
  r.backend = "web-1";
  std::ostringstream text;
  record::write_ndjson(text, r);
  std::string body = text.str();
  body.pop_back();
  auto line = parse_agent_line(R"({"k":"req","n":3,"r":)" + body + "}");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->n, 3u);
  ASSERT_TRUE(line->request);
  EXPECT_EQ(line->request->backend, "web-1");
  EXPECT_EQ(line->request->sent, Micros(1600));
  EXPECT_FALSE(parse_agent_line("runtime: starting container"));
  EXPECT_FALSE(parse_agent_line(R"({"k":"hello"})"));  // no line number
  EXPECT_THROW(parse_agent_line(R"({"k":"req","n":4})"), std::exception);
}

TEST(AgentJob, OnePodPerNodeThatPassesRestricted) {
  AgentJob j;
  j.namespace_name = "shop";
  j.run_id = "abc123";
  j.image = "zerodrop:0.1.0";
  j.count = 3;
  j.service = "web";
  j.rate = 50;
  json m = agent_job_manifest(j);
  EXPECT_EQ(m["metadata"]["name"], "zerodrop-verify-abc123");
  EXPECT_EQ(m["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(m["spec"]["completions"], 3);
  EXPECT_EQ(m["spec"]["parallelism"], 3);
  EXPECT_EQ(m["spec"]["backoffLimit"], 0);
  const json& pod = m["spec"]["template"]["spec"];
  const json& term =
      pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(term["topologyKey"], "kubernetes.io/hostname");
  EXPECT_EQ(term["labelSelector"]["matchLabels"]["zerodrop.dev/run"], "abc123");
  EXPECT_EQ(m["spec"]["template"]["metadata"]["labels"]["zerodrop.dev/run"], "abc123");
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_EQ(pod["securityContext"]["runAsNonRoot"], true);
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["command"][0], "/zerodrop");
  EXPECT_EQ(c["args"][0], "verify-agent");
  EXPECT_EQ(c["securityContext"]["capabilities"]["drop"][0], "ALL");
  EXPECT_EQ(c["securityContext"]["readOnlyRootFilesystem"], true);
  std::string args = c["args"].dump();
  EXPECT_NE(args.find(R"("--service","web")"), std::string::npos) << args;
  EXPECT_NE(args.find(R"("--rate","50")"), std::string::npos) << args;
  j.per_node = false;
  EXPECT_FALSE(agent_job_manifest(j)["spec"]["template"]["spec"].contains("affinity"));
}

// A node's agent sends a fresh connection every 10 ms; the router picks among `backends` in
// turn until `applied`, then never `gone` again.
std::vector<record::RequestRecord> node_traffic(Micros applied, const std::string& gone,
                                                std::vector<std::string> backends) {
  std::vector<record::RequestRecord> out;
  size_t turn = 0;
  for (int i = 0; i < 300; ++i) {
    record::RequestRecord r;
    r.seq = static_cast<uint64_t>(i);
    r.intended = milliseconds(10 * i);
    r.sent = r.intended + Micros(300);
    r.done = r.intended + milliseconds(2);
    r.router = "node/n1";
    std::vector<std::string> in = backends;
    if (r.intended >= applied) {
      in.erase(std::find(in.begin(), in.end(), gone));
    }
    r.backend = in.empty() ? "" : in[turn++ % in.size()];  // none left: refused, unnamed
    out.push_back(r);
  }
  return out;
}

TEST(Propagation, TheIntervalContainsTheUpdate) {
  record::Event deleted;
  deleted.kind = record::EventKind::deletion_started;
  deleted.pod = "old";
  deleted.t = milliseconds(1000);
  Micros applied = milliseconds(1512);
  auto requests = node_traffic(applied, "old", {"old", "a", "b"});
  std::vector<NodeUpdate> u = estimate_updates({deleted}, requests);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].node, "node/n1");
  EXPECT_LT(u[0].lo, applied);
  ASSERT_TRUE(u[0].hi);
  EXPECT_GE(*u[0].hi, applied);
  EXPECT_LT(*u[0].hi, applied + milliseconds(300));  // a handful of misses, not the whole tail
  EXPECT_EQ(u[0].backends, 4);                       // three seen, one more assumed
  // The pod alone in the rotation: no miss can show its removal, so no upper bound.
  auto alone = node_traffic(applied, "old", {"old"});
  std::vector<NodeUpdate> single = estimate_updates({deleted}, alone);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_FALSE(single[0].hi);
  // Reused connections say nothing about new connections' routing.
  for (auto& r : requests) {
    r.connection = record::Connection::reused;
  }
  EXPECT_TRUE(estimate_updates({deleted}, requests).empty());
}

}  // namespace
}  // namespace zerodrop::verify
