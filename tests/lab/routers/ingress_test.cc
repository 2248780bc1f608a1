#include "lab/routers/ingress.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

namespace fs = std::filesystem;

EndpointChange change(const std::string& pod, const std::string& ip, bool ready, bool serving,
                      bool terminating) {
  return {{pod, ip, 8080, {ready, serving, terminating}}, false};
}

EndpointChange removal(const std::string& pod) {
  return {{pod, "", 0, {}}, true};
}

IngressSettings settings(int retries) {
  IngressSettings s;
  s.dir = "/run/zd";
  s.listen_port = 18000;
  s.control_port = 18001;
  s.retries = retries;
  return s;
}

TEST(HaproxyCommands, AddsEnablesDrainsAndDeletesAsEndpointsChange) {
  EndpointTable table;
  std::map<std::string, bool> have;
  table.apply(change("a", "127.0.0.2", true, true, false));
  table.apply(change("b", "127.0.0.3", false, false, false));  // starting: not routed yet
  EXPECT_EQ(haproxy_commands(have, table.usable(), table),
            (std::vector<std::string>{"add server pods/a 127.0.0.2:8080",
                                      "set server pods/a state ready"}));
  table.apply(change("b", "127.0.0.3", true, true, false));
  table.apply(change("a", "127.0.0.2", false, true, true));  // terminating, still serving
  EXPECT_EQ(
      haproxy_commands(have, table.usable(), table),
      (std::vector<std::string>{"add server pods/b 127.0.0.3:8080", "set server pods/b state ready",
                                "set server pods/a state maint"}));
  EXPECT_TRUE(haproxy_commands(have, table.usable(), table).empty()) << "nothing changed";
  table.apply(removal("a"));
  EXPECT_EQ(haproxy_commands(have, table.usable(), table),
            (std::vector<std::string>{"del server pods/a"}));
  EXPECT_EQ(have, (std::map<std::string, bool>{{"b", true}}));
}

TEST(HaproxyCommands, RoutesServingTerminatingPodsWhenNoneIsReady) {
  EndpointTable table;
  std::map<std::string, bool> have{{"a", false}};  // put in maint earlier
  table.apply(change("a", "127.0.0.2", false, true, true));
  EXPECT_EQ(haproxy_commands(have, table.usable(), table),
            (std::vector<std::string>{"set server pods/a state ready"}));
}

TEST(NginxConfig, NamesEachPodByItsAddressAndMapsRetries) {
  EndpointTable table;
  table.apply(change("pod-1", "127.0.0.2", true, true, false));
  std::string conf = nginx_config(settings(0), table.usable(), 7);
  EXPECT_NE(conf.find("server 127.0.0.2:8080 max_fails=0;"), std::string::npos) << conf;
  EXPECT_NE(conf.find("\"~(^|, )127\\.0\\.0\\.2:8080$\" pod-1;"), std::string::npos) << conf;
  EXPECT_NE(conf.find("proxy_next_upstream off;"), std::string::npos);
  EXPECT_NE(conf.find("return 200 \"7\\n\";"), std::string::npos) << "the generation it serves";
  std::string retried = nginx_config(settings(2), table.usable(), 7);
  EXPECT_NE(retried.find("proxy_next_upstream error timeout;"), std::string::npos);
  EXPECT_NE(retried.find("proxy_next_upstream_tries 3;"), std::string::npos);
}

TEST(NginxConfig, AnswersNoEndpointWith503) {
  std::string conf = nginx_config(settings(0), {}, 0);
  EXPECT_EQ(conf.find("upstream pods"), std::string::npos);
  EXPECT_NE(conf.find("add_header X-Zerodrop-Router-Error no_endpoint always;"), std::string::npos);
  EXPECT_NE(conf.find("return 503;"), std::string::npos);
}

TEST(HaproxyConfig, RetriesOnlyWhenAskedAndOnlyAfterAFailedConnect) {
  EXPECT_NE(haproxy_config(settings(0)).find("retries 0\n"), std::string::npos);
  std::string retried = haproxy_config(settings(2));
  EXPECT_NE(retried.find("retries 2\n  option redispatch 1\n  retry-on conn-failure\n"),
            std::string::npos)
      << retried;
}

// The programs themselves accept what the controller writes (where they are installed).
bool check(const std::string& program, const std::string& conf_name, const std::string& text,
           const std::string& args) {
  fs::path dir =
      fs::temp_directory_path() / ("zerodrop-ingress-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string conf = (dir / conf_name).string();
  std::ofstream(conf) << text;
  std::string command = program + " " + args + conf + " >" + (dir / "out").string() + " 2>&1";
  bool ok = std::system(command.c_str()) == 0;
  if (!ok) {
    std::ifstream in(dir / "out");
    std::cerr << in.rdbuf();
  }
  fs::remove_all(dir);
  return ok;
}

TEST(IngressConfigs, PassTheProgramsOwnCheck) {
  if (::access("/usr/sbin/nginx", X_OK) != 0 || ::access("/usr/sbin/haproxy", X_OK) != 0) {
    GTEST_SKIP() << "nginx or haproxy is not installed (scripts/setup.sh test)";
  }
  EndpointTable table;
  table.apply(change("pod-1", "127.0.0.2", true, true, false));
  table.apply(change("pod-2", "127.0.0.3", true, true, false));
  IngressSettings s = settings(1);
  s.dir = fs::temp_directory_path().string();
  EXPECT_TRUE(check("/usr/sbin/nginx -q -t -e /dev/stderr -p " + s.dir, "nginx.conf",
                    nginx_config(s, table.usable(), 3), "-c "));
  EXPECT_TRUE(check("/usr/sbin/nginx -q -t -e /dev/stderr -p " + s.dir, "nginx.conf",
                    nginx_config(s, {}, 0), "-c "));
  EXPECT_TRUE(check("/usr/sbin/haproxy", "haproxy.cfg", haproxy_config(s), "-c -q -f "));
}

}  // namespace
}  // namespace zerodrop::lab
