#include "report/report.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "diagnose/run_builder.h"
#include "record/hole.h"
#include "report/markup.h"

namespace zerodrop::report {
namespace {

using diagnose::testing::Connection;
using diagnose::testing::EventKind;
using diagnose::testing::Outcome;
using diagnose::testing::RunBuilder;
using nlohmann::json;

// Three pods through two routers; web-0 is deleted at 4 s with no preStop and refuses
// connections until node-2 updates at 6.02 s; one request was in flight at its exit.
record::RunRecord naive_run() {
  RunBuilder b;
  b.set("replicas", "3").set("prestop", "none").set("grace", "30s");
  for (const char* pod : {"web-0", "web-1", "web-2"}) {
    b.pod(pod, 0.1, 0.5);
    b.applied(0.6, "node-1", pod, true, false).applied(0.6, "node-2", pod, true, false);
    b.ok(1.0, 8.0, 0.05, "node-1", pod);
  }
  b.event(2.0, EventKind::rollout_started, "");
  b.terminate("web-0", 4.0, 0.01);
  b.applied(5.0, "node-1", "web-0", false, true).applied(6.02, "node-2", "web-0", false, true);
  b.request(3.995, 4.009, Outcome::reset_before_response, Connection::reused, "node-1", "web-0");
  for (int i = 0; i < 15; ++i) {
    b.request(4.1 + 0.1 * i, 4.1 + 0.1 * i, Outcome::connect_refused, Connection::fresh,
              i < 9 ? "node-1" : "node-2", "web-0");
  }
  b.event(8.0, EventKind::rollout_finished, "");
  return b.build();
}

std::string terminal_text(const record::RunRecord& run, Colour colour) {
  std::ostringstream out;
  print_terminal(out, run, diagnose::diagnose(run, {}), TerminalOptions{colour, 100}, false);
  return out.str();
}

size_t columns(const std::string& line) {
  size_t n = 0;
  for (unsigned char c : line) {
    n += (c & 0xC0) != 0x80 ? 1 : 0;  // count UTF-8 code points, not bytes
  }
  return n;
}

TEST(ReportJson, HasVerdictLoadHolesAndEveryFailedRequest) {
  record::RunRecord run = naive_run();
  std::ostringstream out;
  write_json(out, run, diagnose::diagnose(run, {}));
  json j = json::parse(out.str());
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["load"]["failed"], 16);
  EXPECT_EQ(j["load"]["failures_by_class"]["connect_refused"], 15);
  ASSERT_EQ(j["holes"].size(), 2u);
  EXPECT_EQ(j["holes"][0]["id"], "deregistration-race");
  EXPECT_EQ(j["holes"][0]["requests"], 15);
  EXPECT_EQ(j["holes"][0]["routers"], json({"node-1", "node-2"}));
  EXPECT_NEAR(j["holes"][0]["first_s"].get<double>(), 4.1, 1e-6);
  EXPECT_EQ(j["holes"][0]["fix"]["summary"], "preStop sleep 4 s, terminationGracePeriodSeconds 30");
  EXPECT_EQ(j["holes"][1]["id"], "no-drain");
  ASSERT_EQ(j["failed_requests"].size(), 16u);
  const json& first = j["failed_requests"][0];
  EXPECT_EQ(first["hole"], "no-drain");
  EXPECT_EQ(first["backend"], "web-0");
  EXPECT_EQ(first["router"], "node-1");
  EXPECT_EQ(first["backend_state"], "serving");
  EXPECT_EQ(j["failed_requests"][1]["backend_state"], "exited");
  ASSERT_EQ(j["pods"].size(), 3u);
  EXPECT_NEAR(j["pods"][0]["signal_s"].get<double>(), 4.0, 1e-6);
  EXPECT_EQ(j["pods"][0]["failed_by_phase"]["after_signal"], 9 + 6);
  EXPECT_FALSE(j["pods"][0]["events"].empty());
  EXPECT_NEAR(j["propagation"]["max_s"].get<double>(), 2.02, 1e-6);
  EXPECT_EQ(j["timeline"][4]["failed_by_hole"]["deregistration-race"], 9);
}

TEST(ReportJson, PassingRunHasNoHoles) {
  RunBuilder b;
  b.pod("web-0", 0.1, 0.5).ok(1.0, 2.0, 0.1, "node-1", "web-0");
  record::RunRecord run = b.build();
  std::ostringstream out;
  write_json(out, run, diagnose::diagnose(run, {}));
  json j = json::parse(out.str());
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_TRUE(j["holes"].empty());
  EXPECT_TRUE(j["failed_requests"].empty());
  EXPECT_EQ(j["load"]["requests"], 10);
}

// Successes that came only as counts (verify's bucketed agents, the sim) have no latency: the
// reports say so instead of printing 0 ms.
TEST(Report, LatencyOfCountedRequestsIsNotRecordedNotZero) {
  record::RunRecord run = naive_run();
  run.buckets.push_back(
      {.start = std::chrono::seconds(1), .width = std::chrono::milliseconds(100), .requests = 50});
  diagnose::Diagnosis d = diagnose::diagnose(run, {});
  EXPECT_FALSE(d.totals.latency_recorded);
  std::ostringstream json_out, html_out;
  write_json(json_out, run, d);
  EXPECT_TRUE(json::parse(json_out.str())["load"]["latency_ms"].is_null());
  write_html(html_out, run, d);
  EXPECT_NE(html_out.str().find("Latency: not recorded per request"), std::string::npos);
  std::string html = html_out.str();
  std::string load = html.substr(html.find("<section id=\"load\">"));
  load = load.substr(0, load.find("</section>"));
  EXPECT_EQ(load.find("<td>0.0</td>"), std::string::npos);
  EXPECT_NE(load.find("<td>–</td><td>–</td><td>–</td><td>–</td>"), std::string::npos);
  EXPECT_EQ(terminal_text(run, Colour::never).find("latency p50"), std::string::npos);

  record::RunRecord recorded = naive_run();
  EXPECT_TRUE(diagnose::diagnose(recorded, {}).totals.latency_recorded);
  EXPECT_NE(terminal_text(recorded, Colour::never).find("latency p50"), std::string::npos);
}

TEST(ReportTerminal, FitsInOneHundredColumnsWithoutColourOffATerminal) {
  std::string text = terminal_text(naive_run(), Colour::automatic);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(columns(line), 100u) << line;
  }
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_NE(text.find("15 connections refused by pod web-0 between SIGTERM at 4.00 s and router"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("seconds: 4"), std::string::npos);
  EXPECT_NE(text.find("==DDD"), std::string::npos) << text;  // stacked failures
  EXPECT_NE(text.find("web-0 SIGTERM"), std::string::npos);
  EXPECT_NE(text.find("node-2 drops web-0"), std::string::npos);
  EXPECT_NE(text.find("after router update"), std::string::npos);
}

// The per-pod table names the stop signal the pods got and keeps a pod that got no traffic (a row
// of "-"), so that a pod the load never reached is seen, not missing.
TEST(ReportTerminal, PerPodTableNamesTheStopSignalAndKeepsAPodWithoutTraffic) {
  RunBuilder b;
  b.set("replicas", "2").set("prestop", "none").set("grace", "30s");
  for (const char* pod : {"web-0", "web-1"}) {
    b.pod(pod, 0.1, 0.5);
    b.applied(0.6, "node-1", pod, true, false);
  }
  b.ok(1.0, 4.0, 0.1, "node-1", "web-0");
  b.event(4.0, EventKind::deletion_started, "web-0").signal(4.0, "web-0", SIGQUIT);
  b.exited(4.5, "web-0", 0);
  std::string text = terminal_text(b.build(), Colour::never);
  EXPECT_NE(text.find("before SIGQUIT"), std::string::npos) << text;
  EXPECT_EQ(text.find("SIGTERM"), std::string::npos) << text;
  std::istringstream lines(text);
  bool quiet_pod = false;
  for (std::string line; std::getline(lines, line);) {
    quiet_pod = quiet_pod || line.starts_with("  web-1 ");
  }
  EXPECT_TRUE(quiet_pod) << text;
}

// Every rendering says what the terminations covered and what a retrying client would have seen.
TEST(Report, CoverageAndRetriesInTerminalJsonAndHtml) {
  record::RunRecord run = naive_run();
  for (record::RequestRecord& r : run.requests) {
    r.retry_safe = r.outcome == Outcome::reset_before_response;  // the reused one, before a byte
  }
  diagnose::Diagnosis d = diagnose::diagnose(run, {});
  std::ostringstream text;
  print_terminal(text, run, d, TerminalOptions{Colour::never, 100}, false);
  EXPECT_NE(text.str().find("retry-safe 1: a client that resends those once would have seen 15 "
                            "failed if each resend succeeded"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("What the terminations covered"), std::string::npos) << text.str();
  // A 10 ms stop window; in flight at the signal: the one reset and an ok one sent at 3.999999 s.
  EXPECT_NE(text.str().find("web-0                   10.0         2"), std::string::npos)
      << text.str();
  std::ostringstream json_out;
  write_json(json_out, run, d);
  json j = json::parse(json_out.str());
  EXPECT_EQ(j["load"]["retry_safe"], 1);
  EXPECT_EQ(j["load"]["failed_after_retries"], 15);
  EXPECT_EQ(j["coverage"]["pods"].size(), 1u);
  EXPECT_EQ(j["coverage"]["pods"][0]["pod"], "web-0");
  EXPECT_EQ(j["coverage"]["pods"][0]["in_flight_at_signal"], 2);
  EXPECT_NEAR(j["coverage"]["pods"][0]["race_window_s"].get<double>(), 2.02, 1e-5);
  EXPECT_EQ(j["coverage"]["pods"][0]["race_fresh"], 15);
  EXPECT_EQ(j["failed_requests"][0]["retry_safe"], true);
  std::ostringstream html;
  write_html(html, run, d);
  EXPECT_NE(html.str().find("<section id=\"coverage\">"), std::string::npos);
  EXPECT_NE(html.str().find("<th>failed after client retries</th>"), std::string::npos);
}

TEST(ReportTerminal, ColoursWhenAsked) {
  EXPECT_NE(terminal_text(naive_run(), Colour::always).find("\x1b["), std::string::npos);
}

TEST(ReportHtml, IsSelfContainedWithOneBarPerPod) {
  record::RunRecord run = naive_run();
  std::ostringstream out;
  write_html(out, run, diagnose::diagnose(run, {}));
  std::string html = out.str();
  size_t bars = 0;
  for (size_t at = html.find("class=\"pod-bar\""); at != std::string::npos;
       at = html.find("class=\"pod-bar\"", at + 1)) {
    ++bars;
  }
  EXPECT_EQ(bars, 3u);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find(" href="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_NE(html.find("class=\"apply\""), std::string::npos);
  EXPECT_NE(html.find("hole-deregistration-race"), std::string::npos);
}

TEST(ReportHtml, EscapesNamesFromTheRecord) {
  RunBuilder b;
  b.pod("<script>x</script>", 0.1, 0.5);
  record::RunRecord run = b.build();
  std::ostringstream out;
  write_html(out, run, diagnose::diagnose(run, {}));
  EXPECT_EQ(out.str().find("<script>x"), std::string::npos);
}

class RunFolder : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir())
           / (::testing::UnitTest::GetInstance()->current_test_info()->name() + std::string("-")
              + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const char* name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(RunFolder, RoundTripsThroughNdjsonAndRunJson) {
  record::RunRecord run = naive_run();
  run.end = diagnose::testing::at(8.5);
  {
    std::ofstream events(path("events.ndjson")), requests(path("requests.ndjson"));
    for (const record::Event& e : run.events) {
      record::write_ndjson(events, e);
    }
    for (const record::RequestRecord& r : run.requests) {
      record::write_ndjson(requests, r);
    }
  }
  record::RunFolder folder(dir_.string());
  folder.write_run_json(run);
  record::RunRecord back = folder.read();
  EXPECT_EQ(back.engine, "lab");
  EXPECT_EQ(back.scenario, run.scenario);
  EXPECT_EQ(back.end, run.end);
  EXPECT_EQ(back.events.size(), run.events.size());
  EXPECT_EQ(back.requests.size(), run.requests.size());
  diagnose::Diagnosis again = diagnose::diagnose(back, {});
  EXPECT_EQ(again.holes.size(), 2u);
  write_reports(folder, back, again);
  EXPECT_TRUE(std::filesystem::exists(path("report.json")));
  EXPECT_TRUE(std::filesystem::exists(path("report.html")));
}

TEST_F(RunFolder, RejectsMissingAndMalformedFolders) {
  EXPECT_THROW(record::RunFolder(path("absent")).read(), Error);
  EXPECT_THROW(record::RunFolder(dir_.string()).read(), Error);  // no records
  std::ofstream(path("events.ndjson")) << "{\"t_us\": 1, \"kind\": \"pod_created\"}\nnot json\n";
  try {
    record::RunFolder(dir_.string()).read();
    FAIL() << "a malformed line must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("events.ndjson:2"), std::string::npos) << e.what();
  }
}

TEST(ReportHtml, AnUpdateKnownToAnIntervalIsDrawnAsOneAndItsLowerEndInTheJson) {
  record::RunRecord run = naive_run();
  for (record::Event& e : run.events) {
    if (e.kind == record::EventKind::router_applied && e.router == "node-2" && e.pod == "web-0"
        && e.t > record::Micros(6'000'000)) {
      e.t_min = record::Micros(5'500'000);
    }
  }
  diagnose::Diagnosis d = diagnose::diagnose(run, {});
  std::ostringstream html;
  write_html(html, run, d);
  EXPECT_NE(html.str().find("router node-2 stopped sending new connections to web-0 between 5.50 s "
                            "and 6.02 s"),
            std::string::npos);
  EXPECT_EQ(html.str().find("router node-1 stopped sending"), std::string::npos);  // exact there
  std::ostringstream text;
  write_json(text, run, d);
  json updates = json::parse(text.str())["propagation"]["updates"];
  int intervals = 0;
  for (const json& u : updates) {
    if (u["router"] == "node-2" && u["pod"] == "web-0") {
      EXPECT_DOUBLE_EQ(u["applied_min_s"].get<double>(), 5.5);
      EXPECT_DOUBLE_EQ(u["applied_s"].get<double>(), 6.02);
      ++intervals;
    } else {
      EXPECT_TRUE(u["applied_min_s"].is_null());
    }
  }
  EXPECT_EQ(intervals, 1);
}

// The JUnit file parsed by python3's xml.etree, as a CI system would read it: what it prints is
// "suite tests failures errors" and then each failed testcase with its failure's type.
std::string parsed_junit(const record::RunRecord& run, uint64_t max_failures) {
  // One file per process: the two cases run as parallel processes (one CTest test per case).
  std::string path =
      ::testing::TempDir() + "/zerodrop-junit-" + std::to_string(::getpid()) + ".xml";
  {
    std::ofstream out(path);
    write_junit(out, run, diagnose::diagnose(run, {}), max_failures);
  }
  std::string command =
      "python3 -c 'import sys, xml.etree.ElementTree as E\n"
      "s = E.parse(sys.argv[1]).getroot()\n"
      "print(s.tag, s.get(\"tests\"), s.get(\"failures\"), s.get(\"errors\"), "
      "len(s.findall(\"testcase\")))\n"
      "for c in s.findall(\"testcase\"):\n"
      "  for f in list(c): print(c.get(\"name\"), f.tag, f.get(\"type\"), bool(f.text or "
      "f.get(\"message\")))\n' "
      + path;
  std::string text;
  FILE* pipe = ::popen(command.c_str(), "r");
  char buffer[512];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
    text += buffer;
  }
  EXPECT_EQ(pipe == nullptr ? -1 : ::pclose(pipe), 0) << text;
  std::remove(path.c_str());
  return text;
}

TEST(ReportMarkup, OneEscapeServesHtmlAndXml) {
  EXPECT_EQ(escape("it's <a & \"b\">"), "it&apos;s &lt;a &amp; &quot;b&quot;&gt;");
  EXPECT_EQ(escape("tab\tline\nbell\x07"), "tab\tline\nbell ");  // XML 1.0 forbids \x07
}

TEST(ReportJunit, ParsesWithAFailurePerHoleSeenAndOneForTheRun) {
  record::RunRecord run = naive_run();
  run.events.back().detail = "a <detail> & \"quotes\"";  // escaped, or the parse fails
  std::string text = parsed_junit(run, 0);
  // A test case per hole and one for the run; naive's refusals are the deregistration race, its
  // in-flight request the missing drain.
  size_t cases = record::kHoleCount + 1;
  EXPECT_EQ(text.substr(0, text.find('\n')), fmt::format("testsuite {} 3 0 {}", cases, cases));
  EXPECT_NE(text.find("deregistration-race failure deregistration-race True"), std::string::npos)
      << text;
  EXPECT_NE(text.find("no-drain failure no-drain True"), std::string::npos) << text;
  EXPECT_NE(text.find("lab run failure requests-failed True"), std::string::npos) << text;
  EXPECT_EQ(text.find("keepalive-stale failure"), std::string::npos) << text;
}

TEST(ReportJunit, WithinTheBudgetTheRunPassesAndAnUnfinishedVerifyIsAnError) {
  record::RunRecord run = naive_run();
  EXPECT_EQ(parsed_junit(run, 1000).find("lab run failure"), std::string::npos);
  run.engine = "verify";
  std::erase_if(run.events, [](const record::Event& e) {
    return e.kind == record::EventKind::rollout_finished;
  });
  std::string text = parsed_junit(run, 1000);
  EXPECT_NE(text.find("verify run error inconclusive"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format(" 1 {}\n", record::kHoleCount + 1)), std::string::npos)
      << text;  // errors="1"
}

}  // namespace
}  // namespace zerodrop::report
