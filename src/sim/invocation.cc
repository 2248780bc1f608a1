#include "sim/invocation.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/exit_code.h"
#include "sim/simulator.h"
#include "sim/sweep_plot.h"

namespace zerodrop::sim {
namespace {

using nlohmann::json;

std::string count_text(double value) {
  return fmt::format("{:.1f}", value);
}

// ", sidecar plain (drain 5s)" for a meshed pod, "" without a proxy.
std::string sidecar_text(const kube::SidecarProxy& proxy) {
  if (proxy.order == kube::SidecarOrder::none) {
    return "";
  }
  return fmt::format(", sidecar {} (drain {}{})",
                     proxy.order == kube::SidecarOrder::plain ? "plain" : "native",
                     format_duration(proxy.termination_drain),
                     proxy.exit_on_zero_active_connections ? ", exit on zero connections" : "");
}

void print_header(std::ostream& out, const Options& o, const Result& r, double wall) {
  out << fmt::format(
      "zerodrop sim: profile {}, {}, {} nodes ({} routers), {} replicas, "
      "{} req/s, preStop {}s, grace {}s, app {}, seed {}{}{}\n",
      o.profile.name, to_string(o.dataplane), o.nodes, r.routers, o.replicas, o.rate, o.prestop,
      o.grace, to_string(o.app), o.seed,
      o.protocol == Protocol::http1 ? "" : fmt::format(", protocol {}", to_string(o.protocol)),
      sidecar_text(o.sidecar));
  out << fmt::format(
      "rollout {:.1f} s; {:.1f} s of virtual time in {:.2f} s ({} events, "
      "{:.0f} events/s)\n",
      r.rollout_seconds, r.end, wall, r.events, r.events / std::max(wall, 1e-9));
  const PropagationStats& p = r.propagation;
  out << fmt::format(
      "propagation (deletion -> router stops routing to the pod, {} samples): "
      "p50 {:.2f} s  p90 {:.2f} s  p99 {:.2f} s  max {:.2f} s\n",
      p.samples, p.p50, p.p90, p.p99, p.max);
}

void print_holes(std::ostream& out, const Result& r) {
  out << fmt::format("predicted failures per hole (this run; expected value in brackets):\n");
  bool any = false;
  for (size_t h = 0; h < record::kHoleCount; ++h) {
    if (r.failures[h] == 0 && r.expected[h] < 0.05) {
      continue;
    }
    any = true;
    out << fmt::format("  {:<22}{:>10}  ({})\n", record::kHoleIds[h], r.failures[h],
                       count_text(r.expected[h]));
  }
  if (!any) {
    out << "  none\n";
  }
  double share = r.requests ? 100.0 * r.failed / r.requests : 0;
  out << fmt::format("  {:<22}{:>10}  of {} requests ({:.4f}%)\n", "total", r.failed, r.requests,
                     share);
}

void print_runs(std::ostream& out, std::vector<uint64_t> totals, const std::optional<Budget>& b) {
  std::sort(totals.begin(), totals.end());
  double sum = 0;
  size_t zero = 0;
  for (uint64_t t : totals) {
    sum += static_cast<double>(t);
    zero += t == 0 ? 1 : 0;
  }
  size_t n = totals.size();
  auto at = [&](double q) {
    return totals[std::min(n - 1, static_cast<size_t>(q * (n - 1) + 0.5))];
  };
  out << fmt::format(
      "over {} seeds: failures per rollout mean {:.1f}, p50 {}, p99 {}, max {}; "
      "{} of {} rollouts with 0 failures\n",
      n, sum / n, at(0.5), at(0.99), totals.back(), zero, n);
  if (b) {
    size_t within = std::count_if(totals.begin(), totals.end(),
                                  [&](uint64_t t) { return t <= b->max_failures; });
    out << fmt::format("budget: at most {} failures in {:g}% of rollouts: {} ({} of {})\n",
                       b->max_failures, b->fraction * 100,
                       within >= b->fraction * n - 1e-9 ? "met" : "NOT met", within, n);
  }
}

// The simulator's own records; the finish adds the reports and run.json.
record::RunFolder write_records(const std::string& dir, const record::RunRecord& run) {
  record::RunFolder folder(dir);
  record::RunWriter writer(folder, record::Traffic::buckets);
  for (const record::Event& e : run.events) {
    writer.write(e);
  }
  for (const record::TimeBucket& b : run.buckets) {
    writer.write(b);
  }
  writer.close();
  return folder;
}

int run_single(const Invocation& inv, std::ostream& out) {
  auto started = std::chrono::steady_clock::now();
  Result first = simulate(inv.options);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  print_header(out, inv.options, first, wall);
  print_holes(out, first);
  std::vector<uint64_t> totals = {first.failed};
  Options more = inv.options;
  more.record_events = false;
  for (int i = 1; i < inv.runs; ++i) {
    more.seed = inv.options.seed + static_cast<uint64_t>(i);
    totals.push_back(simulate(more).failed);
  }
  if (inv.runs > 1 || inv.budget) {
    print_runs(out, totals, inv.budget);
  }
  out << '\n';
  std::optional<record::RunFolder> folder;
  if (!inv.out_dir.empty()) {
    folder = write_records(inv.out_dir, first.record);
  }
  inv.finish(folder, first.record, out);
  if (folder) {
    out << fmt::format("run folder: {}\n", inv.out_dir);
  }
  Budget budget = inv.budget.value_or(Budget{0, 1.0});
  size_t within = std::count_if(totals.begin(), totals.end(),
                                [&](uint64_t t) { return t <= budget.max_failures; });
  bool ok = within >= budget.fraction * totals.size() - 1e-9;
  return to_int(ok ? ExitCode::ok : ExitCode::failed);
}

int run_sweep_table(const Invocation& inv, std::ostream& out) {
  Budget budget = inv.budget.value_or(Budget{});
  SweepResult result = run_sweep(inv.options, *inv.sweep, budget, inv.runs);
  const Options& o = inv.options;
  out << fmt::format(
      "zerodrop sim sweep: {} over {} seeds; profile {}, {}, {} nodes, {} "
      "replicas, {} req/s, app {}\n",
      to_string(inv.sweep->parameter), inv.runs, o.profile.name, to_string(o.dataplane), o.nodes,
      o.replicas, o.rate, to_string(o.app));
  out << fmt::format("budget: at most {} failures in {:g}% of rollouts\n\n", budget.max_failures,
                     budget.fraction * 100);
  out << fmt::format("{:>16}  {:>12}  {:>10}  {:>10}  {:>12}  {}\n",
                     to_string(inv.sweep->parameter), "mean fails",
                     "p" + fmt::format("{:g}", budget.fraction * 100), "max", "within", "meets");
  json rows = json::array();
  for (const SweepRow& row : result.rows) {
    out << fmt::format("{:>16}  {:>12.1f}  {:>10}  {:>10}  {:>11.0f}%  {}\n",
                       sweep_value_text(inv.sweep->parameter, row.value), row.mean_failures,
                       row.quantile_failures, row.max_failures, row.within_budget * 100,
                       row.meets ? "yes" : "no");
    rows.push_back({{"value", row.value},
                    {"mean_failures", row.mean_failures},
                    {"max_failures", row.max_failures},
                    {"meets", row.meets}});
  }
  std::string name(to_string(inv.sweep->parameter));
  if (result.recommended) {
    out << fmt::format("\nrecommended {}: {} (the smallest value meeting the budget)\n", name,
                       sweep_value_text(inv.sweep->parameter, *result.recommended));
  } else {
    out << fmt::format("\nno {} in the swept range meets the budget\n", name);
  }
  out << '\n' << sweep_text_plot(result, inv.sweep->parameter, inv.runs);
  if (!inv.out_dir.empty()) {
    json j = {{"parameter", name}, {"runs", inv.runs}, {"rows", rows}};
    j["recommended"] = result.recommended ? json(*result.recommended) : json(nullptr);
    record::RunFolder folder(inv.out_dir);
    folder.write_sweep_json(j.dump(2));
    folder.write_sweep_svg(sweep_svg(result, inv.sweep->parameter, inv.runs));
    out << fmt::format("sweep folder: {} (sweep.json, sweep.svg)\n", inv.out_dir);
  }
  return to_int(result.recommended ? ExitCode::ok : ExitCode::failed);
}

}  // namespace

int run(const Invocation& invocation, std::ostream& out) {
  assert(invocation.finish);  // the cli always passes one
  validate(invocation.options);
  if (invocation.runs < 1 || invocation.runs > 100'000) {
    throw Error("--runs: expected 1 to 100000");
  }
  return invocation.sweep ? run_sweep_table(invocation, out) : run_single(invocation, out);
}

}  // namespace zerodrop::sim
