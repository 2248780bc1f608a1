// Services as watch probes them: port and path from annotations, problems said, the budget.
#include "watch/targets.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "load/load.h"
#include "verify/agent_watch.h"

namespace zerodrop::watch {
namespace {

using Json = nlohmann::json;

Json service(Json annotations, Json ports = Json::array({{{"name", "http"}, {"port", 80}},
                                                         {{"name", "admin"}, {"port", 9000}}})) {
  return {{"metadata", {{"name", "web"}, {"namespace", "shop"}, {"annotations", annotations}}},
          {"spec", {{"selector", {{"app", "web"}}}, {"clusterIP", "10.96.0.7"}, {"ports", ports}}}};
}

TEST(ReadService, TheFirstPortAndRootPathByDefault) {
  ServiceInfo s = read_service(service(Json::object()));
  EXPECT_EQ(s.problem, "");
  EXPECT_EQ(s.target.svc, "shop/web");
  EXPECT_EQ(s.target.service, "web:http");
  EXPECT_EQ(s.target.url, "http://10.96.0.7:80/");
  EXPECT_TRUE(selects(s, {{"app", "web"}, {"pod-template-hash", "x"}}));
  EXPECT_FALSE(selects(s, {{"app", "api"}}));
}

TEST(ReadService, AnnotationsChooseThePortAndPath) {
  ServiceInfo s = read_service(
      service({{"zerodrop.dev/probe-port", "admin"}, {"zerodrop.dev/probe", "http:/healthz"}}));
  EXPECT_EQ(s.problem, "");
  EXPECT_EQ(s.target.service, "web:admin");
  EXPECT_EQ(s.target.url, "http://10.96.0.7:9000/healthz");
  EXPECT_EQ(s.target.path, "/healthz");
  ServiceInfo by_number = read_service(service({{"zerodrop.dev/probe-port", "9000"}}));
  EXPECT_EQ(by_number.target.service, "web:admin");
}

TEST(ReadService, AnAnnotationNamingNoPortIsAProblemNotAProbe) {
  ServiceInfo s = read_service(service({{"zerodrop.dev/probe-port", "grpc"}}));
  EXPECT_EQ(s.problem, "annotation zerodrop.dev/probe-port 'grpc' names no port of Service web");
  EXPECT_TRUE(agent_targets({s}, 5, 0, 3).empty());
  ServiceInfo odd = read_service(service({{"zerodrop.dev/probe", "ftp:/x"}}));
  EXPECT_NE(odd.problem, "");
  Json headless = service(Json::object());
  headless["spec"]["clusterIP"] = "None";
  EXPECT_EQ(read_service(headless).problem, "");  // headless: nothing to probe, no mistake
  EXPECT_EQ(read_service(headless).target.url, "");
}

TEST(ReadService, ThePortsAppProtocolChoosesHttp2OrGrpc) {
  ServiceInfo http1 = read_service(service(Json::object()));
  EXPECT_EQ(http1.target.protocol, load::Protocol::http1);
  for (const char* h2c : {"kubernetes.io/h2c", "h2c"}) {
    ServiceInfo s =
        read_service(service({{"zerodrop.dev/probe", "/ping"}},
                             Json::array({{{"name", "web"}, {"port", 80}, {"appProtocol", h2c}}})));
    EXPECT_EQ(s.problem, "");
    EXPECT_EQ(s.target.protocol, load::Protocol::http2) << h2c;
    EXPECT_EQ(s.target.url, "http://10.96.0.7:80/ping");
  }
  // A grpc port without the annotation: the standard health check, an empty request.
  ServiceInfo grpc = read_service(service(
      Json::object(), Json::array({{{"name", "rpc"}, {"port", 50051}, {"appProtocol", "grpc"}}})));
  EXPECT_EQ(grpc.problem, "");
  EXPECT_EQ(grpc.target.protocol, load::Protocol::grpc);
  EXPECT_EQ(grpc.target.grpc_method, "/grpc.health.v1.Health/Check");
  EXPECT_EQ(agent_targets({grpc}, 5, 0, 1).size(), 1u);
  // The probe-port chooses the port whose appProtocol counts.
  ServiceInfo admin = read_service(service(
      {{"zerodrop.dev/probe-port", "admin"}},
      Json::array({{{"name", "http"}, {"port", 80}, {"appProtocol", "grpc"}},
                   {{"name", "admin"}, {"port", 9000}, {"appProtocol", "kubernetes.io/h2c"}}})));
  EXPECT_EQ(admin.target.protocol, load::Protocol::http2);
}

TEST(ReadService, TheAnnotationNamesTheGrpcMethod) {
  ServiceInfo s = read_service(service({{"zerodrop.dev/probe", "grpc:/zd.Echo/Call"}}));
  EXPECT_EQ(s.problem, "");
  EXPECT_EQ(s.target.protocol, load::Protocol::grpc);
  EXPECT_EQ(s.target.grpc_method, "/zd.Echo/Call");
  EXPECT_EQ(read_service(service({{"zerodrop.dev/probe", "grpc:/Echo/Call"}})).problem, "");
  ServiceInfo h2c = read_service(service({{"zerodrop.dev/probe", "h2c:/healthz"}}));
  EXPECT_EQ(h2c.target.protocol, load::Protocol::http2);
  EXPECT_EQ(h2c.target.path, "/healthz");
}

TEST(ReadService, AMethodThatIsNotPkgServiceMethodIsAProblem) {
  for (const char* bad : {"grpc:", "grpc:zd.Echo/Call", "grpc:/zd.Echo", "grpc:/zd.Echo/",
                          "grpc://Call", "grpc:/zd..Echo/Call", "grpc:/zd.Echo/Ca.ll",
                          "grpc:/zd.Echo/Call/x", "grpc:/zd Echo/Call", "h2c:healthz"}) {
    ServiceInfo s = read_service(service({{"zerodrop.dev/probe", bad}}));
    EXPECT_NE(s.problem, "") << bad;
    EXPECT_TRUE(agent_targets({s}, 5, 0, 1).empty()) << bad;
  }
  EXPECT_EQ(read_service(service({{"zerodrop.dev/probe", "grpc:/zd.Echo"}})).problem,
            "annotation zerodrop.dev/probe 'grpc:/zd.Echo' on Service web: expected "
            "grpc:/pkg.Service/Method");
  // A grpc port probed over a plain path is a contradiction, said.
  ServiceInfo mixed = read_service(
      service({{"zerodrop.dev/probe", "/healthz"}},
              Json::array({{{"name", "rpc"}, {"port", 50051}, {"appProtocol", "grpc"}}})));
  EXPECT_NE(mixed.problem, "");
}

TEST(AgentTargets, TheAnswerCarriesTheProtocolAndMethod) {
  ServiceInfo grpc = read_service(service({{"zerodrop.dev/probe", "grpc:/zd.Echo/Call"}}));
  ServiceInfo h2c = read_service(service({{"zerodrop.dev/probe", "h2c:/"}}));
  h2c.target.svc = "shop/h2";
  ServiceInfo http1 = read_service(service(Json::object()));
  http1.target.svc = "shop/h1";
  auto targets = agent_targets({grpc, h2c, http1}, 5, 0, 1);
  auto back = verify::parse_probe_targets(verify::probe_targets_json(targets));
  EXPECT_EQ(back, targets);
  EXPECT_EQ(back[0].protocol, load::Protocol::grpc);
  EXPECT_EQ(back[0].grpc_method, "/zd.Echo/Call");
  // An answer from a watcher of before: no protocol is HTTP/1.1.
  auto old = verify::parse_probe_targets(
      R"({"targets":[{"svc":"shop/web","url":"http://10.0.0.1:80/","rate":2}]})");
  EXPECT_EQ(old[0].protocol, load::Protocol::http1);
  EXPECT_THROW(verify::parse_probe_targets(
                   R"({"targets":[{"svc":"shop/web","url":"http://10.0.0.1/","protocol":"h3"}]})"),
               Error);
  EXPECT_THROW(
      verify::parse_probe_targets(
          R"({"targets":[{"svc":"shop/web","url":"http://10.0.0.1/","protocol":"grpc","method":"x"}]})"),
      Error);
}

TEST(AgentTargets, TheBudgetCutsEachAgentsRate) {
  ServiceInfo a = read_service(service(Json::object()));
  ServiceInfo b = a;
  b.target.svc = "shop/api";
  EXPECT_EQ(agent_targets({a, b}, 5, 0, 10)[0].rate, 5);
  // 10 agents x 2 Services within 50 requests/s: 2.5 each.
  auto cut = agent_targets({a, b}, 5, 50, 10);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_DOUBLE_EQ(cut[1].rate, 2.5);
}

TEST(AgentReport, TheBodySplitsBackIntoItsTargets) {
  std::vector<verify::ReportPart> parts = {
      {"shop/web", "", "{\"k\":\"hello\",\"n\":0}\n{\"k\":\"bucket\",\"n\":1}\n"},
      {"shop/api", "no such Service", ""}};
  auto back = verify::split_report(verify::report_body(parts));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].svc, "shop/web");
  EXPECT_EQ(back[0].lines, parts[0].lines);
  EXPECT_EQ(back[1].error, "no such Service");
  EXPECT_EQ(back[1].lines, "");
  auto targets = verify::parse_probe_targets(
      R"({"targets":[{"svc":"shop/web","service":"web","url":"http://10.0.0.1:80/","rate":2}]})");
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].rate, 2);
  EXPECT_EQ(targets[0].host, "");
  targets = verify::parse_probe_targets(
      R"({"targets":[{"svc":"shop/web#ingress","url":"http://10.0.0.9:80/","host":"shop.example.com"}]})");
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].host, "shop.example.com");
  EXPECT_THROW(verify::parse_probe_targets(
                   R"({"targets":[{"svc":"shop/web","host":"a
X-Evil: 1"}]})"),
               std::exception);
  EXPECT_THROW(verify::parse_probe_targets("{}"), std::exception);
  EXPECT_THROW(verify::split_report("{\"k\":\"hello\"}\n"), std::exception);
}

}  // namespace
}  // namespace zerodrop::watch
