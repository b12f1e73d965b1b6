// pbrain-match: plays two Gomoku engines against each other through the Gomocup protocol, as a
// tournament manager (Piskvork, gomocup's manager) would, and prints the score of the first with
// an Elo estimate and its 95% interval. Any engine that speaks the protocol on stdin/stdout can
// play: each is given as a shell command line. A match too small or too one-sided for an
// interval says so (EloSummary in engine/tool/match.h) rather than print infinities.
//
//   pbrain-match [--games N] [--turn_ms T] [--size S] [--rule freestyle|exact] [--seed N]
//                [--show] "COMMAND A" "COMMAND B"
//
// Every game starts fresh processes (START, INFO timeout_turn/timeout_match/time_left/rule),
// opens with two random stones, Black's next to the centre and White's touching it (games 2k and
// 2k+1 share an opening with the colours swapped), gives each engine the position with BOARD on
// its first turn and TURN after that, and judges the moves itself: a five (or, under `exact`,
// exactly five) wins, a full board is a draw, and an illegal or unreadable move, a crash, or an
// answer later than the turn limit plus a grace (max(1 s, T)) loses. Each game prints one line;
// --show adds its moves. Stopped by SIGINT, SIGTERM or SIGHUP, it kills the engines first.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/core/random.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/games/gomoku/pbrain_pipe.h"
#include "engine/tool/match.h"

ABSL_FLAG(int, games, 20, "games to play (colours alternate)");
ABSL_FLAG(int, turn_ms, 1000, "time per move in milliseconds (INFO timeout_turn)");
ABSL_FLAG(int, size, 15, "board size");
ABSL_FLAG(std::string, rule, "freestyle", "freestyle or exact (five, not six, wins)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the openings");
ABSL_FLAG(bool, show, false, "print every game's moves");

namespace ply {
namespace {

using Clock = std::chrono::steady_clock;

struct GameRecord {
  int winner = -1;  // 0 Black, 1 White, -1 draw
  std::string reason;
  std::vector<std::string> moves;
  // Per side (0 Black): moves played, milliseconds spent, and the deepest and summed search
  // depth its MESSAGE lines reported (pbrain-ply says "MESSAGE depth N ...").
  int played[2] = {0, 0};
  double spent_ms[2] = {0, 0};
  int64_t depth_sum[2] = {0, 0};
  int depth_moves[2] = {0, 0};
};

struct Settings {
  int turn_ms;
  int size;
  bool exact;
};

// The deepest "depth N" in one move's MESSAGE lines.
void NoteDepth(const std::string& line, int* deepest) {
  std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    int d = 0;
    if (words[i] == "depth" && absl::SimpleAtoi(words[i + 1], &d)) *deepest = std::max(*deepest, d);
  }
}

GameRecord PlayGame(const std::string& black_command, const std::string& white_command,
                    const Settings& settings, uint64_t opening_seed) {
  GameRecord record;
  Gomoku game = *Gomoku::Create(
      {{"size", std::to_string(settings.size)}, {"rule", settings.exact ? "exact" : "freestyle"}});
  auto lose = [&](int side, std::string why) {
    record.winner = 1 - side;
    record.reason = std::move(why);
    return record;
  };
  // A send that fails (the engine died or stopped reading) shows in its answer, which then fails
  // too with how the engine ended; only answers are checked.
  std::unique_ptr<PbrainPipe> engines[2];
  const std::string* commands[2] = {&black_command, &white_command};
  const auto grace = std::chrono::milliseconds(std::max(1000, settings.turn_ms));
  for (int side = 0; side < 2; ++side) {
    absl::StatusOr<std::unique_ptr<PbrainPipe>> started =
        PbrainPipe::StartShell(*commands[side], PbrainPipe::Options{});
    if (!started.ok()) {
      return lose(side, absl::StrCat("could not start: ", started.status().message()));
    }
    engines[side] = *std::move(started);
    engines[side]->Send(absl::StrCat("START ", settings.size)).IgnoreError();
    absl::StatusOr<std::string> ok = engines[side]->Answer(std::chrono::seconds(10));
    if (!ok.ok()) return lose(side, absl::StrCat("at START, ", ok.status().message()));
    if (*ok != "OK") return lose(side, absl::StrCat("answered START with '", *ok, "'"));
    engines[side]->Send(absl::StrCat("INFO timeout_turn ", settings.turn_ms)).IgnoreError();
    engines[side]->Send("INFO timeout_match 0").IgnoreError();
    engines[side]->Send("INFO max_memory 0").IgnoreError();
    engines[side]->Send(absl::StrCat("INFO rule ", settings.exact ? 1 : 0)).IgnoreError();
  }
  // The opening: a Black stone within one cell of the centre and a White stone touching it (as
  // White usually answers), so that neither side starts with a lost game. `stones` keeps every
  // stone's coordinates in order (Black first), for BOARD.
  std::vector<std::pair<int, int>> stones;
  Rng rng(opening_seed);
  const int centre = settings.size / 2;
  while (game.stones() < 2) {
    const int near_x = stones.empty() ? centre : stones[0].first;
    const int near_y = stones.empty() ? centre : stones[0].second;
    const int x = near_x - 1 + static_cast<int>(rng.Below(3));
    const int y = near_y - 1 + static_cast<int>(rng.Below(3));
    const Gomoku::Move m = Gomoku::CellAt(x, y);
    if (!game.IsEmpty(m)) continue;
    record.moves.push_back(game.MoveToText(m));
    stones.push_back({x, y});
    Gomoku::UndoInfo undo;
    game.Make(m, undo);
  }
  bool started[2] = {false, false};
  std::pair<int, int> last{-1, -1};
  while (game.GetOutcome() == Outcome::kOngoing) {
    const int side = game.SideToMove();
    PbrainPipe& engine = *engines[side];
    if (!started[side]) {
      started[side] = true;
      engine.Send("BOARD").IgnoreError();
      for (size_t i = 0; i < stones.size(); ++i) {
        const int owner = static_cast<int>(i % 2);
        engine
            .Send(absl::StrCat(stones[i].first, ",", stones[i].second, ",", owner == side ? 1 : 2))
            .IgnoreError();
      }
      engine.Send("DONE").IgnoreError();
    } else {
      engine.Send(absl::StrCat("TURN ", last.first, ",", last.second)).IgnoreError();
    }
    const auto start = Clock::now();
    int deepest = 0;
    absl::StatusOr<std::string> answer =
        engine.Answer(std::chrono::milliseconds(settings.turn_ms) + grace,
                      [&](const std::string& line) { NoteDepth(line, &deepest); });
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!answer.ok()) return lose(side, std::string(answer.status().message()));
    int x = -1, y = -1;
    std::vector<std::string> parts = absl::StrSplit(*answer, ',');
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &x) || !absl::SimpleAtoi(parts[1], &y) ||
        x < 0 || y < 0 || x >= settings.size || y >= settings.size ||
        !game.IsEmpty(Gomoku::CellAt(x, y))) {
      return lose(side, absl::StrCat("illegal answer '", *answer, "'"));
    }
    if (ms > settings.turn_ms + 100) {
      std::fprintf(stderr, "note: %s took %.0f ms for a %d ms turn\n",
                   side == 0 ? "Black" : "White", ms, settings.turn_ms);
    }
    record.played[side]++;
    record.spent_ms[side] += ms;
    if (deepest > 0) {
      record.depth_sum[side] += deepest;
      record.depth_moves[side]++;
    }
    Gomoku::Move m = Gomoku::CellAt(x, y);
    record.moves.push_back(game.MoveToText(m));
    stones.push_back({x, y});
    last = {x, y};
    Gomoku::UndoInfo undo;
    game.Make(m, undo);
  }
  GameStatus status = game.Status();
  record.winner = status.winner;
  record.reason = status.reason;
  return record;
}

struct PerSide {
  int played = 0;
  double spent_ms = 0;
  int64_t depth_sum = 0;
  int depth_moves = 0;
};

int Main(const std::string& a, const std::string& b) {
  const int games = absl::GetFlag(FLAGS_games);
  const std::string rule = absl::GetFlag(FLAGS_rule);
  if (rule != "freestyle" && rule != "exact") {
    std::fprintf(stderr, "--rule is freestyle or exact\n");
    return 2;
  }
  const Settings settings{.turn_ms = std::max(1, absl::GetFlag(FLAGS_turn_ms)),
                          .size = std::clamp(absl::GetFlag(FLAGS_size), 5, Gomoku::kMaxSize),
                          .exact = rule == "exact"};
  int wins = 0, draws = 0, losses = 0;
  PerSide stats[2];  // A, B
  for (int i = 0; i < games; ++i) {
    const bool a_black = i % 2 == 0;
    const uint64_t opening = Mix64(absl::GetFlag(FLAGS_seed) * 1000 + static_cast<uint64_t>(i / 2));
    GameRecord r = PlayGame(a_black ? a : b, a_black ? b : a, settings, opening);
    const int a_side = a_black ? 0 : 1;
    for (int side = 0; side < 2; ++side) {
      PerSide& s = stats[side == a_side ? 0 : 1];
      s.played += r.played[side];
      s.spent_ms += r.spent_ms[side];
      s.depth_sum += r.depth_sum[side];
      s.depth_moves += r.depth_moves[side];
    }
    const char* result = r.winner < 0 ? "draw" : r.winner == a_side ? "A wins" : "B wins";
    if (r.winner < 0) {
      ++draws;
    } else if (r.winner == a_side) {
      ++wins;
    } else {
      ++losses;
    }
    std::printf("game %3d: A %s, %s (%s, %zu moves)  +%d =%d -%d\n", i + 1,
                a_black ? "Black" : "White", result, r.reason.c_str(), r.moves.size(), wins, draws,
                losses);
    if (absl::GetFlag(FLAGS_show)) std::printf("  %s\n", absl::StrJoin(r.moves, " ").c_str());
    std::fflush(stdout);
  }
  const int n = wins + draws + losses;
  const double score = n > 0 ? (wins + 0.5 * draws) / n : 0;
  std::printf("A: %s\nB: %s\n", a.c_str(), b.c_str());
  std::printf("%d games at %d ms a move, %s %dx%d: A +%d =%d -%d, score %.1f%%, %s\n", n,
              settings.turn_ms, rule.c_str(), settings.size, settings.size, wins, draws, losses,
              100 * score, EloSummary(wins, draws, losses).c_str());
  const char* names[2] = {"A", "B"};
  for (int k = 0; k < 2; ++k) {
    const PerSide& s = stats[k];
    std::printf("%s: %d moves, %.0f ms a move on average", names[k], s.played,
                s.played > 0 ? s.spent_ms / s.played : 0.0);
    if (s.depth_moves > 0) {
      std::printf(", depth %.1f on average (from its MESSAGE lines)",
                  static_cast<double>(s.depth_sum) / s.depth_moves);
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "pbrain-match [--games N] [--turn_ms T] [--size S] [--rule R] [--seed N] [--show] "
      "\"COMMAND A\" \"COMMAND B\"");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 3) {
    std::fprintf(stderr, "usage: %s\n", absl::ProgramUsageMessage().data());
    return 2;
  }
  // The engines have process groups of their own, out of reach of a Ctrl-C: they die with this.
  ply::PbrainPipe::KillEnginesOnSignal();
  return ply::Main(args[1], args[2]);
}
