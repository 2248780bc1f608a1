// The schema race: app errors on the version a migration broke, with the database's words.
#include <gtest/gtest.h>

#include "diagnose/diagnose.h"
#include "diagnose/run_builder.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;
using testing::Connection;
using testing::EventKind;
using testing::Outcome;
using testing::RunBuilder;

constexpr const char* kDbError = "ERROR:  column \"name\" does not exist";

// old-1 runs A, new-1 runs B (created at 3 s); the migration, if any, runs from 2.0 s to 2.2 s.
record::RunRecord schema_run(bool migrated) {
  RunBuilder b;
  b.set("replicas", "1").set("version_a", "./app --app-version 1");
  b.set("version_b", "./app --app-version 2");
  b.pod("old-1", 0.1, 0.5).pod("new-1", 3.0, 3.5);
  b.ok(1.0, 2.0, 0.1, "node-1", "old-1");
  if (migrated) {
    b.event(2.0, EventKind::migration_started, "");
    b.event(2.2, EventKind::migration_finished, "");
  }
  b.request(2.5, 2.51, Outcome::http_5xx, Connection::reused, "node-1", "old-1");
  b.request(2.6, 2.61, Outcome::http_5xx, Connection::reused, "node-1", "old-1");
  b.ok(3.6, 4.0, 0.1, "node-1", "new-1");
  record::RunRecord run = b.build();
  for (record::Event& e : run.events) {
    if (e.kind == EventKind::pod_created) {
      e.version = e.pod == "old-1" ? "A" : "B";
    } else if (e.kind == EventKind::migration_started) {
      e.detail = "psql -f V2.sql: ALTER TABLE items RENAME COLUMN name TO title;";
    } else if (e.kind == EventKind::migration_finished) {
      e.exit_code = 0;
      e.detail = "exit code 0: ALTER TABLE";
    }
  }
  for (record::RequestRecord& r : run.requests) {
    if (r.failed) {
      r.status = 500;
      r.body = kDbError;
    }
  }
  return run;
}

TEST(SchemaRace, OldVersionErrorsAfterTheMigrationNameItWithTheDatabaseError) {
  Diagnosis d = diagnose(schema_run(true), {});
  ASSERT_EQ(d.holes.size(), 1u);
  const HoleSummary& h = d.holes.front();
  EXPECT_EQ(h.hole, Hole::schema_race);
  EXPECT_EQ(h.requests, 2u);
  EXPECT_EQ(h.pods, std::vector<std::string>{"old-1"});
  EXPECT_NE(h.evidence.find("2 requests on pod old-1 of version A (./app --app-version 1) after "
                            "the migration began"),
            std::string::npos)
      << h.evidence;
  EXPECT_NE(h.evidence.find("ALTER TABLE items RENAME COLUMN name TO title;` ran from 2.00 s to "
                            "2.20 s (exit code 0: ALTER TABLE)"),
            std::string::npos)
      << h.evidence;
  EXPECT_NE(h.evidence.find(kDbError), std::string::npos) << h.evidence;
  EXPECT_NE(h.fix.summary.find("expand/contract"), std::string::npos);
  EXPECT_EQ(d.verdict, Verdict::fail);
}

TEST(SchemaRace, WithoutAMigrationTheSameErrorsAreNotASchemaRace) {
  Diagnosis d = diagnose(schema_run(false), {});
  ASSERT_FALSE(d.holes.empty());
  for (const HoleSummary& h : d.holes) {
    EXPECT_NE(h.hole, Hole::schema_race);
  }
}

TEST(SchemaRace, NewVersionErrorsBeforeTheMigrationEnded) {
  RunBuilder b;
  b.pod("old-1", 0.1, 0.5).pod("new-1", 1.0, 1.5);
  b.event(3.0, EventKind::migration_started, "").event(3.4, EventKind::migration_finished, "");
  b.request(2.0, 2.01, Outcome::http_5xx, Connection::reused, "node-1", "new-1");
  b.request(2.1, 2.11, Outcome::http_5xx, Connection::reused, "node-1", "old-1");  // A, before
  b.request(3.5, 3.51, Outcome::http_5xx, Connection::reused, "node-1", "new-1");  // B, after
  record::RunRecord run = b.build();
  for (record::Event& e : run.events) {
    e.version = e.kind == EventKind::pod_created ? (e.pod == "old-1" ? "A" : "B") : "";
  }
  for (record::RequestRecord& r : run.requests) {
    r.status = 500;
  }
  Diagnosis d = diagnose(run, {});
  ASSERT_EQ(d.failures.size(), 3u);
  EXPECT_EQ(d.failures[0].hole, Hole::schema_race);
  EXPECT_NE(d.failures[0].reason.find("new version (B) and answered 500 before the migration "
                                      "ended at 3.40 s"),
            std::string::npos)
      << d.failures[0].reason;
  EXPECT_NE(d.failures[1].hole, Hole::schema_race);
  EXPECT_NE(d.failures[2].hole, Hole::schema_race);
}

TEST(SchemaRace, EachVersionsOwnErrorIsQuoted) {
  RunBuilder b;
  b.pod("old-1", 0.1, 0.5).pod("new-1", 1.0, 1.5);
  b.event(2.0, EventKind::migration_started, "").event(4.0, EventKind::migration_finished, "");
  b.request(2.5, 2.51, Outcome::http_5xx, Connection::reused, "node-1", "old-1");  // A, after
  b.request(3.0, 3.01, Outcome::http_5xx, Connection::reused, "node-1", "new-1");  // B, before
  record::RunRecord run = b.build();
  for (record::Event& e : run.events) {
    e.version = e.kind == EventKind::pod_created ? (e.pod == "old-1" ? "A" : "B") : "";
  }
  for (record::RequestRecord& r : run.requests) {
    r.status = 500;
    r.body = r.backend == "old-1" ? "no column name" : "no column title";
  }
  Diagnosis d = diagnose(run, {});
  ASSERT_EQ(d.holes.size(), 1u);
  const std::string& evidence = d.holes.front().evidence;
  EXPECT_NE(evidence.find("version A answered: \"no column name\""), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("version B answered: \"no column title\""), std::string::npos)
      << evidence;
}

}  // namespace
}  // namespace zerodrop::diagnose
