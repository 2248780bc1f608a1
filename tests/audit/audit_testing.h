#pragma once
// Helpers for the audit tests: audit YAML text, look findings up by rule.

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "audit/audit.h"
#include "kube/loader.h"

namespace zerodrop::audit::testing {

inline Report audit_text(const std::string& yaml, const Options& options = {}) {
  kube::Loaded loaded = kube::load_text(yaml, "t.yaml");
  return audit_objects(std::move(loaded.objects), loaded.problems, options);
}

inline std::vector<Finding> with_rule(const Report& report, std::string_view rule) {
  std::vector<Finding> out;
  for (const Finding& f : report.all_findings()) {
    if (f.rule == rule) {
      out.push_back(f);
    }
  }
  return out;
}

inline bool has(const Report& report, std::string_view rule) {
  return !with_rule(report, rule).empty();
}

// A Service selecting app=web on port 80 -> "http" (a container port name).
inline std::string service(const std::string& target = "http",
                           const std::string& port_name = "web-port") {
  return "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n"
         "  ports: [{name: "
         + port_name + ", port: 80, targetPort: " + target + "}]\n---\n";
}

// A Deployment of app=web whose container body (indented 10) and spec extras are given.
inline std::string deployment(const std::string& container, const std::string& spec = "",
                              const std::string& pod_spec = "") {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n" + spec +
         "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
         "    spec:\n" + pod_spec + "      containers:\n        - name: app\n" + container;
}

// A container that passes every rule: named http port, 5 s native sleep, distinct probes.
inline const char* kGoodContainer = R"(          image: registry.example/web:1.0
          ports: [{name: http, containerPort: 8080}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
          readinessProbe: {httpGet: {path: /ready, port: http}}
          livenessProbe: {httpGet: {path: /livez, port: http}}
)";

}  // namespace zerodrop::audit::testing
