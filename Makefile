# The two commands: `make demo` and `make test`. Everything else is a helper.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# profile-guided optimization of the engine library, when asked (PGO=1, and always for `make bench`): the first
# configure of $(BUILD) records a profile with an instrumented build (scripts/pgo-train.sh, a few minutes) and
# configures $(BUILD) to optimize with it (schedule + codegen ~5% faster). `make` and `make test` build without it.
PGO ?= 0
# the benchmarks' build directory: always with the profile, so numbers compare with docs/performance.md
BENCH_BUILD ?= build-pgo
PGO_DIR := $(abspath $(BUILD))/pgo-profile
# build/ (make, make demo, make test) leaves out the benchmarks: make bench builds them in $(BENCH_BUILD)
BUILD_FLAGS ?= -DTG_BUILD_BENCH=OFF

.PHONY: all deps configure build demo test bench sanitize clean

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
ifeq ($(PGO),1)
	@./scripts/pgo-train.sh $(BUILD) $(PGO_DIR) $(JOBS)
	cmake -S . -B $(BUILD) -G Ninja -DTG_PGO=USE -DTG_PGO_DIR=$(PGO_DIR) $(BUILD_FLAGS) $(CMAKE_FLAGS)
else
	cmake -S . -B $(BUILD) -G Ninja -DTG_PGO=OFF $(BUILD_FLAGS) $(CMAKE_FLAGS)
endif

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@./scripts/demo.sh $(BUILD)

test: build
	@if grep -q '^TG_BUILD_TESTS:BOOL=OFF' $(BUILD)/CMakeCache.txt; then \
	  echo "make test: $(BUILD) is configured with TG_BUILD_TESTS=OFF, so no tests are built; configure it with" \
	       "-DTG_BUILD_TESTS=ON (needs GoogleTest, libgtest-dev) or use another BUILD directory" >&2; exit 1; fi
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench:
	@./scripts/install-deps.sh --bench
	@$(MAKE) --no-print-directory build BUILD=$(BENCH_BUILD) PGO=1 BUILD_FLAGS="-DTG_BUILD_TESTS=OFF"
	@./scripts/bench.sh $(BENCH_BUILD)

# ASan + UBSan over the unit, parity and viz tests (build-asan), then the recorder's multi-threaded tests under TSan
# (build-tsan). Any report fails the run. Leak checking is off: LLVM's JIT and the process-lifetime caches are freed
# by the OS at exit on purpose. Neither builds the GUI or the benchmarks.
SAN_LABELS ?= unit|parity|viz
sanitize: deps
	cmake -S . -B build-asan -G Ninja -DTG_PGO=OFF -DTG_SANITIZE=address,undefined -DTG_BUILD_GUI=OFF -DTG_BUILD_BENCH=OFF \
	  $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan --output-on-failure -j $(JOBS) -L '$(SAN_LABELS)'
	cmake -S . -B build-tsan -G Ninja -DTG_PGO=OFF -DTG_SANITIZE=thread -DTG_BUILD_GUI=OFF -DTG_BUILD_BENCH=OFF \
	  $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS) --target test_recorder test_kernel_trace test_parallel_codegen test_uop
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir build-tsan --output-on-failure -j $(JOBS) \
	  -R '^(Recorder|MatchStats|KernelTrace|ParallelCodegen|ParallelFor|UOpCore)'

clean:
	rm -rf $(BUILD)
