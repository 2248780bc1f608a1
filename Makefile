# The two commands a new user needs (README):  make demo   and   make test
# Both install what is missing (scripts/setup.sh, apt-get as root), configure and build.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
# Unity builds: CMake compiles each target's sources in batches of up to 8, so the Asio, Beast,
# JSON and GoogleTest headers are compiled once per batch rather than once per file (see "Build
# time" in docs/ARCHITECTURE.md). UNITY=OFF for a build where an edit recompiles only its file.
UNITY      ?= ON

.PHONY: all deps test-deps bench-deps build build-asan demo image test test-unit test-slow test-asan bench install format check-includes clean

all: build

deps:
	@scripts/setup.sh build

test-deps:
	@scripts/setup.sh test

bench-deps:
	@scripts/setup.sh bench

# The optimised build is the release build: zerodrop and graceful static, for images FROM scratch.
# Both builds (and so CI, which runs make test) treat compiler warnings as errors. Its debug info
# is -g1 (line tables and function names: backtraces and profiles keep file:line, a debugger loses
# locals and parameters), 14 % less CPU per file than -g; see "Build time" in docs/ARCHITECTURE.md.
# It compiles with clang (RELEASE_CXX, default clang++; scripts/setup.sh build installs it), as the
# sanitized build does: with the precompiled headers (cmake/precompiled_headers.cmake, clang only)
# what make test builds here took 375 s of CPU against 580 s with g++ 12 (-35 %), and the tests
# run the code of the compiler the unit tests ran. RELEASE_CXX=g++ for a g++ build; a configured
# $(BUILD) keeps its compiler until it is removed.
RELEASE_CXX ?= clang++
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DZERODROP_STATIC=ON \
	  -DCMAKE_CXX_COMPILER=$(RELEASE_CXX) -DZERODROP_WERROR=ON -DCMAKE_UNITY_BUILD=$(UNITY) \
	  $(CMAKE_ARGS)

# The sanitized build compiles with clang too (scripts/setup.sh test adds its sanitizer runtime):
# at -O0 it costs about half g++ 12's CPU per file, and its sanitized processes start in half the
# time. ASAN_CXX=g++ for a sanitized build with g++ (see "Build time" in
# docs/ARCHITECTURE.md); a configured $(ASAN_BUILD) keeps its compiler until it is removed. Its
# debug info is -g1 too (line tables: a sanitizer's report keeps every frame's file:line, inlined
# ones included), 16 % less CPU per file than -g; a Debug build is the one to step through.
ASAN_CXX   ?= clang++
$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
	  -DZERODROP_SANITIZE=ON \
	  -DCMAKE_CXX_COMPILER=$(ASAN_CXX) -DZERODROP_BENCH=OFF -DZERODROP_WERROR=ON \
	  -DCMAKE_UNITY_BUILD=$(UNITY) $(CMAKE_ARGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: test-deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The main job on a built-in default: builds only what it runs (the binary and three examples).
demo: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target zerodrop naive close-listener graceful
	scripts/demo.sh $(BUILD)/zerodrop

# The release images FROM scratch (zerodrop; graceful) as OCI archives in $(BUILD), built offline
# with podman from the static binaries: podman load / docker load / kind load image-archive.
image: build
	scripts/image.sh $(BUILD)

# Every test: the end-to-end tests on the optimised (release) build, then the unit tests and the
# end-to-end tests again under ASan+UBSan (all but the end-to-end tests labelled `timing`, whose
# millisecond ordering an instrumented build skews). The unit tests run only there, where they
# check more (the sanitizers, libstdc++'s assertions, assert()), so the optimised build compiles
# only what the end-to-end tests run (the `e2e_deps` target: all but the unit-test binaries, 28 %
# of its compile); `make test-unit` builds and runs them optimised, one test per case. In the
# sanitized build each unit-test binary is one test, all its cases in one process, as a sanitized
# start costs ~0.3 s of CPU: `BINARY --gtest_filter=Suite.Case` reruns one case.
# Tests labelled `slow` (the whole sim-versus-lab matrix, ~4 min) run with `make test-slow`;
# those labelled `release` (the .deb) test what only the optimised build ships.
# The optimised suite mostly waits (lab runs wait out propagation delays and grace periods), so
# the ASan build compiles meanwhile at idle priority: SCHED_IDLE (chrt, util-linux) runs it only
# on a core no test wants, and a test that wakes up takes the core at once. Then, still at idle
# priority and still beside the optimised suite, its unit tests and its end-to-end tests labelled
# `offline` run (they start no server and time nothing: a starved one only ends later), and once
# the optimised suite ends, whatever of that is left goes back to normal priority where the
# kernel allows it (root, or RLIMIT_NICE), lest other users' work on a shared machine starve it.
# Their output goes to $(ASAN_BUILD)/build.log and $(ASAN_BUILD)/early-tests.log, shown after the
# optimised suite (the build's only if it fails); then the sanitized end-to-end tests that start
# servers run, at normal priority. See "Build time" in docs/ARCHITECTURE.md.
# The tests run one more at a time than JOBS: most of them mostly wait (lab runs wait out
# propagation delays and grace periods). e2e-resources.json (written by cmake) lets at most
# ZERODROP_E2E_LANES end-to-end tests that start servers run at once, three by default, whatever
# -j is (tests/CMakeLists.txt, which says what was measured).
# CMAKE_ARGS=-DZERODROP_E2E_LANES=1 TEST_JOBS=$(JOBS) runs them one at a time.
TEST_JOBS ?= $(shell expr $(JOBS) + 1)
CTEST      = ctest --output-on-failure -j $(TEST_JOBS) --resource-spec-file e2e-resources.json
OPT_CTEST  = cd $(BUILD) && $(CTEST) -LE slow
E2E_CTEST  = cd $(BUILD) && $(CTEST) -L e2e -LE slow
ASAN_ENV   = cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ASAN_CTEST = $(ASAN_ENV) $(CTEST) -LE "slow|timing|release"
# make test runs ASAN_CTEST's tests in two parts: ASAN_EARLY beside the optimised suite, ASAN_LATE
# after it (ctest adds the e2e fixture's setup and cleanup to each).
ASAN_EARLY = $(ASAN_ENV) $(CTEST) -L "unit|offline" -LE "slow|timing|release"
ASAN_LATE  = $(ASAN_ENV) $(CTEST) -LE "slow|timing|release|unit|offline"

test: test-deps $(BUILD)/build.ninja $(ASAN_BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target e2e_deps
	@echo "make: meanwhile at idle priority: the $(ASAN_BUILD) build, then its unit and offline tests (logs: $(ASAN_BUILD)/build.log, $(ASAN_BUILD)/early-tests.log)"
	@rm -f $(ASAN_BUILD)/early-tests.log; \
	chrt --idle 0 sh -c 'ninja -C $(ASAN_BUILD) -j $(JOBS) >$(ASAN_BUILD)/build.log 2>&1 || exit 90; \
	  ( $(ASAN_EARLY) ) >$(ASAN_BUILD)/early-tests.log 2>&1' & early=$$!; \
	status=0; ( $(E2E_CTEST) ) || status=$$?; \
	if [ $$status -ne 0 ]; then pkill -x -P $$early ninja; wait $$early; exit $$status; fi; \
	pids=$$early; while [ -n "$$pids" ]; do \
	  for p in $$pids; do chrt --other -p 0 $$p 2>/dev/null; done; \
	  pids=$$(pgrep -d ' ' -P "$$(echo $$pids | tr ' ' ,)"); \
	done; \
	[ -f $(ASAN_BUILD)/early-tests.log ] || echo "make: $(ASAN_BUILD) is still building (log: $(ASAN_BUILD)/build.log)"; \
	status=0; wait $$early || status=$$?; \
	if [ $$status -eq 90 ]; then cat $(ASAN_BUILD)/build.log; echo "make: error: ASan build failed" >&2; exit 1; fi; \
	echo "make: the sanitized unit and offline tests, run meanwhile:"; cat $(ASAN_BUILD)/early-tests.log; \
	if [ $$status -ne 0 ]; then echo "make: error: sanitized unit or offline tests failed (above)" >&2; exit 1; fi
	$(ASAN_LATE)

test-unit: build
	$(OPT_CTEST)

test-slow: test-deps build
	cd $(BUILD) && ctest --output-on-failure -L slow

test-asan: test-deps build-asan
	$(ASAN_CTEST)

# The binaries, man page, completions, lifecycle headers and docs under PREFIX (README: Installing).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: bench-deps build
	@for b in bench/*.sh; do echo "== $$b"; bash $$b $(BUILD)/zerodrop || exit 1; done

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

# Every source and header compiles on its own (no unity batch, no precompiled header), which the
# two builds above cannot tell: a forgotten #include. In build-includes; 6-10 min on two cores.
check-includes: test-deps
	scripts/check_includes.py build-includes -j $(JOBS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-includes
