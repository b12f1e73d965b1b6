# Entry points for people and CI. `make demo` and `make test` work on a fresh Debian 12 machine:
# both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
SOURCES = $(shell git ls-files '*.h' '*.cc' 2>/dev/null)

.PHONY: deps configure build test demo bench format format-check clean

deps:
	@bash deploy/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	@$(BUILD)/engine/ply-engine demo connect4 --a hard --b medium

bench: build
	@$(BUILD)/engine/ply-engine bench

format:
	@clang-format -i $(SOURCES)

format-check:
	@clang-format --dry-run --Werror $(SOURCES)

clean:
	@rm -rf $(BUILD)
