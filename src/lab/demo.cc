#include "lab/demo.h"

#include <unistd.h>

#include <filesystem>
#include <ostream>

#include <fmt/format.h>

#include "base/error.h"
#include "base/exit_code.h"
#include "lab/lab.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;

struct Case {
  std::string title;
  std::string binary;
  std::vector<std::string> extra_args;
  std::string prestop;
  bool expect_failures;
};

Options demo_options(const Case& c, const std::string& examples_dir, const std::string& dir) {
  Options o;
  o.pod.command = {examples_dir + "/" + c.binary, "--host", "{ip}", "--port", "{port}"};
  o.pod.command.insert(o.pod.command.end(), c.extra_args.begin(), c.extra_args.end());
  o.pod.prestop = parse_hook(c.prestop, "--prestop");
  o.pod.grace = 10s;
  o.pod.readiness = parse_probe("http:/readyz", "--readiness");
  o.pod.readiness.period = 200ms;
  o.pod.readiness.failure_threshold = 1;
  o.replicas = 2;
  o.nodes = 2;
  o.propagation = DelayDistribution::fixed(std::chrono::seconds(1));
  o.load.rate = 200;
  o.load.connections = 16;
  o.warmup = 1s;
  o.tail = 1s;
  o.out_dir = dir;
  o.scenario.extra["demo"] = c.title;
  return o;
}

std::string classes(const diagnose::Diagnosis& d) {
  std::string out;
  for (const auto& [name, count] : d.totals.by_class) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, count);
  }
  return out.empty() ? "-" : out;
}

std::string holes(const diagnose::Diagnosis& d) {
  std::string out;
  for (const diagnose::HoleSummary& h : d.holes) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", record::to_string(h.hole), h.requests);
  }
  return out.empty() ? "-" : out;
}

}  // namespace

int run_demo(const std::string& examples_dir, const std::string& out_root, std::ostream& out,
             const Finish& finish) {
  const std::vector<Case> cases = {
      {"naive, no preStop", "naive", {}, "none", true},
      {"close-listener, no preStop", "close-listener", {}, "none", true},
      {"graceful, preStop sleep:2s", "graceful", {"--delay", "1s"}, "sleep:2s", false},
  };
  for (const Case& c : cases) {
    if (!std::filesystem::exists(examples_dir + "/" + c.binary)) {
      throw Error(fmt::format("the demo needs the example '{}' in {} (run 'make build')", c.binary,
                              examples_dir));
    }
  }
  std::vector<std::string> rows;
  bool as_described = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    out << fmt::format("\n=== {}/{}: {} (2 pods, 2 nodes, propagation 1s, 200 req/s, l4)\n", i + 1,
                       cases.size(), c.title);
    out.flush();
    std::string dir = fmt::format("{}/{}", out_root, c.binary);
    Result result = run(demo_options(c, examples_dir, dir));
    diagnose::Diagnosis d = finish(record::RunFolder(dir), result.run, out);
    rows.push_back(fmt::format("{:<30} {:>8} {:>7}  {:<34} {}", c.title, d.totals.requests,
                               d.totals.failed, classes(d), holes(d)));
    as_described = as_described && (d.totals.failed > 0) == c.expect_failures;
    if (result.interrupted) {
      return to_int(ExitCode::interrupted);
    }
  }
  out << fmt::format("\n=== side by side (run folders in {})\n", out_root);
  out << fmt::format("{:<30} {:>8} {:>7}  {:<34} {}\n", "scenario", "requests", "failed",
                     "failures by class", "holes");
  for (const std::string& row : rows) {
    out << row << "\n";
  }
  return to_int(as_described ? ExitCode::ok : ExitCode::failed);
}

}  // namespace zerodrop::lab
