// pbrain-match: plays two Gomoku engines against each other through the Gomocup protocol, as a
// tournament manager (Piskvork, gomocup's manager) would, and prints the score of the first with
// an Elo estimate and its 95% interval. Any engine that speaks the protocol on stdin/stdout can
// play: each is given as a shell command line. A match too small or too one-sided for an
// interval says so (EloSummary in engine/tool/match.h) rather than print infinities.
//
//   pbrain-match [--games N] [--turn_ms T] [--size S] [--rule freestyle|exact] [--seed N]
//                [--opening_stones K] [--show] "COMMAND A" "COMMAND B"
//
// Every game starts fresh processes (START, INFO timeout_turn/timeout_match/time_left/rule),
// opens with K random stones (RandomOpening below; games 2k and 2k+1 share an opening with the
// colours swapped), gives each engine the position with BOARD on its first turn and TURN after
// that, and judges the moves itself: a five (or, under `exact`,
// exactly five) wins, a full board is a draw, and an illegal or unreadable move, a crash, or an
// answer later than the turn limit plus a grace (max(1 s, T)) loses. Each game prints one line;
// --show adds its moves. Stopped by SIGINT, SIGTERM or SIGHUP, it kills the engines first.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/core/flags_usage.h"
#include "engine/core/random.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/tool/gomoku/pbrain_pipe.h"
#include "engine/tool/match.h"

ABSL_FLAG(int, games, 20, "games to play (colours alternate)");
ABSL_FLAG(int, turn_ms, 1000, "time per move in milliseconds (INFO timeout_turn)");
ABSL_FLAG(int, size, 15, "board size");
ABSL_FLAG(std::string, rule, "freestyle", "freestyle or exact (five, not six, wins)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the openings");
ABSL_FLAG(int, opening_stones, 4,
          "stones in each random opening, 1..8 (Black first; 2 gives the openings of before)");
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
  int opening_stones;
};

using Stones = std::vector<std::pair<int, int>>;  // (x, y), Black's first, then alternating

// An empty board of the match's size and rule.
Gomoku NewBoard(const Settings& settings) {
  return *Gomoku::Create(
      {{"size", std::to_string(settings.size)}, {"rule", settings.exact ? "exact" : "freestyle"}});
}

// Whether either side has a cell that makes a four or two open threes (or more).
bool HasThreat(const Gomoku& game, int size) {
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      const Gomoku::Move m = Gomoku::CellAt(x, y);
      if (!game.IsEmpty(m)) continue;
      for (Player p = 0; p < 2; ++p) {
        if (game.ClassAt(p, m) >= Gomoku::kMakesFour) return true;
      }
    }
  }
  return false;
}

// `count` stones for the start of a game, Black and White in turn: the first within one cell of
// the centre, every other one within two of a stone already placed and within three of the
// centre, so the stones meet (as in a real opening) but are not a formation. Two stones give
// only some 70 openings (fewer up to symmetry), so a match of more than a few dozen games
// repeats them and its games are not independent; four give thousands. An opening where
// either side could already make a four (or two open threes) is drawn again: it would be
// decided before it starts (after 1000 such draws, on a board too small to avoid it, the last
// one stands).
Stones RandomOpening(const Settings& settings, uint64_t seed) {
  const int centre = settings.size / 2;
  const int reach = std::min(3, centre);
  Rng rng(seed);
  for (int draw = 1;; ++draw) {
    Gomoku game = NewBoard(settings);
    Stones stones;
    for (int tries = 0; static_cast<int>(stones.size()) < settings.opening_stones && tries < 1000;
         ++tries) {
      const auto [ax, ay] =
          stones.empty() ? std::pair{centre, centre} : stones[rng.Below(stones.size())];
      const int spread = stones.empty() ? 1 : 2;
      const int x = ax - spread + static_cast<int>(rng.Below(2 * spread + 1));
      const int y = ay - spread + static_cast<int>(rng.Below(2 * spread + 1));
      if (std::abs(x - centre) > reach || std::abs(y - centre) > reach) continue;
      const Gomoku::Move m = Gomoku::CellAt(x, y);
      if (!game.IsEmpty(m)) continue;
      Gomoku::UndoInfo undo;
      game.Make(m, undo);
      stones.push_back({x, y});
    }
    const bool complete = static_cast<int>(stones.size()) == settings.opening_stones;
    if ((complete && !HasThreat(game, settings.size)) || draw == 1000) return stones;
  }
}

// An opening up to the board's eight symmetries: its stones, mapped so that the smallest of
// the eight images (as a sorted list per colour) stands for all of them.
std::vector<int> CanonicalOpening(const Stones& stones, int size) {
  std::vector<int> best;
  for (int t = 0; t < 8; ++t) {
    std::vector<int> image[2];
    for (size_t i = 0; i < stones.size(); ++i) {
      int x = stones[i].first, y = stones[i].second;
      if (t & 1) x = size - 1 - x;
      if (t & 2) y = size - 1 - y;
      if (t & 4) std::swap(x, y);
      image[i % 2].push_back(y * size + x);
    }
    std::vector<int> key;
    for (std::vector<int>& colour : image) {
      std::sort(colour.begin(), colour.end());
      key.insert(key.end(), colour.begin(), colour.end());
      key.push_back(-1);
    }
    if (best.empty() || key < best) best = std::move(key);
  }
  return best;
}

// The deepest "depth N" in one move's MESSAGE lines.
void NoteDepth(const std::string& line, int* deepest) {
  std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    int d = 0;
    if (words[i] == "depth" && absl::SimpleAtoi(words[i + 1], &d)) *deepest = std::max(*deepest, d);
  }
}

GameRecord PlayGame(const std::string& black_command, const std::string& white_command,
                    const Settings& settings, const Stones& opening) {
  GameRecord record;
  Gomoku game = NewBoard(settings);
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
  // `stones` keeps every stone's coordinates in order (Black first), for BOARD.
  Stones stones = opening;
  for (const auto& [x, y] : opening) {
    const Gomoku::Move m = Gomoku::CellAt(x, y);
    record.moves.push_back(game.MoveToText(m));
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
                          .exact = rule == "exact",
                          .opening_stones = std::clamp(absl::GetFlag(FLAGS_opening_stones), 1, 8)};
  int wins = 0, draws = 0, losses = 0;
  PerSide stats[2];  // A, B
  std::set<std::vector<int>> distinct;
  Stones opening;
  for (int i = 0; i < games; ++i) {
    const bool a_black = i % 2 == 0;
    if (i % 2 == 0) {
      opening = RandomOpening(
          settings, Mix64(absl::GetFlag(FLAGS_seed) * 1000 + static_cast<uint64_t>(i / 2)));
      distinct.insert(CanonicalOpening(opening, settings.size));
    }
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
  // Games from the same opening are not independent: the interval above assumes they are.
  std::printf("openings: %zu distinct (up to symmetry) of %d, %d stones each\n", distinct.size(),
              (games + 1) / 2, settings.opening_stones);
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
  ply::SetFlagsUsage(
      "pbrain-match [--games N] [--turn_ms T] [--size S] [--rule R] [--seed N] "
      "[--opening_stones K] [--show] \"COMMAND A\" \"COMMAND B\"");
  std::vector<char*> args = ply::ParseFlags(argc, argv);
  if (args.size() != 3) {
    std::fprintf(stderr, "usage: %s\n", absl::ProgramUsageMessage().data());
    return 2;
  }
  // The engines have process groups of their own, out of reach of a Ctrl-C: they die with this.
  ply::PbrainPipe::KillEnginesOnSignal();
  return ply::Main(args[1], args[2]);
}
