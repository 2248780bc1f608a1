#pragma once

// Network namespaces by descriptor (/proc/.../ns/net): what the lab's nftables nodes are, and
// how a thread works in one. Needs CAP_SYS_ADMIN.

namespace zerodrop {

// A socket(2) of `family` and `type` opened in the network namespace `netns`, close-on-exec;
// the calling thread is back in its own namespace on return. -1 with errno on failure.
int socket_in_namespace(int netns, int family, int type);

// Moves the calling thread into the network namespace `netns` for good (setns). False with errno
// on failure.
bool enter_namespace(int netns);

// A descriptor of the calling thread's network namespace, close-on-exec; -1 with errno.
int own_namespace();

}  // namespace zerodrop
