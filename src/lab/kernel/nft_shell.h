#pragma once

#include <string>

#include "base/subprocess.h"

namespace zerodrop::lab {

// Debian's nft kept running as `nft -i` in the namespace of the thread that started it: each
// script is sent as one line, which nft commits as one transaction, and a `describe` after it
// tells when nft is done (its errors, on stderr, come before that answer). A transaction takes
// well under a millisecond this way, where spawning `nft -f -` per change takes 5 to 100 ms on a
// busy machine; libnftables would need no process at all, but the lab's binary is static and
// Debian ships no static libnftables. nft exits when this object closes its input, also when the
// lab is SIGKILLed (its keeper, base/subprocess.h). Not thread-safe.
class NftShell {
public:
  // Throws Error when nft cannot run (naming the package).
  NftShell();
  ~NftShell();
  NftShell(const NftShell&) = delete;
  NftShell& operator=(const NftShell&) = delete;

  // Commits `script` (nft commands, one per line) as one transaction. "" or nft's error.
  std::string commit(const std::string& script);

private:
  Subprocess nft_;
};

}  // namespace zerodrop::lab
