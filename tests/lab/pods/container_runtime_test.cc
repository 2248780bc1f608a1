#include "lab/pods/container_runtime.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::lab {
namespace {

using Words = std::vector<std::string>;

TEST(ContainerArgv, FollowsKubernetesCommandAndArgsRule) {
  ImageConfig image{{"/entry", "-x"}, {"serve", "--port", "80"}, ""};
  EXPECT_EQ(container_argv(image, "app:1", {}, {}),
            (Words{"/entry", "-x", "serve", "--port", "80"}));
  EXPECT_EQ(container_argv(image, "app:1", {}, {"run"}), (Words{"/entry", "-x", "run"}))
      << "args replace CMD only";
  EXPECT_EQ(container_argv(image, "app:1", {"/bin/other"}, {}), (Words{"/bin/other"}))
      << "a command drops the image's CMD too";
  EXPECT_EQ(container_argv(image, "app:1", {"/bin/other"}, {"a"}), (Words{"/bin/other", "a"}));
}

TEST(ContainerArgv, NamesTheImageWhenNothingIsLeftToRun) {
  try {
    container_argv(ImageConfig{}, "empty:1", {}, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "image 'empty:1' has no ENTRYPOINT or CMD and the container gives no command");
  }
}

TEST(ExpandEnvRefs, ReplacesKnownVariablesAsKubeletDoes) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"POD_IP", "127.20.0.1"}, {"PORT", "8080"}, {"PORT", "9090"}};
  EXPECT_EQ(expand_env_refs("$(POD_IP):$(PORT)", env), "127.20.0.1:9090") << "the last one wins";
  EXPECT_EQ(expand_env_refs("$(MISSING) $$(PORT) $ $(", env), "$(MISSING) $(PORT) $ $(");
}

TEST(RuntimeKind, ParsesOnlyKnownRuntimes) {
  EXPECT_EQ(parse_runtime("podman", "--runtime"), RuntimeKind::podman);
  EXPECT_EQ(parse_runtime("docker", "--runtime"), RuntimeKind::docker);
  EXPECT_THROW(parse_runtime("crio", "--runtime"), Error);
}

}  // namespace
}  // namespace zerodrop::lab
