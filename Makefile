# The two commands: `make demo` and `make test`. Everything else is a helper.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# PGO=1: optimize the engine library with a GCC profile that an instrumented build records first (scripts/pgo-train.sh,
# a few minutes). Off by default; `make bench` always builds with it, in its own build directory $(BENCH_BUILD), so
# its numbers compare with docs/performance.md and $(BUILD) stays a plain build.
PGO ?= 0
BENCH_BUILD ?= build-pgo
PGO_DIR := $(abspath $(BUILD))/pgo-profile
PGO_MODE := $(if $(filter 1,$(PGO)),USE,OFF)
# how $(BUILD) was configured: asking for another PGO mode configures it again
PGO_CONFIGURED := $(shell sed -n 's/^TG_PGO:STRING=//p' $(BUILD)/CMakeCache.txt 2>/dev/null)

.PHONY: all deps configure build demo test bench clean

all: build

deps:
	@./scripts/install-deps.sh

ifneq ($(PGO_CONFIGURED),$(PGO_MODE))
.PHONY: $(BUILD)/build.ninja
endif
$(BUILD)/build.ninja: | deps
ifeq ($(PGO),1)
	@./scripts/pgo-train.sh $(BUILD) $(PGO_DIR) $(JOBS)
	cmake -S . -B $(BUILD) -G Ninja -DTG_PGO=USE -DTG_PGO_DIR=$(PGO_DIR) $(CMAKE_FLAGS)
else
	cmake -S . -B $(BUILD) -G Ninja -DTG_PGO=OFF $(CMAKE_FLAGS)
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

# the benchmarks need no tests: a first configure of $(BENCH_BUILD) leaves them out
bench:
	@$(MAKE) --no-print-directory build BUILD=$(BENCH_BUILD) PGO=1 CMAKE_FLAGS="-DTG_BUILD_TESTS=OFF $(CMAKE_FLAGS)"
	@./scripts/bench.sh $(BENCH_BUILD)

clean:
	rm -rf $(BUILD)
