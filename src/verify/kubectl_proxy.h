#pragma once

#include <string>
#include <vector>

#include "base/duration.h"
#include "base/subprocess.h"

namespace zerodrop::verify {

// How to reach the cluster: kubectl and the kubeconfig flags it is given.
struct KubectlOptions {
  std::string kubectl = "kubectl";  // a path, or a name searched in PATH
  std::string kubeconfig;           // --kubeconfig, "" = kubectl's default (KUBECONFIG, ~/.kube)
  std::string context;              // --context, "" = the current one
  Duration start_timeout = std::chrono::seconds(10);
};

// `kubectl proxy --unix-socket` as a child in a private (0700) folder: every kubeconfig auth
// (certificates, tokens, exec plugins) works unchanged and no TCP port exposes the user's
// credentials. The child cannot outlive this process (Subprocess: a keeper with
// PR_SET_PDEATHSIG, even on SIGKILL); the destructor stops it and removes the folder.
class KubectlProxy {
public:
  // Starts the proxy and waits until its socket answers. Throws Error naming what is missing:
  // kubectl not found, or kubectl's own words when it exits (a bad kubeconfig or context).
  explicit KubectlProxy(const KubectlOptions& options);
  ~KubectlProxy();
  KubectlProxy(const KubectlProxy&) = delete;
  KubectlProxy& operator=(const KubectlProxy&) = delete;

  const std::string& socket_path() const { return socket_; }

  const std::string& folder() const { return folder_; }

  // Whether the child still runs (a proxy that died mid-run ends the watches).
  bool running();
  // kubectl's stderr so far, last line first trimmed: for error messages.
  std::string last_error() const;

private:
  std::string folder_;
  std::string socket_;
  std::string log_;
  Subprocess child_;
};

// The kubectl to run: `flag` when given, else $KUBECTL_PATH (set by kubectl for its plugins),
// else "kubectl". Throws Error naming Debian's kubernetes-client package when it is not found.
std::string find_kubectl(const std::string& flag);

}  // namespace zerodrop::verify
