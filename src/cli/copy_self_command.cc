#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "shim/copy_self.h"

namespace zerodrop::cli {

Runner setup_copy_self(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  app.add_option("DIR", *dir,
                 "an existing folder, e.g. a shared emptyDir; the copy is DIR/zerodrop")
      ->required();
  app.footer(R"(
Copies this static zerodrop into DIR (a temporary file there, synced, mode 0755, then renamed:
a reader never sees half a binary) and prints the copy's path. It is how `zerodrop sleep` gets
into an image that has no sleep and no shell (distroless, FROM scratch) on Kubernetes < 1.30:
the zerodrop image has no cp either, so the binary copies itself. Exits 2 with the folder named
when DIR is missing or not writable.

Example, in a pod spec (zerodrop audit --fix --k8s-version 1.29 prints this for your workload):
  volumes: [{name: zerodrop, emptyDir: {}}]
  initContainers:
    - name: zerodrop-copy
      image: ZERODROP_IMAGE    # deploy/Dockerfile --target zerodrop: the binary at /zerodrop
      command: ["/zerodrop", "copy-self", "/target"]
      volumeMounts: [{name: zerodrop, mountPath: /target}]
  containers:
    - name: app
      volumeMounts: [{name: zerodrop, mountPath: /zerodrop}]
      lifecycle: {preStop: {exec: {command: ["/zerodrop/zerodrop", "sleep", "5"]}}})");
  return [dir]() -> int {
    std::printf("%s\n", shim::copy_self(*dir).c_str());
    return 0;
  };
}

}  // namespace zerodrop::cli
