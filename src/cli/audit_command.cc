#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "audit/audit.h"
#include "audit/rule.h"
#include "base/error.h"
#include "base/parse.h"
#include "base/text.h"
#include "cli/command.h"

namespace zerodrop::cli {
namespace audit_command {
namespace {

constexpr const char* kFooter = R"(
Examples:
  zerodrop audit k8s/                          # every *.yaml, *.yml, *.json below k8s/
  helm template my-chart | zerodrop audit -    # rendered charts from stdin
  kustomize build overlays/prod | zerodrop audit --format sarif - > audit.sarif
  zerodrop audit --propagation 15s --drain-seconds 20 deploy.yaml
  zerodrop audit --fix deploy.yaml > patch.yaml   # strategic-merge patches; files untouched
  zerodrop audit db/migrations/                # *.sql: Flyway V…__x.sql, golang-migrate *.up.sql
  zerodrop audit k8s/ db/migrations/           # manifests and the migrations of the same release
  zerodrop audit --list-rules

Ignore a rule on one workload with the annotation  zerodrop.dev/ignore: rule-id,hole-id
(on the workload or its pod template), or with --ignore / an 'ignore:' list in --config.
In a migration, '-- zerodrop:ignore rule-id' in the comments before a statement ignores it there.
Set a workload's drain time with the annotation  zerodrop.dev/drain-seconds: "20".
Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 usage error.
Docs: docs/audit.md)";

// Flag values as typed; converted with base/parse.h so errors name the flag.
struct Flags {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string fail_on = "error";
  std::string propagation = "5s";
  std::string drain = "5s";
  std::string margin = "2s";
  std::string headroom = "25%";
  std::string kube_version = "1.30";
  std::string config;
  std::string max_file_mb = "64";
  std::string ignore;
  bool fix = false;
  bool list_rules = false;
  std::map<std::string, CLI::Option*> given;
};

double parse_headroom(std::string_view text) {
  if (!text.empty() && text.back() == '%') {
    return parse_number(text.substr(0, text.size() - 1), "--headroom") / 100;
  }
  double value = parse_number(text, "--headroom");
  if (value < 0 || value > 1) {
    throw Error(
        fmt::format("--headroom: expected a fraction from 0 to 1 or a percentage, got "
                    "'{}'",
                    text));
  }
  return value;
}

audit::Format parse_format(const std::string& text) {
  if (text == "text") {
    return audit::Format::text;
  }
  if (text == "json") {
    return audit::Format::json;
  }
  if (text == "sarif") {
    return audit::Format::sarif;
  }
  if (text == "github") {
    return audit::Format::github;
  }
  throw Error(fmt::format("--format: expected text, json, sarif or github, got '{}'", text));
}

// Config file values apply where the flag was not given on the command line.
void apply_config(Flags& f, audit::Options& o) {
  if (f.config.empty()) {
    return;
  }
  audit::ConfigFile c = audit::read_config(f.config);
  auto take = [&](const char* flag, const std::string& value, std::string& into) {
    if (!value.empty() && f.given[flag]->count() == 0) {
      into = value;
    }
  };
  take("--propagation", c.propagation, f.propagation);
  take("--drain-seconds", c.drain, f.drain);
  take("--margin", c.margin, f.margin);
  take("--headroom", c.headroom, f.headroom);
  take("--k8s-version", c.kube_version, f.kube_version);
  take("--fail-on", c.fail_on, f.fail_on);
  o.ignores = c.ignores;
}

audit::Options to_options(Flags& f) {
  audit::Options o;
  apply_config(f, o);
  o.paths = f.paths;
  o.format = parse_format(f.format);
  auto fail_on = audit::severity_from_string(f.fail_on);
  if (!fail_on) {
    throw Error(fmt::format("--fail-on: expected error, warning or info, got '{}'", f.fail_on));
  }
  o.fail_on = *fail_on;
  o.propagation = parse_duration(f.propagation, "--propagation");
  o.drain = parse_duration(f.drain, "--drain-seconds");
  o.margin = parse_duration(f.margin, "--margin");
  o.headroom = parse_headroom(f.headroom);
  o.kube_version = audit::parse_kube_version(f.kube_version, "--k8s-version");
  o.fix = f.fix ? audit::FixPatches::on : audit::FixPatches::off;
  o.limits.max_file_bytes = parse_integer(f.max_file_mb, "--max-file-mb", 1, 4096) << 20;
  for (std::string_view rule :
       f.ignore.empty() ? std::vector<std::string_view>{} : split(f.ignore, ',')) {
    std::string id(trim(rule));
    if (id != "all" && !audit::find_rule(id) && !record::hole_from_string(id)) {
      throw Error(fmt::format("--ignore: unknown rule '{}' (see --list-rules)", id));
    }
    o.ignores.entries.push_back(audit::IgnoreEntry{id, "", "", "", ""});
  }
  return o;
}

int list_rules() {
  for (const audit::RuleInfo& r : audit::rules()) {
    std::string hole = r.hole ? std::string(record::to_string(*r.hole)) : "-";
    std::cout << fmt::format("{:<30} {:<22} {:<8} {}\n", r.id, hole, audit::to_string(r.severity),
                             r.title);
  }
  return 0;
}

}  // namespace
}  // namespace audit_command

Runner setup_audit(CLI::App& app) {
  using namespace audit_command;
  auto f = std::make_shared<Flags>();
  app.footer(kFooter);
  app.add_option("paths", f->paths,
                 "Files, folders (recursive: *.yaml, *.yml, *.json, *.sql) or - for stdin");
  auto add = [&](const char* name, std::string& into, const char* help) {
    f->given[name] = app.add_option(name, into, help)->capture_default_str();
  };
  add("--format", f->format, "Output: text (compiler-style), json, sarif (2.1.0) or github");
  add("--fail-on", f->fail_on, "Exit 1 when a finding is at or above: error, warning or info");
  add("--propagation", f->propagation,
      "Time from endpoint removal until the last router stops sending (duration); the preStop "
      "delay must cover it");
  add("--drain-seconds", f->drain,
      "Time the app needs to finish in-flight requests after SIGTERM (duration; the annotation "
      "zerodrop.dev/drain-seconds overrides it per workload)");
  add("--margin", f->margin, "Slack between preStop + drain and SIGKILL (duration)");
  add("--headroom", f->headroom,
      "Spare capacity the load leaves (percent or fraction); maxUnavailable may not take more");
  add("--k8s-version", f->kube_version,
      "Target Kubernetes version: >= 1.30 fixes use the native preStop sleep, older ones exec");
  add("--config", f->config, "YAML config file: settings and an ignore list (see docs/audit.md)");
  add("--max-file-mb", f->max_file_mb, "Files larger than this (MiB) are reported, not read");
  app.add_option("--ignore", f->ignore, "Rule or hole ids to ignore everywhere (comma-separated)");
  app.add_flag("--fix", f->fix,
               "Print a strategic-merge patch per workload that closes its holes (never edits "
               "files); the summary goes to stderr");
  app.add_flag("--list-rules", f->list_rules, "Print every rule: id, hole, severity, what");
  return [f]() -> int {
    if (f->list_rules) {
      return list_rules();
    }
    if (f->paths.empty()) {
      throw Error("audit: give at least one PATH (a file, a folder or - for stdin)");
    }
    audit::Options options = to_options(*f);
    return audit::run(options, std::cout, std::cerr);
  };
}

}  // namespace zerodrop::cli
