// gomoku-strength: the Gomoku strength and speed checks that are too slow for unit tests.
//
//   gomoku-strength match A B [games=100] [time_ms=0] [rule=freestyle]
//       plays levels A and B against each other through the registry (colours alternate, each
//       game opens with two random stones near the centre), prints wins, draws, losses, the
//       score and the Elo difference.
//   gomoku-strength check
//       the documented acceptance run: medium wins >= 90% and hard >= 98% of 100 games each
//       against greedy.
//   gomoku-strength replay MOVE...
//       replays a game (as SHOW_GAMES prints it) and marks the moves after which the side to move
//       wins by continuous fours or threats (VCF, VCT), with the candidates that would not
//       have allowed it.
//   gomoku-strength bench [time_ms=1000]
//       nodes/s and depth reached by the hard level's search in `time_ms` on a few positions.
//   gomoku-strength threats FILE...
//       on every position of the games in FILE (pbrain-match --show output: a game's moves on a
//       line that starts with two spaces) from the 8th stone on that has no win by fours, the
//       wins by threats FindVct proves for the side to move within 1,000, 4,000, 16,000 and
//       64,000 positions, and the positions and CPU time that took.
//
// SHOW_GAMES=1 prints every game's moves to stderr.
//
// time_ms = 0 keeps each level's own time budget. JOBS=n in the environment plays n games at
// once (one thread each); keep n at most the number of idle cores, since the levels think on
// the wall clock.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/core/random.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/registry/registry.h"
#include "engine/search/search.h"
#include "engine/tool/number_arg.h"

namespace ply {
namespace {

// Attacking moves of a line in its threat searches (fours and threes).
constexpr int kReplayVctDepth = 10;
constexpr int kReplayVcfNodes = 200000;

struct Tally {
  int wins = 0, draws = 0, losses = 0;
  double Score() const {
    int n = wins + draws + losses;
    return n == 0 ? 0 : (wins + 0.5 * draws) / n;
  }
  double Elo() const {
    double s = std::clamp(Score(), 0.001, 0.999);
    return -400.0 * std::log10(1.0 / s - 1.0);
  }
};

// One game from a random two-stone opening; the winner (0 = Black), or -1 for a draw.
int PlayGame(const GameOptions& options, const Difficulty& black, const Difficulty& white,
             uint64_t seed, int64_t time_ms) {
  auto game = *CreateGame("gomoku", options);
  SearchCache caches[2] = {SearchCache(16), SearchCache(16)};
  Rng rng(seed);
  int size = std::stoi(game->Options().at("size"));
  int centre = size / 2;
  while (game->History().size() < 2) {
    int x = centre - 2 + static_cast<int>(rng.Below(5));
    int row = size - centre - 2 + static_cast<int>(rng.Below(5));
    (void)game->Play(absl::StrCat(std::string(1, static_cast<char>('a' + x)), row));
  }
  while (!game->Status().over) {
    int side = game->SideToMove();
    auto report = game->ChooseMove(
        {.level = side == 0 ? black : white, .time_ms = time_ms, .seed = seed * 31 + side},
        &caches[side]);
    if (!report.ok() || !game->Play(report->move).ok()) {
      std::fprintf(stderr, "bad move: %s\n", report.status().ToString().c_str());
      return -1;
    }
  }
  if (std::getenv("SHOW_GAMES") != nullptr) {
    std::fprintf(stderr, "%s-%s seed %llu winner %d: %s\n", black.name.c_str(), white.name.c_str(),
                 static_cast<unsigned long long>(seed), game->Status().winner,
                 absl::StrJoin(game->History(), " ").c_str());
  }
  return game->Status().winner;
}

Tally Match(const std::string& a, const std::string& b, int games, int64_t time_ms,
            const GameOptions& options, int jobs, bool verbose) {
  const GameInfo* info = FindGame("gomoku");
  const Difficulty* la = FindLevel(info->levels, a);
  const Difficulty* lb = FindLevel(info->levels, b);
  if (la == nullptr || lb == nullptr) {
    std::fprintf(stderr, "unknown level %s or %s\n", a.c_str(), b.c_str());
    std::exit(2);
  }
  if (absl::StatusOr<std::unique_ptr<AnyGame>> game = CreateGame("gomoku", options); !game.ok()) {
    std::fprintf(stderr, "gomoku-strength: %s\n", game.status().ToString().c_str());
    std::exit(2);
  }
  Tally t;
  std::mutex mu;
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i = next++; i < games; i = next++) {
      bool a_black = i % 2 == 0;
      // Games 2k and 2k + 1 share an opening with colours swapped.
      int winner = PlayGame(options, a_black ? *la : *lb, a_black ? *lb : *la,
                            /*seed=*/1000 + static_cast<uint64_t>(i / 2), time_ms);
      std::lock_guard<std::mutex> lock(mu);
      if (winner < 0) {
        ++t.draws;
      } else if ((winner == 0) == a_black) {
        ++t.wins;
      } else {
        ++t.losses;
      }
      if (verbose) {
        std::printf("game %3d: %s %s -> +%d =%d -%d\n", i + 1, a.c_str(),
                    a_black ? "(Black)" : "(White)", t.wins, t.draws, t.losses);
        std::fflush(stdout);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(jobs, 1); ++j) threads.emplace_back(worker);
  for (std::thread& th : threads) th.join();
  std::printf("%s vs %s, %d games: +%d =%d -%d, score %.1f%%, Elo %+.0f\n", a.c_str(), b.c_str(),
              games, t.wins, t.draws, t.losses, 100 * t.Score(), t.Elo());
  return t;
}

void Bench(int64_t time_ms) {
  const std::vector<std::vector<std::string>> positions = {
      {"h8"},
      {"h8", "i9", "g9", "i7", "i8", "g7", "j7"},
      {"h8", "h9", "i9", "g7", "j10", "k11", "i8", "i7", "g8", "f8", "j8", "k8"},
  };
  auto searcher = std::make_unique<Searcher<Gomoku>>(64);
  double total_nodes = 0, total_ms = 0, total_cpu_ms = 0;
  for (const auto& moves : positions) {
    Gomoku g = *Gomoku::Create({});
    for (const std::string& m : moves) {
      Gomoku::UndoInfo u;
      g.Make(*g.ParseMove(m), u);
    }
    searcher->Clear();
    std::clock_t cpu_start = std::clock();
    auto r = searcher->Search(g, {.time_ms = time_ms});
    double cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    // Nodes per CPU second as well: on a shared machine the wall clock undercounts.
    std::printf(
        "%2zu stones: depth %2d, %9lld nodes, %6.0f ms (%6.0f ms CPU), %8.0f nodes/s "
        "(%8.0f per CPU s), best %s\n",
        moves.size(), r.depth, static_cast<long long>(r.nodes), r.elapsed_ms, cpu_ms,
        r.nodes_per_second(), static_cast<double>(r.nodes) * 1000 / std::max(cpu_ms, 1.0),
        g.MoveToText(r.best_move).c_str());
    total_nodes += static_cast<double>(r.nodes);
    total_ms += r.elapsed_ms;
    total_cpu_ms += cpu_ms;
  }
  std::printf("overall: %.0f nodes/s, %.0f nodes per CPU second\n", total_nodes * 1000 / total_ms,
              total_nodes * 1000 / total_cpu_ms);
}

// The side to move's first move of a win by continuous fours, or else by continuous threats
// (fours and open threes), searched far deeper than the AI does; kNoMove if neither is found.
// `fours` tells which.
Gomoku::Move ForcedWin(const Gomoku& game, bool* fours) {
  Gomoku copy = game;
  if (copy.GetOutcome() != Outcome::kOngoing) return Gomoku::kNoMove;
  const Gomoku::Move vcf = copy.FindVcf(Gomoku::kMaxVcfDepth, kReplayVcfNodes);
  *fours = vcf != Gomoku::kNoMove;
  if (*fours) return vcf;
  return copy.FindVct(kReplayVctDepth, kReplayVcfNodes);
}

// Replays a game and prints every move after which the side to move wins by continuous fours
// or threats, with how many of the search's candidates in its place would not have allowed
// that.
int Replay(const std::vector<std::string>& moves) {
  Gomoku game = *Gomoku::Create({});
  for (size_t i = 0; i < moves.size(); ++i) {
    absl::StatusOr<Gomoku::Move> move = game.ParseMove(moves[i]);
    if (!move.ok() || game.GetOutcome() != Outcome::kOngoing) {
      std::fprintf(stderr, "move %zu (%s) cannot be played\n", i + 1, moves[i].c_str());
      return 2;
    }
    MoveList<Gomoku::Move, Gomoku::kMaxMoves> candidates;
    game.GenerateSearchMoves(candidates);
    Gomoku::UndoInfo undo;
    Gomoku played = game;
    played.Make(*move, undo);
    bool fours = false;
    const Gomoku::Move win = ForcedWin(played, &fours);
    if (win != Gomoku::kNoMove) {
      int safe = 0;
      std::string safe_moves;
      for (Gomoku::Move m : candidates) {
        Gomoku after = game;
        after.Make(m, undo);
        bool unused = false;
        if (ForcedWin(after, &unused) == Gomoku::kNoMove) {
          ++safe;
          absl::StrAppend(&safe_moves, " ", game.MoveToText(m));
        }
      }
      std::printf("%3zu %-3s lets %s win by %s from %s; %d of %d candidates would not:%s\n", i + 1,
                  moves[i].c_str(), played.SideToMove() == 0 ? "Black" : "White",
                  fours ? "fours" : "threats", played.MoveToText(win).c_str(), safe,
                  candidates.size(), safe_moves.c_str());
    }
    game = played;
  }
  std::printf("%s", game.Render().c_str());
  return 0;
}

// The threats search's reach on the positions of real games (see the file's comment).
int Threats(const std::vector<std::string>& files) {
  std::vector<std::vector<std::string>> games;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "gomoku-strength: cannot read %s\n", file.c_str());
      return 2;
    }
    // A line of moves is as long as its game: read whole, whatever its length.
    for (std::string line; std::getline(in, line);) {
      if (!absl::StartsWith(line, "  ")) continue;
      games.emplace_back(absl::StrSplit(line, absl::ByAnyChar(" \r"), absl::SkipEmpty()));
    }
  }
  constexpr int kBudgets[] = {1000, 4000, 16000, 64000};
  constexpr int kCount = std::size(kBudgets);
  int proved[kCount] = {}, positions = 0, by_fours = 0;
  int64_t used[kCount] = {};
  double cpu_ms[kCount] = {};
  for (const std::vector<std::string>& moves : games) {
    Gomoku game = *Gomoku::Create({});
    for (size_t i = 0; i + 1 < moves.size() && game.GetOutcome() == Outcome::kOngoing; ++i) {
      absl::StatusOr<Gomoku::Move> move = game.ParseMove(moves[i]);
      if (!move.ok()) {
        std::fprintf(stderr, "gomoku-strength: move %zu (%s) cannot be played\n", i + 1,
                     moves[i].c_str());
        return 2;
      }
      Gomoku::UndoInfo undo;
      game.Make(*move, undo);
      if (i + 1 < 8) continue;
      if (Gomoku copy = game; copy.FindVcf(Gomoku::kMaxVcfDepth, 20000) != Gomoku::kNoMove) {
        ++by_fours;
        continue;
      }
      ++positions;
      for (int b = 0; b < kCount; ++b) {
        Gomoku copy = game;
        int64_t n = 0;
        const std::clock_t start = std::clock();
        const bool won = copy.FindVct(Gomoku::kRootVctDepth, kBudgets[b], &n,
                                      /*fours_searched=*/true) != Gomoku::kNoMove;
        cpu_ms[b] += 1000.0 * static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
        used[b] += n;
        proved[b] += won;
      }
    }
  }
  std::printf("%zu games: %d positions from the 8th stone on with no win by fours (%d with one)\n",
              games.size(), positions, by_fours);
  for (int b = 0; b < kCount; ++b) {
    std::printf(
        "within %6d positions: %4d wins by threats proved; %10lld positions, %7.0f ms CPU\n",
        kBudgets[b], proved[b], static_cast<long long>(used[b]), cpu_ms[b]);
  }
  return 0;
}

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: gomoku-strength match A B [games] [time_ms] [rule] | check | replay MOVE... | "
      "bench [time_ms] | threats FILE...\n"
      "  match   A against B (level names), games in parallel (JOBS=N)\n"
      "  check   medium and hard against greedy, 100 games each: PASS or FAIL\n"
      "  replay  every move after which the side to move wins by threats\n"
      "  bench   the search's speed on fixed positions\n"
      "  threats the wins by threats proved on the positions of games (pbrain-match --show)\n";
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  // A count or a time in milliseconds from `least` to a million, or a usage error (instead of
  // std::stoll's exception).
  auto number = [&](size_t i, int64_t fallback, int64_t least, int64_t* out) {
    *out = fallback;
    if (i >= args.size()) return true;
    const std::string& text = args[i];
    if (ply::ParseNumberArg<int64_t>(text, least, 1'000'000, out)) return true;
    std::fprintf(stderr, "gomoku-strength: '%s' is not a count from %lld to 1000000\n%s",
                 text.c_str(), static_cast<long long>(least), kUsage);
    return false;
  };
  if (!args.empty() && args[0] == "replay") {
    return ply::Replay(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (args.size() >= 2 && args[0] == "threats") {
    return ply::Threats(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (!args.empty() && args[0] == "bench") {
    int64_t time_ms;
    if (!number(1, 1000, 1, &time_ms)) return 2;
    ply::Bench(time_ms);
    return 0;
  }
  // Parallel games; each game's searches stay single-threaded.
  int jobs = 1;
  if (const char* env = std::getenv("JOBS"); env && !ply::ParseNumberArg(env, 1, 256, &jobs)) {
    std::fprintf(stderr, "gomoku-strength: JOBS='%s' is not a count from 1 to 256\n", env);
    return 2;
  }
  if (args.size() == 1 && args[0] == "check") {
    auto medium = ply::Match("medium", "greedy", 100, 0, {}, jobs, false);
    auto hard = ply::Match("hard", "greedy", 100, 0, {}, jobs, false);
    bool ok = medium.Score() >= 0.90 && hard.Score() >= 0.98;
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  }
  if (args.size() >= 3 && args.size() <= 6 && args[0] == "match") {
    int64_t games, time_ms;
    if (!number(3, 100, 1, &games) || !number(4, 0, 0, &time_ms)) return 2;
    ply::GameOptions options;
    if (args.size() > 5) options["rule"] = args[5];
    ply::Match(args[1], args[2], static_cast<int>(games), time_ms, options, jobs,
               /*verbose=*/true);
    return 0;
  }
  std::fputs(kUsage, stderr);
  return 2;
}
