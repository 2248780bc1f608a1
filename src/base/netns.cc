#include "base/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace zerodrop {

int own_namespace() {
  return ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
}

bool enter_namespace(int netns) {
  return ::setns(netns, CLONE_NEWNET) == 0;
}

int socket_in_namespace(int netns, int family, int type) {
  int own = own_namespace();
  if (own < 0) {
    return -1;
  }
  int fd = -1;
  if (enter_namespace(netns)) {
    fd = ::socket(family, type | SOCK_CLOEXEC, 0);
    int saved = errno;
    if (!enter_namespace(own)) {
      std::abort();  // a load thread left in a node's namespace would open every socket there
    }
    errno = saved;
  }
  int saved = errno;
  ::close(own);
  errno = saved;
  return fd;
}

}  // namespace zerodrop
