#!/usr/bin/env bash
# make demo: the main job on a built-in default.
set -euo pipefail
bin=${1:-build/zerodrop}
exec "$bin" --help
