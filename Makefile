# Makefile: the two commands the README starts with (make run, make test), over CMake in ./build.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
ifeq ($(CI),true)
CMAKE_FLAGS += -DCSN_WERROR=ON
endif

.PHONY: all build run test test-asan test-tsan clean format bench bench-quick

all: build

build:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: the seed's nettest command on 4 local processes.
run: build
	$(BUILD)/tools/csnrun/csnrun -np 4 $(BUILD)/bench/nettest/nettest uK m1 M16 K2 R2 T1000 Ptotal

# The whole benchmark suite (csnbench): raw outputs, results.jsonl and report.html in
# csnbench-results/DATE (BENCH_ARGS: e.g. --mpi, --hosts h1,h2, TESTS).
bench: build
	python3 tools/csnbench/csnbench --build $(BUILD) $(BENCH_ARGS)

bench-quick: build
	python3 tools/csnbench/csnbench --build $(BUILD) --quick $(BENCH_ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan:
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="$(CMAKE_FLAGS) -DCSN_SANITIZER=address,undefined"

test-tsan:
	$(MAKE) test BUILD=build-tsan CMAKE_FLAGS="$(CMAKE_FLAGS) -DCSN_SANITIZER=thread"

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan
