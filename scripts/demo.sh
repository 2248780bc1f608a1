#!/usr/bin/env bash
# make demo: naive, close-listener and graceful rolled out side by side in the lab (under a
# minute): the first two drop requests, graceful with a preStop sleep drops none.
set -euo pipefail
bin=${1:-build/zerodrop}
exec "$bin" lab --demo
