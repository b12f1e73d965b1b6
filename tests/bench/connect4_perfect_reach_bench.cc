// How far Connect Four's `perfect` level is perfect off its own lines: the measurement behind
// "Connect Four perfect off its own lines" in docs/performance.md.
//
// Its opening book covers every position its own play can meet (tests/connect4_book_test.cc);
// this samples the others: --per-ply N random openings (uniform legal moves, seeded; none ended,
// none where the mover wins at once) of every length from --from to --to plies. From each the
// level chooses a move on its own clock (5 s; --time-ms to change it), as ply-bot would run it;
// then a fresh solve without a budget gives the position's exact value and the chosen move's.
// Printed per length: how many the book answered, how many the solver proved within the budget,
// how many of the chosen moves kept the exact value and how many kept at least the result
// (win, draw or loss), and the level's slowest answer. Wall-clock times: run it on a quiet machine.
//
// Usage: connect4_perfect_reach_bench [--from 2] [--to 12] [--per-ply 4] [--seed 39]
//        [--time-ms T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/random.h"
#include "engine/games/connect4/solver.h"
#include "engine/registry/registry.h"
#include "engine/tool/number_arg.h"

namespace {

int Sign(int x) { return (x > 0) - (x < 0); }

}  // namespace

int main(int argc, char** argv) {
  int from = 2, to = 12, per_ply = 4, time_ms = 0;
  uint64_t seed = 39;
  constexpr const char* kUsage =
      "usage: connect4_perfect_reach_bench [--from N] [--to N] [--per-ply N] [--seed S] "
      "[--time-ms T]\n";
  for (int i = 1; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 == argc) {
      // A flag without its value (or a stray word) used to be skipped, and the whole bench ran.
      std::fprintf(stderr, "%s needs a value\n%s", argv[i], kUsage);
      return 2;
    }
    bool ok = true;
    if (!std::strcmp(argv[i], "--from")) {
      ok = ply::ParseNumberArg(argv[i + 1], 0, 40, &from);
    } else if (!std::strcmp(argv[i], "--to")) {
      ok = ply::ParseNumberArg(argv[i + 1], 0, 40, &to);
    } else if (!std::strcmp(argv[i], "--per-ply")) {
      ok = ply::ParseNumberArg(argv[i + 1], 1, 1'000'000, &per_ply);
    } else if (!std::strcmp(argv[i], "--seed")) {
      ok = ply::ParseNumberArg<uint64_t>(argv[i + 1], 0, UINT64_MAX, &seed);
    } else if (!std::strcmp(argv[i], "--time-ms")) {
      ok = ply::ParseNumberArg(argv[i + 1], 1, 3'600'000, &time_ms);
    } else {
      std::fprintf(stderr, "unknown flag %s\n%s", argv[i], kUsage);
      return 2;
    }
    if (!ok) {
      std::fprintf(stderr, "%s: '%s' is not a number it takes\n%s", argv[i], argv[i + 1], kUsage);
      return 2;
    }
  }
  if (from < 0 || to > 40 || from > to || per_ply < 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const ply::GameInfo* info = ply::FindGame("connect4");
  ply::Difficulty perfect = *ply::FindLevel(info->levels, "perfect");
  if (time_ms > 0) perfect.time_ms = time_ms;
  ply::SearchCache cache(16);
  ply::connect4::Solver solver(7, 6, 256);
  ply::Rng rng(seed);
  std::printf("perfect at %d ms a move; %d random openings a length, seed %llu\n", perfect.time_ms,
              per_ply, static_cast<unsigned long long>(seed));
  std::printf(
      "| plies | positions | from the book | proved in time | exact value kept | "
      "result kept | slowest answer |\n|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int plies = from; plies <= to; ++plies) {
    int booked = 0, proved = 0, kept = 0, result_kept = 0;
    double slowest_ms = 0;
    for (int sample = 0; sample < per_ply; ++sample) {
      std::string moves;
      int score = 0;
      while (true) {
        moves.clear();
        auto game = ply::CreateGame("connect4");
        while (static_cast<int>(moves.size()) < plies && !(*game)->Status().over) {
          const std::vector<std::string> legal = (*game)->LegalMoves();
          const std::string m = legal[rng.Below(legal.size())];
          (void)(*game)->Play(m);
          moves += m;
        }
        if ((*game)->Status().over) continue;
        solver.Reset();
        auto fresh = solver.SolveSequence(moves);
        if (!fresh.ok() || !fresh->solved) continue;
        score = fresh->score;
        if (score != ply::connect4::WinScore(7, 6, plies)) break;
      }
      std::vector<std::string> texts;
      for (char c : moves) texts.emplace_back(1, c);
      auto game = ply::ReplayGame("connect4", {}, texts);
      const auto start = std::chrono::steady_clock::now();
      auto report = (*game)->ChooseMove({.level = perfect}, &cache);
      const double answer_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!report.ok()) {
        std::fprintf(stderr, "%s: %s\n", moves.c_str(), report.status().ToString().c_str());
        return 1;
      }
      slowest_ms = std::max(slowest_ms, answer_ms);
      if (report->exact && report->nodes == 0) ++booked;
      if (report->exact && report->nodes > 0) ++proved;
      // The chosen move's value: a win on the spot, or minus the reply position's.
      int after = ply::connect4::WinScore(7, 6, plies);
      solver.Reset();
      auto child = solver.SolveSequence(moves + report->move);
      if (child.ok()) after = -child->score;
      if (after == score) ++kept;
      if (Sign(after) == Sign(score)) ++result_kept;
      if (after != score) {
        std::fprintf(stderr, "  %s: value %d, %s keeps %d%s\n", moves.c_str(), score,
                     report->move.c_str(), after, report->exact ? "" : " (not proved in time)");
      }
    }
    std::printf("| %d | %d | %d | %d | %d | %d | %.0f ms |\n", plies, per_ply, booked, proved, kept,
                result_kept, slowest_ms);
    std::fflush(stdout);
  }
  return 0;
}
