// SQL migrations in the audit: each rule on the statement that breaks the version still running,
// nothing on the steps of an expand/contract sequence, positions as editors show them.
#include "audit/migration.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "audit/rule.h"

namespace zerodrop::audit {
namespace {

std::vector<std::string> rules_of(std::string_view sql) {
  std::vector<std::string> out;
  for (const Finding& f : audit_migration("m.sql", sql)) {
    out.emplace_back(f.rule);
  }
  return out;
}

using Rules = std::vector<std::string>;

struct Case {
  const char* sql;
  Rules rules;
};

TEST(Migration, EachUnsafeStatementHasItsRule) {
  const Case cases[] = {
      {"ALTER TABLE users DROP COLUMN name;", {"sql-drop-column"}},
      {"DROP TABLE users;", {"sql-drop-table"}},
      {"DROP TABLE IF EXISTS app.users, app.orders;", {"sql-drop-table", "sql-drop-table"}},
      {"ALTER TABLE users RENAME COLUMN name TO full_name;", {"sql-rename-column"}},
      {"ALTER TABLE users RENAME TO people;", {"sql-rename-table"}},
      {"ALTER TABLE users ADD COLUMN email text NOT NULL;", {"sql-add-column-not-null"}},
      {"ALTER TABLE users ALTER COLUMN id TYPE bigint;", {"sql-alter-column-type"}},
      {"ALTER TABLE users ALTER COLUMN email SET NOT NULL;", {"sql-set-not-null"}},
      {"ALTER TABLE users ADD CONSTRAINT positive CHECK (id > 0);", {"sql-constraint-validated"}},
      {"ALTER TABLE o ADD CONSTRAINT fk FOREIGN KEY (u) REFERENCES users (id);",
       {"sql-constraint-validated"}},
      {"ALTER TABLE users ADD UNIQUE (email);", {"sql-locking-index"}},
      {"ALTER TABLE users ADD PRIMARY KEY (id);", {"sql-locking-index"}},
      {"CREATE INDEX users_email ON users (email);", {"sql-locking-index"}},
      {"CREATE UNIQUE INDEX users_email ON users (email);", {"sql-locking-index"}},
      {"DROP INDEX users_email;", {"sql-locking-index"}},
      {"REINDEX TABLE users;", {"sql-locking-index"}},
      {"VACUUM FULL users;", {"sql-table-rewrite"}},
      {"ALTER TABLE users ADD COLUMN n bigint GENERATED ALWAYS AS IDENTITY;",
       {"sql-table-rewrite"}},
      {"ALTER TABLE users ADD COLUMN n bigserial;", {"sql-table-rewrite"}},
      {"ALTER TABLE users ADD COLUMN u uuid DEFAULT gen_random_uuid();", {"sql-table-rewrite"}},
      {"ALTER TABLE users ADD COLUMN u uuid NOT NULL;", {"sql-add-column-not-null"}},
      {"CLUSTER users USING users_pkey;", {"sql-table-rewrite"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(rules_of(c.sql), c.rules) << c.sql;
  }
}

TEST(Migration, SafeStepsPass) {
  const char* safe[] = {
      "ALTER TABLE users ADD COLUMN email text;",
      "ALTER TABLE users ADD COLUMN active boolean NOT NULL DEFAULT true;",
      "ALTER TABLE users ADD COLUMN created timestamptz NOT NULL DEFAULT now();",
      "ALTER TABLE users ADD CONSTRAINT positive CHECK (id > 0) NOT VALID;",
      "ALTER TABLE users VALIDATE CONSTRAINT positive;",
      "ALTER TABLE o ADD CONSTRAINT fk FOREIGN KEY (u) REFERENCES users (id) NOT VALID;",
      "ALTER TABLE users ADD CONSTRAINT users_email UNIQUE USING INDEX users_email;",
      "CREATE INDEX CONCURRENTLY users_email ON users (email);",
      "DROP INDEX CONCURRENTLY users_email;",
      "REINDEX TABLE CONCURRENTLY users;",
      "ALTER TABLE users ALTER COLUMN email DROP NOT NULL;",
      "ALTER TABLE users ALTER COLUMN email SET DEFAULT '';",
      "UPDATE users SET full_name = name WHERE full_name IS NULL;",
      "VACUUM users;",
      "CREATE VIEW people AS SELECT * FROM users;",
  };
  for (const char* sql : safe) {
    EXPECT_EQ(rules_of(sql), Rules{}) << sql;
  }
}

TEST(Migration, TablesCreatedInTheSameFileAreNotInUseYet) {
  EXPECT_EQ(rules_of("CREATE TABLE t (id int, name text);\n"
                     "CREATE INDEX t_name ON t (name);\n"
                     "ALTER TABLE t ADD COLUMN email text NOT NULL;\n"
                     "ALTER TABLE t RENAME COLUMN name TO full_name;\n"
                     "ALTER TABLE t ALTER COLUMN id TYPE bigint;\n"),
            Rules{});
  // Schema-qualified names are distinct tables.
  EXPECT_EQ(rules_of("CREATE TABLE a.t (id int); CREATE INDEX i ON b.t (id);"),
            Rules{"sql-locking-index"});
}

TEST(Migration, FindingsSayWhereWhatAndTheSequenceThatReplacesIt) {
  std::vector<Finding> f =
      audit_migration("V2__rename.sql",
                      "-- release 2\n\nBEGIN;\n  ALTER TABLE app.users\n    RENAME COLUMN name TO "
                      "full_name;\nCOMMIT;\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].file, "V2__rename.sql");
  EXPECT_EQ(f[0].mark.line, 4);
  EXPECT_EQ(f[0].mark.column, 3);
  EXPECT_EQ(f[0].object.kind, "Table");
  EXPECT_EQ(f[0].object.name, "app.users");
  EXPECT_EQ(f[0].hole, record::Hole::schema_race);
  EXPECT_EQ(f[0].severity, Severity::error);
  EXPECT_NE(f[0].message.find("name TO full_name"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].fix.find("expand/contract"), std::string::npos) << f[0].fix;
}

TEST(Migration, IgnoreCommentsNameRulesOrHolesForOneStatement) {
  EXPECT_EQ(rules_of("-- zerodrop:ignore sql-drop-column (release 3 no longer reads it)\n"
                     "ALTER TABLE users DROP COLUMN name;\n"
                     "ALTER TABLE users DROP COLUMN age;\n"),
            Rules{"sql-drop-column"});
  EXPECT_EQ(rules_of("/* zerodrop:ignore capacity-dip */ CREATE INDEX i ON t (a);"), Rules{});
  EXPECT_EQ(rules_of("-- zerodrop:ignore sql-drop-table\nCREATE INDEX i ON t (a);"),
            Rules{"sql-locking-index"});
}

TEST(Migration, UnparsableSqlIsOneFindingAtTheParsersPosition) {
  std::vector<Finding> f = audit_migration("bad.sql", "SELECT 1;\nALTER TABL users;\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, rule_id::kInvalidMigration);
  EXPECT_EQ(f[0].mark.line, 2);
  EXPECT_EQ(f[0].mark.column, 7);
  EXPECT_NE(f[0].message.find("syntax error"), std::string::npos) << f[0].message;
  EXPECT_EQ(rules_of(""), Rules{});
  std::vector<Finding> nul = audit_migration("nul.sql", std::string("SELECT 1;\n\0", 11));
  ASSERT_EQ(nul.size(), 1u);
  EXPECT_EQ(nul[0].mark.line, 2);
}

TEST(Migration, FilesSortAsTheToolsApplyThem) {
  std::vector<std::string> files = {"m/V10__c.sql", "m/R__views.sql", "m/V2__b.sql",
                                    "m/V1.1__a.sql", "m/V1__a.sql"};
  sort_migrations(files);
  EXPECT_EQ(files, (std::vector<std::string>{"m/V1__a.sql", "m/V1.1__a.sql", "m/V2__b.sql",
                                             "m/V10__c.sql", "m/R__views.sql"}));
  std::vector<std::string> golang = {"20240110_b.up.sql", "9_a.up.sql", "20240101_a.up.sql"};
  sort_migrations(golang);
  EXPECT_EQ(golang,
            (std::vector<std::string>{"9_a.up.sql", "20240101_a.up.sql", "20240110_b.up.sql"}));
  EXPECT_TRUE(is_migration_file("db/V1__init.sql"));
  EXPECT_TRUE(is_migration_file("db/1_init.up.sql"));
  EXPECT_FALSE(is_migration_file("db/1_init.down.sql"));
  EXPECT_FALSE(is_migration_file("db/U1__init.sql"));
  EXPECT_FALSE(is_migration_file("db/init.yaml"));
}

TEST(Migration, EveryRuleIsInTheCatalogue) {
  for (std::string_view id :
       {rule_id::kSqlDropColumn, rule_id::kSqlDropTable, rule_id::kSqlRenameColumn,
        rule_id::kSqlRenameTable, rule_id::kSqlAddColumnNotNull, rule_id::kSqlAlterColumnType,
        rule_id::kSqlSetNotNull, rule_id::kSqlConstraintValidated, rule_id::kSqlLockingIndex,
        rule_id::kSqlTableRewrite, rule_id::kInvalidMigration}) {
    EXPECT_NE(find_rule(id), nullptr) << id;
  }
}

}  // namespace
}  // namespace zerodrop::audit
