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

.PHONY: all deps test-deps bench-deps build build-asan demo test test-unit test-slow test-asan bench install format clean

all: build

deps:
	@scripts/setup.sh build

test-deps:
	@scripts/setup.sh test

bench-deps:
	@scripts/setup.sh bench

# The optimised build is the release build: zerodrop and graceful static, for images FROM scratch.
# Both builds (and so CI, which runs make test) treat compiler warnings as errors.
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZERODROP_STATIC=ON \
	  -DZERODROP_WERROR=ON -DCMAKE_UNITY_BUILD=$(UNITY) $(CMAKE_ARGS)

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DZERODROP_SANITIZE=ON \
	  -DZERODROP_BENCH=OFF -DZERODROP_WERROR=ON -DCMAKE_UNITY_BUILD=$(UNITY) $(CMAKE_ARGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The main job on a built-in default: builds only what it runs (the binary and three examples).
demo: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target zerodrop naive close-listener graceful
	scripts/demo.sh $(BUILD)/zerodrop

# Every test: unit and end-to-end on the optimised build, then again under ASan+UBSan (all but the
# end-to-end tests labelled `timing`, whose millisecond ordering an instrumented build skews).
# Tests labelled `slow` (the whole sim-versus-lab matrix, ~12 min) run with `make test-slow`.
test: test-deps test-unit test-asan

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow

test-slow: test-deps build
	cd $(BUILD) && ctest --output-on-failure -L slow

test-asan: test-deps build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS) -LE "slow|timing"

# The binaries, man page, completions, lifecycle headers and docs under PREFIX (README: Installing).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: bench-deps build
	@for b in bench/*.sh; do echo "== $$b"; bash $$b $(BUILD)/zerodrop || exit 1; done

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
