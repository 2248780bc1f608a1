// The docs' hole tables are written by hand but must say what record::kHoles says: these tests
// fail when a hole is added, renamed, reworded or recoloured in one place and not the other.
#include "record/hole.h"

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zerodrop::record {
namespace {

std::string read_doc(const std::string& relative) {
  std::ifstream in(std::string(ZERODROP_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << "cannot read " << relative;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of the first Markdown table after `heading`, header and separator left out.
std::vector<std::string> table_after(const std::string& text, const std::string& heading) {
  std::vector<std::string> rows;
  size_t at = text.find(heading);
  EXPECT_NE(at, std::string::npos) << "no '" << heading << "'";
  std::istringstream in(text.substr(at == std::string::npos ? text.size() : at));
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with('|')) {
      in_table = true;
      rows.push_back(line);
    } else if (in_table) {
      break;
    }
  }
  return rows.size() < 2 ? std::vector<std::string>{} : std::vector(rows.begin() + 2, rows.end());
}

TEST(Hole, IdsRoundTrip) {
  for (const HoleInfo& h : kHoles) {
    EXPECT_EQ(hole_from_string(h.id), h.hole);
    EXPECT_EQ(to_string(h.hole), h.id);
  }
  EXPECT_FALSE(hole_from_string("no-such-hole"));
}

TEST(Hole, ReadmeTableIsTheHoleTable) {
  std::vector<std::string> rows = table_after(read_doc("README.md"), "## The holes");
  ASSERT_EQ(rows.size(), kHoleCount) << "README.md's hole table has a row per hole";
  for (size_t i = 0; i < kHoleCount; ++i) {
    EXPECT_EQ(rows[i],
              "| `" + std::string(kHoles[i].id) + "` | " + std::string(kHoles[i].meaning) + " |");
  }
}

TEST(Hole, ReportDocListsTheTimelineLetters) {
  std::string letters;
  for (const HoleInfo& h : kHoles) {
    letters += letters.empty() ? "(" : ", ";
    letters += h.letter;
  }
  EXPECT_NE(read_doc("docs/report.md").find("hole's letter for failures " + letters + ")"),
            std::string::npos)
      << "docs/report.md should list the letters " << letters << ")";
}

TEST(Hole, ReportJsonDocListsEveryId) {
  std::string ids;
  for (const HoleInfo& h : kHoles) {
    ids += ids.empty() ? "- `id`: one of `" : "`, `";
    ids += h.id;
  }
  std::string doc = read_doc("docs/report-json.md");
  doc = std::regex_replace(doc, std::regex("\n +"), " ");
  EXPECT_NE(doc.find(ids + "`."), std::string::npos) << "docs/report-json.md should say " << ids;
}

TEST(Hole, ManPageListsEveryHole) {
  std::string page = read_doc("docs/zerodrop.1");
  std::string holes;
  for (const HoleInfo& h : kHoles) {
    holes += ".TP\n.B " + std::string(h.id) + "\n" + std::string(h.meaning) + "\n";
  }
  EXPECT_NE(page.find(".SH HOLES\nEvery report, audit rule and diagnosis names failures with these "
                      "ids:\n"
                      + holes + ".SH"),
            std::string::npos)
      << "docs/zerodrop.1's HOLES section should be:\n"
      << holes;
}

TEST(Hole, AuditRulesTableNamesOnlyKnownHoles) {
  std::vector<std::string> rows = table_after(read_doc("docs/audit.md"), "## Rules");
  ASSERT_FALSE(rows.empty());
  const std::regex hole_column(R"(^\| `[a-z-]+` \| ([^|]+) \|)");
  for (const std::string& row : rows) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(row, m, hole_column)) << row;
    std::string hole = m[1].str();
    hole.erase(hole.find_last_not_of(' ') + 1);
    EXPECT_TRUE(hole == "—" || hole_from_string(hole)) << "unknown hole '" << hole << "'";
  }
}

}  // namespace
}  // namespace zerodrop::record
