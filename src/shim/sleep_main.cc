// zerodrop-sleep: `zerodrop sleep` as a tiny static executable with no dependency but libc, for
// images that want a preStop delay without shipping all of zerodrop. Same exit codes.
#include <cstdio>
#include <cstring>

#include "shim/sleep.h"

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf(
        "Usage: zerodrop-sleep DURATION\n"
        "Sleep DURATION (10, 1.5s, 300ms, 2m): a preStop delay for distroless and scratch\n"
        "images, e.g. preStop: exec: command: [\"/zerodrop-sleep\", \"10\"].\n"
        "Exit 0 when done, 128+N when ended by SIGTERM/SIGINT, 2 on bad input.\n");
    return 0;
  }
  auto duration = argc == 2 ? zerodrop::shim::parse_sleep_duration(argv[1]) : std::nullopt;
  if (!duration) {
    std::fprintf(stderr,
                 "zerodrop-sleep: error: expected one duration like 10, 1.5s or 300ms, got '%s'\n",
                 argc >= 2 ? argv[1] : "");
    return 2;
  }
  return zerodrop::shim::sleep_for(*duration);
}
