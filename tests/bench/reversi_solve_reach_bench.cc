// How many empty cells the Reversi endgame solver reaches within a budget: the measurement
// behind the thresholds of Reversi::Solve (engine/games/reversi/endgame.cc).
//
// The positions: the FFO sets (hard, hand-picked endgames) and --games N games from the start
// position, each opened with 10 random moves (seeded, so the runs repeat). From each, the game
// is played on by a `medium`-like search (4 plies, no noise) down to --from empty cells, and then
// at every ply down to --to, the position is solved twice with the table cleared before each:
// exactly and for win/loss/draw only. The table printed gives per number of empty cells how
// many positions were solved and the median, 90th percentile and largest node counts of both
// kinds, and the largest CPU time of the solving thread. Node counts do not depend on the load.
//
// Usage: reversi_solve_reach_bench [--from N] [--to N] [--games N] [FILE...]
// Without files it reads the FForum files of PLY_DATA_DIR/reversi and ffo40-44.obf.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/games/reversi/endgame.h"
#include "engine/registry/game_adapter.h"
#include "engine/registry/registry.h"
#include "engine/search/search.h"

#ifndef PLY_DATA_DIR
#define PLY_DATA_DIR ""
#endif

namespace {

double CpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct Samples {
  std::vector<int64_t> exact, wld;
  double exact_cpu_ms = 0, wld_cpu_ms = 0;
};

ply::Reversi RandomOpening(uint64_t& rng) {
  ply::Reversi game = *ply::Reversi::Create({});
  for (int ply = 0; ply < 10 && game.GetOutcome() == ply::Outcome::kOngoing; ++ply) {
    ply::MoveListOf<ply::Reversi> moves;
    game.GenerateMoves(moves);
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    ply::Reversi::UndoInfo undo;
    game.Make(moves[static_cast<size_t>((rng >> 33) % moves.size())], undo);
  }
  return game;
}

// Plays `games` games of `level_name` against itself on its clock and prints per number of
// empty cells the moves, the solved ones and the longest move.
int PlayOnTheClock(const std::string& level_name, int games) {
  const std::vector<ply::Difficulty> levels = ply::Reversi::Levels();
  const ply::Difficulty* level = ply::FindLevel(levels, level_name);
  if (level == nullptr) {
    std::fprintf(stderr, "no level '%s'\n", level_name.c_str());
    return 2;
  }
  struct Row {
    int moves = 0, exact = 0, over = 0;
    // Moves whose search the clock cut mid-iteration, and the longest of them.
    int cut = 0;
    double longest_ms = 0, longest_cut_ms = 0, longest_uncut_ms = 0;
  };
  std::map<int, Row> rows;
  uint64_t rng = 0x51ed2701a3c5b2e9ull;
  ply::SearchCache caches[2];
  for (int g = 0; g < games; ++g) {
    ply::GameAdapter<ply::Reversi> game(RandomOpening(rng), ply::FindGame("reversi"));
    while (!game.Status().over) {
      const int empties = game.game().Empties();
      // Up to 24 empty cells a quick 4-ply search plays both sides.
      ply::Difficulty quick{.name = "quick", .max_depth = 4, .time_ms = 1000};
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<ply::SearchReport> report = game.ChooseMove(
          {.level = empties > 24 ? quick : *level, .seed = static_cast<uint64_t>(g)},
          &caches[game.SideToMove() & 1]);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!report.ok() || !game.Play(report->move).ok()) return 1;
      if (empties > 24) continue;
      Row& row = rows[empties];
      ++row.moves;
      row.exact += report->exact && report->depth == empties ? 1 : 0;
      row.over += ms > level->time_ms ? 1 : 0;
      row.longest_ms = std::max(row.longest_ms, ms);
      if (report->stopped) {
        ++row.cut;
        row.longest_cut_ms = std::max(row.longest_cut_ms, ms);
      } else {
        row.longest_uncut_ms = std::max(row.longest_uncut_ms, ms);
      }
    }
  }
  std::printf("%s, %d ms a move, %d games\n", level_name.c_str(), level->time_ms, games);
  // cut: moves whose search or solve the clock stopped mid-way (SearchReport::stopped), with the
  // longest of those and of the others.
  std::printf("%7s %6s %7s %12s %6s %5s %9s %11s\n", "empties", "moves", "solved", "longest ms",
              "over", "cut", "cut ms", "uncut ms");
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    const Row& r = it->second;
    std::printf("%7d %6d %7d %12.1f %6d %5d %9.1f %11.1f\n", it->first, r.moves, r.exact,
                r.longest_ms, r.over, r.cut, r.longest_cut_ms, r.longest_uncut_ms);
  }
  return 0;
}

int64_t Percentile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  int from = 22, to = 10, games = 40;
  std::string play;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
      from = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--to") == 0 && i + 1 < argc) {
      to = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--games") == 0 && i + 1 < argc) {
      games = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--play") == 0 && i + 1 < argc) {
      play = argv[++i];
    } else {
      files.push_back(argv[i]);
    }
  }
  if (!play.empty()) return PlayOnTheClock(play, games);
  if (files.empty()) {
    for (const char* f : {"fforum-1-19.obf", "fforum-20-39.obf", "ffo40-44.obf"}) {
      files.push_back(std::string(PLY_DATA_DIR) + "/reversi/" + f);
    }
  }
  auto read = ply::reversi::ReadObfFiles(files);
  if (!read.ok()) {
    std::fprintf(stderr, "%s\n", std::string(read.status().message()).c_str());
    return 2;
  }
  const std::vector<ply::reversi::ObfPosition>& positions = *read;

  std::vector<ply::Reversi> starts;
  for (const ply::reversi::ObfPosition& p : positions) starts.push_back(p.game);
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (int g = 0; g < games; ++g) starts.push_back(RandomOpening(rng));

  ply::reversi::EndgameSolver solver(64);
  ply::Searcher<ply::Reversi> searcher(16);
  std::map<int, Samples> by_empties;
  for (const ply::Reversi& start : starts) {
    ply::Reversi game = start;
    while (game.GetOutcome() == ply::Outcome::kOngoing && game.Empties() >= to) {
      const int n = game.Empties();
      if (n <= from) {
        Samples& s = by_empties[n];
        for (ply::reversi::SolveKind kind :
             {ply::reversi::SolveKind::kExact, ply::reversi::SolveKind::kWinLossDraw}) {
          solver.Clear();
          const double start = CpuMs();
          const ply::reversi::EndgameResult r = solver.Solve(game, {}, kind);
          const double ms = CpuMs() - start;
          if (kind == ply::reversi::SolveKind::kExact) {
            s.exact.push_back(r.nodes);
            s.exact_cpu_ms = std::max(s.exact_cpu_ms, ms);
          } else {
            s.wld.push_back(r.nodes);
            s.wld_cpu_ms = std::max(s.wld_cpu_ms, ms);
          }
        }
      }
      const auto move = searcher.Search(game, {.max_depth = 4});
      ply::Reversi::UndoInfo undo;
      game.Make(move.best_move, undo);
    }
  }
  std::printf("%7s %5s %11s %11s %11s %9s %11s %11s %11s %9s\n", "empties", "count", "exact p50",
              "exact p90", "exact max", "max cpu", "wld p50", "wld p90", "wld max", "max cpu");
  for (auto it = by_empties.rbegin(); it != by_empties.rend(); ++it) {
    const Samples& s = it->second;
    std::printf("%7d %5zu %11lld %11lld %11lld %7.0fms %11lld %11lld %11lld %7.0fms\n", it->first,
                s.exact.size(), static_cast<long long>(Percentile(s.exact, 0.5)),
                static_cast<long long>(Percentile(s.exact, 0.9)),
                static_cast<long long>(Percentile(s.exact, 1.0)), s.exact_cpu_ms,
                static_cast<long long>(Percentile(s.wld, 0.5)),
                static_cast<long long>(Percentile(s.wld, 0.9)),
                static_cast<long long>(Percentile(s.wld, 1.0)), s.wld_cpu_ms);
  }
  return 0;
}
