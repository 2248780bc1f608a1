// The Ingress as a second target: which Ingress routes reach a Service, what the agents request
// through the ingress controller, and the --ingress-service flag.
#include "watch/ingress.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zerodrop::watch {
namespace {

using Json = nlohmann::json;

Json backend(const std::string& service, const Json& port) {
  return {{"service", {{"name", service}, {"port", port}}}};
}

Json path(const std::string& p, const std::string& type, const Json& to) {
  return {{"path", p}, {"pathType", type}, {"backend", to}};
}

// An Ingress in `ns` with host shop.example.com: /api -> web:80 (Prefix), /admin -> admin,
// /exact -> web port "http" (Exact); a hostless rule / -> web:8080.
Json ingress(const std::string& ns) {
  return {
      {"metadata", {{"name", "front"}, {"namespace", ns}}},
      {"spec",
       {{"rules",
         Json::array(
             {{{"host", "shop.example.com"},
               {"http",
                {{"paths",
                  Json::array({path("/api", "Prefix", backend("web", {{"number", 80}})),
                               path("/admin", "Prefix", backend("admin", {{"number", 80}})),
                               path("/exact", "Exact", backend("web", {{"name", "http"}}))})}}}},
              {{"http",
                {{"paths",
                  Json::array({path("/", "Prefix", backend("web", {{"number", 8080}}))})}}}}})}}}};
}

TEST(IngressRoutes, OnlyTheRulesWhoseBackendIsTheServicesPort) {
  auto routes = routes_to(ingress("shop"), "shop", "web", "http", 80);
  ASSERT_EQ(routes.size(), 2u);
  EXPECT_EQ(routes[0], (IngressRoute{"shop/front", "shop.example.com", "/api", "Prefix"}));
  EXPECT_EQ(routes[1], (IngressRoute{"shop/front", "shop.example.com", "/exact", "Exact"}));
  // The other port of the Service: the hostless rule.
  routes = routes_to(ingress("shop"), "shop", "web", "", 8080);
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].host, "");
  // A Service of the same name in another namespace: an Ingress routes only in its own.
  EXPECT_TRUE(routes_to(ingress("shop"), "other", "web", "http", 80).empty());
  EXPECT_TRUE(routes_to(ingress("shop"), "shop", "cart", "http", 80).empty());
  EXPECT_TRUE(routes_to(Json("garbage"), "shop", "web", "http", 80).empty());
}

TEST(IngressRoutes, TheDefaultBackendAndAResourceBackend) {
  Json i = {
      {"metadata", {{"name", "all"}, {"namespace", "shop"}}},
      {"spec",
       {{"defaultBackend", backend("web", {{"number", 80}})},
        {"rules", Json::array({{{"http",
                                 {{"paths", Json::array({{{"path", "/static"},
                                                          {"pathType", "Prefix"},
                                                          {"backend",
                                                           {{"resource",
                                                             {{"kind", "StorageBucket"},
                                                              {"name", "web"}}}}}}})}}}}})}}}};
  auto routes = routes_to(i, "shop", "web", "", 80);
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0], (IngressRoute{"shop/all", "", "/", "Default"}));
}

TEST(IngressRoutes, PrefixMatchesByPathElements) {
  IngressRoute prefix{"shop/front", "h", "/foo", "Prefix"};
  EXPECT_TRUE(admits(prefix, "/foo"));
  EXPECT_TRUE(admits(prefix, "/foo/"));
  EXPECT_TRUE(admits(prefix, "/foo/bar?x=1"));
  EXPECT_FALSE(admits(prefix, "/foobar"));
  EXPECT_TRUE(admits({"i", "h", "/", "Prefix"}, "/healthz"));
  IngressRoute exact{"shop/front", "h", "/foo", "Exact"};
  EXPECT_TRUE(admits(exact, "/foo"));
  EXPECT_FALSE(admits(exact, "/foo/"));
  // The Service's probe path when the route admits it, else the route's own path.
  EXPECT_EQ(ingress_probe({"i", "h", "/", "Prefix"}, "/healthz").path, "/healthz");
  EXPECT_EQ(ingress_probe(prefix, "/healthz").path, "/foo");
  EXPECT_EQ(ingress_probe(prefix, "/healthz").host, "h");
}

TEST(IngressRoutes, OneRoutePerServiceAHostFirst) {
  EXPECT_FALSE(chosen_route({}));
  auto chosen = chosen_route({{"shop/b", "", "/", "Default"},
                              {"shop/b", "b.example.com", "/", "Prefix"},
                              {"shop/a", "", "/x", "Prefix"}});
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->host, "b.example.com");
  chosen = chosen_route({{"shop/b", "", "/", "Default"}, {"shop/a", "", "/x", "Prefix"}});
  EXPECT_EQ(chosen->ingress, "shop/a");
}

TEST(IngressTarget, TheServicesSecondTargetGoesThroughTheController) {
  Json service = {{"metadata", {{"name", "web"}, {"namespace", "shop"}}},
                  {"spec",
                   {{"clusterIP", "10.96.0.10"},
                    {"selector", {{"app", "web"}}},
                    {"ports", Json::array({{{"name", "http"}, {"port", 80}}})}}}};
  service["metadata"]["annotations"] = {{"zerodrop.dev/probe", "/api/health"}};
  ServiceInfo s = read_service(service);
  ASSERT_EQ(s.port_number, 80);
  std::map<std::string, Json> ingresses = {{"shop/front", ingress("shop")}};
  auto t = ingress_target(s, ingresses, "http://10.96.0.20:80");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->svc, "shop/web#ingress");
  EXPECT_EQ(t->service, "");  // never the node's link variables: the controller is the router
  EXPECT_EQ(t->host, "shop.example.com");
  EXPECT_EQ(t->url, "http://10.96.0.20:80/api/health");  // /api admits the probe path
  // No --ingress-service, no Ingress to the Service, or a Service with a problem: none.
  EXPECT_FALSE(ingress_target(s, ingresses, ""));
  EXPECT_FALSE(ingress_target(s, {}, "http://10.96.0.20:80"));
  ServiceInfo grpc = s;
  grpc.target.protocol = load::Protocol::grpc;
  EXPECT_FALSE(ingress_target(grpc, ingresses, "http://10.96.0.20:80"));
  service["metadata"]["name"] = "cart";
  EXPECT_FALSE(ingress_target(read_service(service), ingresses, "http://10.96.0.20:80"));
}

TEST(IngressController, TheFlagAndTheControllersAddress) {
  IngressController c = parse_ingress_service("ingress-nginx/ingress-nginx-controller");
  EXPECT_EQ(c.namespace_name, "ingress-nginx");
  EXPECT_EQ(c.name, "ingress-nginx-controller");
  EXPECT_EQ(parse_ingress_service("ing/ctl:8080").port, "8080");
  for (const char* bad : {"", "ctl", "/ctl", "ing/", "ing/ctl:", "a/b/c"}) {
    EXPECT_THROW(parse_ingress_service(bad), Error) << bad;
  }
  Json svc = {{"spec",
               {{"clusterIP", "10.96.0.20"},
                {"ports", Json::array({{{"name", "https"}, {"port", 443}},
                                       {{"name", "http"}, {"port", 80}}})}}}};
  EXPECT_EQ(controller_base(c, svc), "http://10.96.0.20:80");
  EXPECT_EQ(controller_base(parse_ingress_service("ing/ctl:https"), svc), "http://10.96.0.20:443");
  EXPECT_THROW(controller_base(parse_ingress_service("ing/ctl:9999"), svc), Error);
  Json headless = {{"spec", {{"clusterIP", "None"}, {"ports", svc["spec"]["ports"]}}}};
  EXPECT_THROW(controller_base(c, headless), Error);
}

}  // namespace
}  // namespace zerodrop::watch
