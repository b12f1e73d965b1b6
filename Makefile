# Entry points for people and CI. `make demo` and `make test` work on a fresh Debian 12 machine:
# both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
SOURCES = $(shell git ls-files '*.h' '*.cc' 2>/dev/null)

.PHONY: deps configure build test tsan demo up down bench ladder format format-check clean

deps:
	@bash deploy/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The lobby's tests under ThreadSanitizer, in a build of their own (every target instrumented;
# the system's gRPC, protobuf, Abseil and libpq are not, see tests/tsan.supp). Every process a
# test starts (ply-lobby, ply-bot) is instrumented too and writes its reports under
# $(TSAN_BUILD)/tsan-reports; any report fails the target.
TSAN_BUILD ?= build-tsan
TSAN_TESTS = lobby_unit_test lobby_test lobby_bots_test lobby_resilience_test lobby_scale_test
CCACHE = $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLY_SERVICES=ON \
	  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" $(CCACHE) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS) ply-lobby ply-bot
	@rm -rf $(TSAN_BUILD)/tsan-reports && mkdir -p $(TSAN_BUILD)/tsan-reports
	@cd $(TSAN_BUILD) && \
	  TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp log_path=$(CURDIR)/$(TSAN_BUILD)/tsan-reports/tsan second_deadlock_stack=1" \
	  ctest -R '^(LobbyUnitTest|MatchClockTest|LobbyTest|LobbyScaleTest)\.' --output-on-failure -j $(JOBS)
	@if ls $(TSAN_BUILD)/tsan-reports | grep -q .; then \
	  echo "ThreadSanitizer reports:"; cat $(TSAN_BUILD)/tsan-reports/*; exit 1; fi
	@echo "ThreadSanitizer: no reports"

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

# Reruns a game's calibration ladder with the command its file records and rewrites the file
# (engine/games/GAME/ladder.txt, compiled in: rebuild after): `make ladder GAME=gomoku`, or
# GAME=all for every game. Node budgets: the same result on a busy machine as on an idle one.
GAME ?= all
LADDER_GAMES = $(if $(filter all,$(GAME)),$(notdir $(patsubst %/ladder.txt,%,$(wildcard engine/games/*/ladder.txt))),$(GAME))
ladder:
	@cmake --build $(BUILD) --target ply-engine
	@for g in $(LADDER_GAMES); do \
	  cmd=$$(sed -n 's|^command: build/engine/ply-engine|$(BUILD)/engine/ply-engine|p' \
	    engine/games/$$g/ladder.txt); \
	  if [ -z "$$cmd" ]; then echo "no command in engine/games/$$g/ladder.txt"; exit 1; fi; \
	  echo "$$cmd"; $$cmd || exit 1; done

format:
	@clang-format -i $(SOURCES)

format-check:
	@clang-format --dry-run --Werror $(SOURCES)

clean:
	@rm -rf $(BUILD)
