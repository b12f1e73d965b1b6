# Entry points for people and CI. `make demo` and `make test` work on a fresh Debian 12 machine:
# both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
SOURCES = $(shell git ls-files '*.h' '*.cc' 2>/dev/null)

.PHONY: deps configure build test demo up down bench format format-check clean

deps:
	@bash deploy/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The local stack (PostgreSQL, two ply-bot, ply-lobby on 127.0.0.1:50050, ply-web on
# http://127.0.0.1:8080/), then two bots play Connect Four on it while `ply watch` shows every
# move (the web page shows it too).
PLY = $(BUILD)/client-cli/ply
LOCAL_LOBBY = --server=127.0.0.1:$${PLY_LOBBY_PORT:-50050}
demo: up
	@id=$$($(PLY) new connect4 --seat1 bot:hard --seat2 bot:medium --detach $(LOCAL_LOBBY)) && \
	  $(PLY) watch $$id $(LOCAL_LOBBY)
	@echo
	@echo "Your turn: $(PLY) new connect4 --seat2 bot:medium   ($(PLY) help for more)"
	@echo "In a browser: http://127.0.0.1:$${PLY_WEB_PORT:-8080}/   (watch live matches, play, replay)"
	@echo "Stop the stack: make down   (or deploy/local/down)"

up: build
	@BUILD=$(BUILD) deploy/local/up

down:
	@deploy/local/down

bench: build
	@$(BUILD)/engine/ply-engine bench

format:
	@clang-format -i $(SOURCES)

format-check:
	@clang-format --dry-run --Werror $(SOURCES)

clean:
	@rm -rf $(BUILD)
