// Solves the positions of .obf endgame files (the FFO test sets) one by one, with the
// transposition table cleared before each, and prints per position the expected and found
// score and move, time, nodes and nodes per second, then the totals. Besides the wall-clock
// time it prints the CPU time of the solving thread, which is what to compare on a busy
// machine. A wrong score or move is marked '!' and makes the exit status 1.
//
// Usage: reversi_ffo_bench [--tt MB] [--first N] [FILE...]
// Without files it reads PLY_DATA_DIR/reversi/ffo40-44.obf and numbers the rows from 40;
// --first N numbers the rows from N (default 1 for files given).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/games/reversi/endgame.h"

#ifndef PLY_DATA_DIR
#define PLY_DATA_DIR ""
#endif

int main(int argc, char** argv) {
  size_t tt_megabytes = 64;
  int first = 0;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--tt") == 0 && i + 1 < argc) {
      tt_megabytes = static_cast<size_t>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--first") == 0 && i + 1 < argc) {
      first = std::atoi(argv[++i]);
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    files.push_back(std::string(PLY_DATA_DIR) + "/reversi/ffo40-44.obf");
    if (first == 0) first = 40;
  }
  if (first == 0) first = 1;

  auto read = ply::reversi::ReadObfFiles(files);
  if (!read.ok()) {
    std::fprintf(stderr, "%s\n", std::string(read.status().message()).c_str());
    return 2;
  }
  const std::vector<ply::reversi::ObfPosition>& positions = *read;
  ply::reversi::EndgameSolver solver(tt_megabytes);
  const ply::reversi::ObfTableTotals totals =
      ply::reversi::SolveObfTable(positions, first, solver, {}, [](const std::string& line) {
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      });
  return totals.wrong == 0 && totals.unsolved == 0 ? 0 : 1;
}
