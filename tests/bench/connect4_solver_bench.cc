// Solves the public Connect Four benchmark sets (Test_L3_R1 ... Test_L1_R2) from scratch, one
// position at a time with the transposition table cleared before each, and prints per set the
// figures solvers are usually compared on: mean time and nodes per position, nodes per second,
// the slowest position, and how many scores disagree with the expected ones (must be 0).
//
// Usage: connect4_solver_bench [--limit N] [--tt MB] [FILE...]
// Without files it reads the five sets from PLY_DATA_DIR/connect4.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/games/connect4/solver.h"
#include "engine/tool/number_arg.h"

#ifndef PLY_DATA_DIR
#define PLY_DATA_DIR ""
#endif

namespace {

struct SetStats {
  std::string name;
  int positions = 0;
  int mismatches = 0;
  int errors = 0;
  double total_us = 0;
  double max_us = 0;
  int64_t total_nodes = 0;
};

std::string FormatTime(double us) {
  char buf[32];
  if (us < 1000) {
    std::snprintf(buf, sizeof buf, "%.1f us", us);
  } else if (us < 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
  }
  return buf;
}

SetStats RunSet(ply::connect4::Solver& solver, const std::string& path, int limit,
                ply::connect4::ProbeOrder order) {
  SetStats st;
  st.name = path.substr(path.find_last_of('/') + 1);
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    st.errors = 1;
    return st;
  }
  std::string line;
  while ((limit <= 0 || st.positions < limit) && std::getline(in, line)) {
    std::istringstream fields(line);
    std::string moves;
    int expected = 0;
    if (!(fields >> moves >> expected)) continue;
    const auto start = std::chrono::steady_clock::now();
    solver.Reset();
    const auto result = solver.SolveSequence(moves, {}, order);
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    ++st.positions;
    if (!result.ok() || !result->solved) {
      ++st.errors;
      continue;
    }
    st.total_us += us;
    st.max_us = std::max(st.max_us, us);
    st.total_nodes += result->nodes;
    if (result->score != expected) {
      ++st.mismatches;
      std::fprintf(stderr, "%s: %s expected %d got %d\n", st.name.c_str(), moves.c_str(), expected,
                   result->score);
    }
  }
  return st;
}

}  // namespace

int main(int argc, char** argv) {
  int limit = 0;
  size_t tt_mb = 64;
  ply::connect4::ProbeOrder order = ply::connect4::ProbeOrder::kFastest;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--limit" || arg == "--tt") && i + 1 < argc) {
      const char* value = argv[++i];
      if (!(arg == "--limit" ? ply::ParseNumberArg(value, 0, 1'000'000'000, &limit)
                             : ply::ParseNumberArg<size_t>(value, 1, 65536, &tt_mb))) {
        std::fprintf(stderr, "%s: '%s' is not a number it takes\n", arg.c_str(), value);
        return 2;
      }
    } else if (arg == "--result-first") {
      // The perfect level's probe order (win, draw or loss before the exact score).
      order = ply::connect4::ProbeOrder::kResultFirst;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: %s [--limit N] [--tt MB] [--result-first] [FILE...]\n", argv[0]);
      return 0;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    const std::string dir = std::string(PLY_DATA_DIR) + "/connect4/";
    for (const char* set : {"Test_L3_R1", "Test_L2_R1", "Test_L2_R2", "Test_L1_R1", "Test_L1_R2"}) {
      files.push_back(dir + set);
    }
  }

  ply::connect4::Solver solver(7, 6, tt_mb);
  std::printf("%-12s %9s %12s %12s %14s %12s %10s\n", "set", "positions", "mean time", "mean nodes",
              "nodes/s", "max time", "mismatches");
  bool ok = true;
  for (const std::string& file : files) {
    const SetStats st = RunSet(solver, file, limit, order);
    const int solved = st.positions - st.errors;
    const double n = std::max(solved, 1);
    const double nps = st.total_us > 0 ? st.total_nodes / (st.total_us / 1e6) : 0;
    std::printf("%-12s %9d %12s %12.0f %14.0f %12s %10d\n", st.name.c_str(), st.positions,
                FormatTime(st.total_us / n).c_str(), st.total_nodes / n, nps,
                FormatTime(st.max_us).c_str(), st.mismatches + st.errors);
    std::fflush(stdout);
    ok = ok && st.mismatches == 0 && st.errors == 0;
  }
  return ok ? 0 : 1;
}
