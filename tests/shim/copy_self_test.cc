#include "shim/copy_self.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::shim {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the test's temporary directory, removed at the end.
struct TempDir {
  fs::path path;

  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "copy-self-test.XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }

  ~TempDir() { fs::remove_all(path); }
};

TEST(CopySelf, CopiesTheRunningExecutableWholeAndExecutable) {
  TempDir dir;
  fs::path copy = copy_self(dir.path);
  EXPECT_EQ(copy, dir.path / "zerodrop");
  EXPECT_EQ(fs::file_size(copy), fs::file_size("/proc/self/exe"));

  struct stat st {};

  ASSERT_EQ(::stat(copy.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST(CopySelf, ReplacesAnEarlierCopyAndLeavesNoTemporaryFile) {
  TempDir dir;
  {
    std::FILE* old = std::fopen((dir.path / "zerodrop").c_str(), "w");
    std::fclose(old);
  }
  copy_self(dir.path);
  EXPECT_EQ(fs::file_size(dir.path / "zerodrop"), fs::file_size("/proc/self/exe"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
}

TEST(CopySelf, NamesTheFolderItCannotUse) {
  TempDir dir;
  try {
    copy_self(dir.path / "missing");
    FAIL() << "no error for a missing folder";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot copy into " + (dir.path / "missing").string()
                                         + ": No such file or directory");
  }
  EXPECT_THROW(copy_self("/proc/self/exe"), Error);  // a file, not a folder
}

}  // namespace
}  // namespace zerodrop::shim
