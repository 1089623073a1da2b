# The two commands: `make demo` and `make test`. Everything else is a helper.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# profile-guided optimization of the engine library: the first configure of $(BUILD) records a profile with an
# instrumented build (scripts/pgo-train.sh, a few minutes) and configures $(BUILD) to optimize with it. PGO=0: without
PGO ?= 1
PGO_DIR := $(abspath $(BUILD))/pgo-profile

.PHONY: all deps configure build demo test bench clean

all: build

deps:
	@./scripts/install-deps.sh

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
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench: build
	@./scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
