#include "load/report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace zerodrop::load {
namespace {

Summary example() {
  Summary s;
  s.requests = 10;
  s.ok = 7;
  s.failed = 3;
  s.outcomes[static_cast<size_t>(record::Outcome::ok)] = 7;
  s.outcomes[static_cast<size_t>(record::Outcome::http_502)] = 3;
  s.late = 1;
  s.rate_achieved = 99.5;
  s.latency_ms.p50 = 1.5;
  s.disruption_s = 0.25;
  s.disruption_start_s = 1.5;
  s.first_failure_s = 1.4;
  s.last_failure_s = 2;
  s.connections_opened = 4;
  s.first_error[static_cast<size_t>(record::Outcome::connect_error)] = "TLS handshake: x";
  return s;
}

TEST(Report, JsonHasTheDocumentedFields) {
  auto j = nlohmann::json::parse(summary_json(example()));
  EXPECT_EQ(j["requests"], 10);
  EXPECT_EQ(j["ok"], 7);
  EXPECT_EQ(j["failed"], 3);
  EXPECT_EQ(j["failures"]["http_502"], 3);
  EXPECT_EQ(j["failures"].size(), record::kOutcomeCount - 1) << "every failure class, zero or not";
  EXPECT_FALSE(j.contains("h2")) << "HTTP/1.1 summaries carry no HTTP/2 fields";
  EXPECT_EQ(j["late"], 1);
  EXPECT_EQ(j["rate_achieved"], 99.5);
  EXPECT_EQ(j["latency_ms"]["p50"], 1.5);
  for (const char* key : {"p90", "p99", "p999", "max"}) {
    EXPECT_TRUE(j["latency_ms"].contains(key)) << key;
  }
  EXPECT_EQ(j["disruption_s"], 0.25);
  EXPECT_EQ(j["disruption_start_s"], 1.5);
  EXPECT_EQ(j["first_failure_s"], 1.4);
  EXPECT_EQ(j["last_failure_s"], 2);
  EXPECT_EQ(j["connections_opened"], 4);
  EXPECT_EQ(j["first_errors"]["connect_error"], "TLS handshake: x");
  EXPECT_EQ(j["first_errors"].size(), 1u) << "only classes with a message";
}

TEST(Report, TextNamesFailureClasses) {
  std::string text = format_summary(example());
  EXPECT_NE(text.find("http_502 3"), std::string::npos) << text;
  EXPECT_NE(text.find("disruption 0.250s from 1.500s (longest stretch of consecutive failures); "
                      "failures between 1.400s and 2.000s\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  connect_error, first: TLS handshake: x\n"), std::string::npos) << text;
  EXPECT_NE(format_interval(example()).find("http_502 3"), std::string::npos);
}

// Both counts in every summary: the raw failures the exit code goes by, and what a client that
// resends retry-safe failures saw (estimated, or measured with --client-retry).
TEST(Report, RawAndAfterRetryCountsInTextAndJson) {
  Summary s = example();
  s.retry_safe = 2;
  EXPECT_NE(format_summary(s).find(
                "retries   2 of 3 failure(s) retry-safe (idempotent, reused connection, no "
                "response byte): a client that resends those once would have seen 1 if each "
                "resend succeeded (--client-retry tries it)\n"),
            std::string::npos)
      << format_summary(s);
  auto j = nlohmann::json::parse(summary_json(s));
  EXPECT_EQ(j["retry_safe"], 2);
  EXPECT_EQ(j["failed_after_retries"], 1);
  EXPECT_FALSE(j.contains("resent"));

  s.client_retry = true;
  s.resent = 2;
  s.resent_ok = 1;
  EXPECT_NE(format_summary(s).find("retries   2 retry-safe failure(s) resent on a new connection "
                                   "(1 ok, 1 failed): 1 failed after client retries, 3 raw\n"),
            std::string::npos)
      << format_summary(s);
  j = nlohmann::json::parse(summary_json(s));
  EXPECT_EQ(j["resent"], 2);
  EXPECT_EQ(j["resent_ok"], 1);
  EXPECT_EQ(j["failed_after_retries"], 1);

  s.failed = 0;
  EXPECT_EQ(format_summary(s).find("retries"), std::string::npos) << "nothing failed";
}

TEST(Report, Http2AndGrpcCountsInTextAndJson) {
  Summary s = example();
  s.protocol = Protocol::grpc;
  s.h2.goaways[0] = 2;
  s.h2.goaways[2] = 1;
  s.h2.closed_without_goaway = 1;
  s.h2.unprocessed = 4;
  s.h2.resent_ok = 3;
  s.h2.resend_failed = 1;
  s.h2.rst_streams[7] = 2;
  s.h2.grpc_status[0] = 5;
  s.h2.grpc_status[14] = 2;
  std::string text = format_summary(s);
  EXPECT_NE(text.find("HTTP/2    3 GOAWAY (NO_ERROR 2, INTERNAL_ERROR 1), 1 connection(s) closed "
                      "without GOAWAY, 4 unprocessed request(s) resent (3 ok, 1 failed)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("RST_STREAM received: REFUSED_STREAM 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("grpc-status OK 5, UNAVAILABLE 2\n"), std::string::npos) << text;
  auto j = nlohmann::json::parse(summary_json(s));
  EXPECT_EQ(j["protocol"], "grpc");
  EXPECT_EQ(j["h2"]["goaways"]["INTERNAL_ERROR"], 1);
  EXPECT_EQ(j["h2"]["unprocessed_retried"], 4);
  EXPECT_EQ(j["h2"]["rst_stream"]["REFUSED_STREAM"], 2);
  EXPECT_EQ(j["grpc_status"]["UNAVAILABLE"], 2);
}

}  // namespace
}  // namespace zerodrop::load
