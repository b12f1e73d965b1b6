// The tests' data files in tests/data/ (written by tests/data/make_test_data.cc; each file's
// header says what it holds and how it was made), as the tests read them. A file that is missing,
// cannot be read, has a malformed line or holds no position fails the test that needs it: a
// clone of the repository runs every test, and nothing is skipped for want of data.
#ifndef PLY_TESTS_DATA_TEST_DATA_H_
#define PLY_TESTS_DATA_TEST_DATA_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#ifndef PLY_TEST_DATA_DIR
#error "PLY_TEST_DATA_DIR must name tests/data (tests/CMakeLists.txt sets it)"
#endif

namespace ply::test_data {

// The path of `relative` (such as "reversi/ffo-1-19.txt") under tests/data/.
inline std::string Path(const std::string& relative) {
  return std::string(PLY_TEST_DATA_DIR) + "/" + relative;
}

// One line of a Connect Four set: 1-based columns played from the empty 7x6 board, and the
// exact score for the side to move (the convention of engine/games/connect4/solver.h).
struct Connect4Position {
  std::string moves;
  int score = 0;
};

// Every `stride`-th position of tests/data/connect4/NAME.txt, at most `limit` of them (0: all),
// into `out`. Fails fatally, naming the file, when the file is missing or unreadable, a line is
// not `MOVES SCORE`, or no position is read; call it through ASSERT_NO_FATAL_FAILURE.
inline void LoadConnect4Set(const std::string& name, int stride, int limit,
                            std::vector<Connect4Position>& out) {
  out.clear();
  const std::string path = Path("connect4/" + name + ".txt");
  std::ifstream in(path);
  ASSERT_TRUE(in) << "test data missing: cannot read " << path
                  << " (tests/data/make_test_data.cc writes it; see its header)";
  std::string line;
  int number = 0, index = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Connect4Position p;
    std::string rest;
    const bool parsed = static_cast<bool>(fields >> p.moves >> p.score) && !(fields >> rest) &&
                        p.moves.find_first_not_of("1234567") == std::string::npos;
    ASSERT_TRUE(parsed) << path << ":" << number << ": '" << line << "' is not MOVES SCORE";
    if (index++ % stride != 0) continue;
    out.push_back(p);
    if (limit > 0 && static_cast<int>(out.size()) == limit) break;
  }
  ASSERT_FALSE(out.empty()) << "test data empty: no position in " << path;
}

}  // namespace ply::test_data

#endif  // PLY_TESTS_DATA_TEST_DATA_H_
