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

TEST(Migration, TypeChangesAreJudgedAgainstTheOldTypeFromEarlierFiles) {
  SchemaHistory history;
  EXPECT_TRUE(audit_migration("1.sql",
                              "CREATE TABLE t (v varchar(64), n serial, p numeric(10,2), s text,"
                              " at timestamp(3), d text);",
                              history)
                  .empty());
  auto rules = [&](const char* sql) {
    std::vector<std::string> out;
    for (const Finding& f : audit_migration("2.sql", sql, history)) {
      out.emplace_back(f.rule);
    }
    return out;
  };
  // Catalog-only widenings: every value the running version writes fits, nothing rewritten.
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN v TYPE varchar(256);"), Rules{});
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN v TYPE text;"), Rules{});
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN p TYPE numeric(14,2);"), Rules{});
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN at TYPE timestamp;"), Rules{});
  // The values fit but the table is rewritten: a capacity dip, not a schema race.
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN n TYPE bigint;"), Rules{"sql-table-rewrite"});
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN p TYPE numeric(16,4);"), Rules{"sql-table-rewrite"});
  // Narrowing, another family, a conversion, or an old type no file declared: a schema race.
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN v TYPE varchar(16);"),
            Rules{"sql-alter-column-type"});
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN s TYPE int USING s::int;"),
            Rules{"sql-alter-column-type"});
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN p TYPE numeric(9,2);"),
            Rules{"sql-alter-column-type"});
  std::vector<Finding> unknown =
      audit_migration("3.sql", "ALTER TABLE other ALTER COLUMN v TYPE text;", history);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_NE(unknown[0].message.find("audit the whole folder"), std::string::npos)
      << unknown[0].message;
  // A domain is judged by its base type; one with constraints checks every row.
  audit_migration("d.sql",
                  "CREATE DOMAIN name_text AS text CHECK (length(value) > 0);"
                  "CREATE DOMAIN any_text AS text;",
                  history);
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN d TYPE any_text;"), Rules{});
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN d TYPE name_text;"),
            Rules{"sql-constraint-validated"});
  EXPECT_EQ(rules("ALTER TABLE t ALTER COLUMN d TYPE text;"), Rules{});
  // The history follows every change and rename: the column keeps its last type.
  EXPECT_EQ(rules("ALTER TABLE t RENAME COLUMN v TO w;"), Rules{"sql-rename-column"});
  std::vector<Finding> moved =
      audit_migration("4.sql", "ALTER TABLE t ALTER COLUMN w TYPE varchar(8);", history);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_NE(moved[0].message.find("(was varchar(16))"), std::string::npos) << moved[0].message;
}

TEST(Migration, ATableSwapKeepsTheNameTheRunningVersionUses) {
  // Rename away, create anew under the old name, copy, drop the copy: the running version's
  // name never disappears, and no version knew the backup's name.
  EXPECT_EQ(rules_of("ALTER TABLE t RENAME TO t_old;\n"
                     "CREATE TABLE t (id bigint, name text);\n"
                     "INSERT INTO t SELECT id, name FROM t_old;\n"
                     "CREATE INDEX t_old_name ON t_old (name);\n"
                     "DROP TABLE t_old;\n"),
            Rules{});
  EXPECT_EQ(rules_of("ALTER TABLE t RENAME TO t2; DROP TABLE t2;"), Rules{"sql-rename-table"});
  EXPECT_EQ(rules_of("ALTER TABLE t RENAME TO t2; CREATE VIEW t AS SELECT * FROM t2;"), Rules{});
  EXPECT_EQ(rules_of("ALTER TABLE t RENAME TO t2; CREATE TABLE t AS SELECT id FROM t2;"
                     "ALTER TABLE t ALTER COLUMN id SET NOT NULL;"),
            Rules{});
  // The backup of a swap may be dropped by a later release; a renamed table that the new
  // version reads may not.
  SchemaHistory history;
  audit_migration("1.sql", "ALTER TABLE a RENAME TO a_bkp; CREATE TABLE a (id int);", history);
  audit_migration("2.sql", "ALTER TABLE b RENAME TO b2; CREATE TABLE x (id int);", history);
  std::vector<Finding> later =
      audit_migration("3.sql", "DROP TABLE a_bkp; DROP TABLE b2; DROP TABLE a;", history);
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0].object.name, "b2");
  EXPECT_EQ(later[1].object.name, "a");
}

TEST(Migration, GoTemplateActionsAreReadAsNames) {
  std::vector<Finding> f = audit_migration("1_add.up.sql",
                                           "ALTER TABLE {{ index .Options \"Namespace\" }}.users\n"
                                           "  ADD COLUMN phone text NOT NULL;\n"
                                           "CREATE INDEX i ON {{ .Schema }}.users (phone);\n");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, rule_id::kSqlAddColumnNotNull);
  EXPECT_NE(f[0].message.find("{{ index .Options \"Namespace\" }}.users.phone"), std::string::npos)
      << f[0].message;
  EXPECT_EQ(f[1].mark.line, 3);
  EXPECT_NE(f[1].message.find("on {{ .Schema }}.users"), std::string::npos) << f[1].message;
  std::vector<Finding> broken =
      audit_migration("2.up.sql", "{{ if .X }}ALTER TABLE t ADD COLUMN c int{{ end }};");
  ASSERT_EQ(broken.size(), 1u);
  EXPECT_EQ(broken[0].rule, rule_id::kInvalidMigration);
  EXPECT_NE(broken[0].message.find("Go template"), std::string::npos) << broken[0].message;
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
