// Writes the test data in tests/data/ from this project's own solvers, and checks a file of
// positions against them. Not a test and not built by default: `cmake --build build --target
// make_test_data`, then, from the repository root:
//
//   build/tests/make_test_data connect4 SET OUT
//       Writes the Connect Four set SET (end-easy, middle-easy, middle-medium, begin-easy,
//       begin-medium) to OUT: random positions valued by connect4::Solver. The same SET always
//       gives the same file (fixed seeds, node budgets rather than time).
//   build/tests/make_test_data connect4-check FILE
//       Solves every `MOVES SCORE` line of FILE (ours, or a public set in the same format) and
//       counts the scores that differ; exits 1 when any does.
//   build/tests/make_test_data reversi IN OUT
//       Reads the .obf positions of IN, solves every legal move of each with
//       reversi::EndgameSolver and writes them to OUT with their exact scores, best first. Every
//       score IN lists must be the one found (exit 1 otherwise, OUT not written), so running it
//       on a public file checks the solver against it and on OUT itself re-checks OUT. The
//       header written is that of tests/data/reversi/ffo-1-19.txt (FFO #1-#19).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/games/connect4/solver.h"
#include "engine/games/reversi/endgame.h"
#include "engine/games/reversi/reversi.h"

namespace ply {
namespace {

// ---------------------------------------------------------------------------------------------
// Connect Four.

constexpr int kWidth = 7;
constexpr int kHeight = 6;
constexpr int kCells = kWidth * kHeight;

// A 7x6 position in the solver's layout (connect4/solver.h), built by playing columns.
struct Board {
  uint64_t current = 0;
  uint64_t mask = 0;
  int moves = 0;
  std::string digits;

  static uint64_t Bottom(int c) { return uint64_t{1} << (c * (kHeight + 1)); }
  static uint64_t Column(int c) { return ((uint64_t{1} << kHeight) - 1) * Bottom(c); }
  bool CanPlay(int c) const { return (mask & (Bottom(c) << (kHeight - 1))) == 0; }
  uint64_t Cell(int c) const { return (mask + Bottom(c)) & Column(c); }
  static bool HasFour(uint64_t p) {
    for (int s : {1, kHeight, kHeight + 1, kHeight + 2}) {
      const uint64_t pairs = p & (p >> s);
      if (pairs & (pairs >> 2 * s)) return true;
    }
    return false;
  }
  bool IsWinningMove(int c) const { return HasFour(current | Cell(c)); }
  void Play(int c) {
    current ^= mask;
    mask |= Cell(c);
    ++moves;
    digits.push_back(static_cast<char>('1' + c));
  }
  uint64_t Key() const { return current + mask; }
};

// Plies left in the game with perfect play, from the score of a position with `moves` stones
// (the solver's convention): the winner's winning stone is its (22 - |score|)-th; a draw fills
// the board.
int RemainingPlies(int score, int moves) {
  if (score > 0) return 2 * (22 - score - moves / 2) - 1;
  if (score < 0) return 2 * (22 + score - (moves + 1) / 2);
  return kCells - moves;
}

struct Connect4Set {
  const char* name;
  const char* title;
  int min_plies, max_plies;          // stones on the board
  int min_remaining, max_remaining;  // RemainingPlies with perfect play
  int count;
  uint32_t seed;
  int64_t max_nodes;  // per candidate; a position not solved within it is dropped
};

// The kinds of the public benchmark sets (Pascal Pons' Test_L*_R*): beginning (at most 14
// stones), middle game (15-28) and end game (29 and more); easy when the game ends within 14
// plies with perfect play, medium within 15 to 28.
constexpr Connect4Set kConnect4Sets[] = {
    {"end-easy", "end game, easy", 29, 41, 1, 14, 1000, 3001, 100'000'000},
    {"middle-easy", "middle game, easy", 15, 28, 3, 14, 1000, 2001, 100'000'000},
    {"middle-medium", "middle game, medium", 15, 28, 15, 28, 500, 2002, 100'000'000},
    {"begin-easy", "beginning, easy", 4, 14, 3, 14, 500, 1001, 1'000'000},
    {"begin-medium", "beginning, medium", 4, 14, 15, 28, 200, 1002, 20'000'000},
};

// Uniform in [0, n): mt19937's output is specified by the standard, the distributions are not,
// so this keeps the files the same with every standard library.
int Below(std::mt19937& rng, int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); }

// A random game of `plies` stones that is not over, between two players who see one ply ahead:
// a player who can win does (the game is then over, and false is returned), one who cannot
// blocks the opponent's immediate win if there is one, and otherwise plays a column drawn
// uniformly among the open ones.
bool RandomGame(std::mt19937& rng, int plies, Board& b) {
  b = Board{};
  while (b.moves < plies) {
    int open[kWidth];
    int n = 0;
    for (int c = 0; c < kWidth; ++c) {
      if (!b.CanPlay(c)) continue;
      if (b.IsWinningMove(c)) return false;
      open[n++] = c;
    }
    if (n == 0) return false;
    // The opponent's wins: cells where its stones would make four, one of them playable now.
    int block = -1;
    for (int i = 0; i < n && block < 0; ++i) {
      if (Board::HasFour((b.current ^ b.mask) | b.Cell(open[i]))) block = open[i];
    }
    b.Play(block >= 0 ? block : open[Below(rng, n)]);
  }
  return true;
}

int WriteConnect4Set(const std::string& name, const std::string& out_path) {
  const Connect4Set* set = nullptr;
  for (const Connect4Set& s : kConnect4Sets) {
    if (name == s.name) set = &s;
  }
  if (set == nullptr) {
    std::cerr << "unknown set '" << name << "'\n";
    return 2;
  }
  std::mt19937 rng(set->seed);
  connect4::Solver solver;
  std::set<uint64_t> seen;
  std::vector<std::pair<std::string, int>> lines;
  int64_t candidates = 0, dropped_budget = 0, dropped_kind = 0, nodes = 0;
  while (static_cast<int>(lines.size()) < set->count) {
    Board b;
    const int plies = set->min_plies + Below(rng, set->max_plies - set->min_plies + 1);
    if (!RandomGame(rng, plies, b)) continue;
    if (!seen.insert(b.Key()).second) continue;  // the same position by another order
    ++candidates;
    solver.Reset();
    const connect4::SolveResult r =
        solver.Solve(b.current, b.mask, b.moves, {.max_nodes = set->max_nodes});
    nodes += r.nodes;
    if (!r.solved) {
      ++dropped_budget;
      continue;
    }
    const int remaining = RemainingPlies(r.score, b.moves);
    if (remaining < set->min_remaining || remaining > set->max_remaining) {
      ++dropped_kind;
      continue;
    }
    lines.emplace_back(b.digits, r.score);
    if (lines.size() % 10 == 0) {
      std::cerr << name << ": " << lines.size() << "/" << set->count << " (" << candidates
                << " candidates)\n";
    }
  }
  std::ofstream out(out_path);
  out << absl::StrFormat(
      R"(# Connect Four (7x6) test positions: %s, %d positions.
# Their kind (that of the public benchmark sets by Pascal Pons): %d-%d stones on the board, and
# with perfect play the game ends in %d-%d more plies.
# Positions: random games made by this project's generator (tests/data/make_test_data.cc, seed
# %u): a number of stones drawn uniformly in the range, played by two players who see one ply
# ahead (one who can win does, which ends the game and drops it; else it blocks the opponent's
# immediate win; else it plays a column drawn uniformly among the open ones). Positions seen
# before, and positions of another kind, were skipped.
# Values: connect4::Solver, this project's exact solver (engine/games/connect4/solver.h), its
# table reset before each position. Positions it did not solve within %d nodes were dropped
# (%d of %d candidates).
# Regenerate (from the repository root, after `cmake --build build --target make_test_data`):
#   build/tests/make_test_data connect4 %s tests/data/connect4/%s.txt
# Line: MOVES SCORE. MOVES: the 1-based columns played from the empty board. SCORE: the exact
# value for the side to move with perfect play by both sides, each winning as fast and losing
# as slowly as possible: 22 minus the number of stones the winner has placed once it wins,
# negative when the side to move loses, 0 for a draw.
)",
      set->title, set->count, set->min_plies, set->max_plies, set->min_remaining,
      set->max_remaining, set->seed, set->max_nodes, dropped_budget, candidates, set->name,
      set->name);
  for (const auto& [digits, score] : lines) out << digits << " " << score << "\n";
  out.close();
  if (!out) {
    std::cerr << "cannot write " << out_path << "\n";
    return 1;
  }
  std::cerr << name << ": " << lines.size() << " positions from " << candidates << " candidates ("
            << dropped_kind << " of another kind, " << dropped_budget << " over the budget), "
            << nodes << " nodes\n";
  return 0;
}

int CheckConnect4File(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return 2;
  }
  connect4::Solver solver;
  std::string line;
  int positions = 0, wrong = 0;
  int64_t nodes = 0, max_nodes = 0;
  double ms = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string moves;
    int score = 0;
    if (!(fields >> moves >> score)) {
      std::cerr << path << ": '" << line << "' is not MOVES SCORE\n";
      return 2;
    }
    solver.Reset();
    const absl::StatusOr<connect4::SolveResult> r = solver.SolveSequence(moves);
    ++positions;
    if (!r.ok() || !r->solved || r->score != score) {
      ++wrong;
      std::cerr << moves << ": listed " << score << ", solver "
                << (r.ok() ? std::to_string(r->score) : r.status().ToString()) << "\n";
      continue;
    }
    nodes += r->nodes;
    max_nodes = std::max(max_nodes, r->nodes);
    ms += r->elapsed_ms;
  }
  std::printf("%s: %d positions, %d differ; %.3f ms and %lld nodes a position (at most %lld)\n",
              path.c_str(), positions, wrong, positions ? ms / positions : 0.0,
              static_cast<long long>(positions ? nodes / positions : 0),
              static_cast<long long>(max_nodes));
  return wrong == 0 && positions > 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// Reversi.

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

int WriteReversiFile(const std::string& in_path, const std::string& out_path) {
  std::ifstream in(in_path);
  if (!in) {
    std::cerr << "cannot read " << in_path << "\n";
    return 2;
  }
  std::vector<std::string> lines;
  std::string text;
  while (std::getline(in, text)) {
    if (text.empty() || text[0] == '#' || text[0] == '%') continue;
    lines.push_back(text);
  }
  in.close();
  reversi::EndgameSolver solver(64);
  std::vector<std::string> out_lines;
  int wrong = 0, number = 0;
  for (const std::string& line : lines) {
    ++number;
    const absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(line);
    if (!p.ok()) {
      std::cerr << in_path << ": " << p.status() << "\n";
      return 2;
    }
    // The board and side as written, and every MOVE:SCORE pair listed.
    std::istringstream head(line.substr(0, line.find(';')));
    std::string board, side;
    head >> board >> side;
    std::map<std::string, int> listed;
    for (size_t at = line.find(';'); at != std::string::npos;) {
      const size_t next = line.find(';', at + 1);
      std::string item = line.substr(at + 1, next == std::string::npos ? next : next - at - 1);
      item.erase(std::remove_if(item.begin(), item.end(),
                                [](unsigned char c) { return std::isspace(c) != 0; }),
                 item.end());
      if (const size_t colon = item.find(':'); colon != std::string::npos) {
        listed[Upper(item.substr(0, colon))] = std::stoi(item.substr(colon + 1));
      }
      at = next;
    }

    solver.Clear();
    const reversi::EndgameResult root = solver.Solve(p->game);
    if (!root.solved) {
      std::cerr << "#" << number << ": not solved\n";
      return 1;
    }
    std::vector<std::pair<std::string, int>> scores;
    MoveList<Reversi::Move, Reversi::kMaxMoves> moves;
    p->game.GenerateMoves(moves);
    for (Reversi::Move m : moves) {
      Reversi child = p->game;
      Reversi::UndoInfo undo;
      child.Make(m, undo);
      solver.Clear();
      const reversi::EndgameResult r = solver.Solve(child);
      if (!r.solved) {
        std::cerr << "#" << number << ": " << p->game.MoveToText(m) << " not solved\n";
        return 1;
      }
      scores.emplace_back(Upper(p->game.MoveToText(m)), -r.score);
    }
    std::stable_sort(scores.begin(), scores.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    // The root solve and the solves of the moves agree, and its move is one of the best.
    const std::string root_move = Upper(p->game.MoveToText(root.best_move));
    bool root_move_best = false;
    for (const auto& [move, score] : scores) {
      root_move_best |= move == root_move && score == scores[0].second;
    }
    if (scores.empty() || root.score != scores[0].second || !root_move_best) {
      std::cerr << "#" << number << ": the root solve (" << root.score << " " << root_move
                << ") disagrees with its moves' solves\n";
      ++wrong;
    }
    std::map<std::string, int> found(scores.begin(), scores.end());
    for (const auto& [move, score] : listed) {
      const auto it = found.find(move);
      if (it == found.end() || it->second != score) {
        std::cerr << "#" << number << ": " << move << " listed " << score << ", solver "
                  << (it == found.end() ? "illegal" : std::to_string(it->second)) << "\n";
        ++wrong;
      }
    }
    std::string out = Upper(board) + " " + Upper(side) + ";";
    for (const auto& [move, score] : scores) {
      char item[32];
      std::snprintf(item, sizeof item, " %s:%+d;", move.c_str(), score);
      out += item;
    }
    out_lines.push_back(out);
    std::cerr << "#" << number << ": " << p->game.Empties() << " empty, " << scores[0].first << " "
              << scores[0].second << " (" << listed.size() << " listed scores, " << scores.size()
              << " moves)\n";
  }
  if (wrong > 0) {
    std::cerr << wrong << " scores differ; " << out_path << " not written\n";
    return 1;
  }
  std::ofstream out(out_path);
  out << R"(# Reversi (Othello) endgame test positions: FForum / FFO problems #1-#19 (line N is problem
# #N), the boards of the classic public FFO endgame benchmark of Othello programs.
# Values: reversi::EndgameSolver, this project's exact endgame solver
# (engine/games/reversi/endgame.h), its table cleared before each solve: every legal move of each
# position solved to the end. When first written, every score of the public list (which gives
# every legal move) was checked equal to the one found here.
# Regenerate (from the repository root, after `cmake --build build --target make_test_data`;
# this re-solves the file's own positions and fails, leaving it as it is, if a score changes):
#   build/tests/make_test_data reversi tests/data/reversi/ffo-1-19.txt tests/data/reversi/ffo-1-19.txt
# Line (.obf, read by reversi::ReadObfFile): the 64 cells a1 b1 ... h1, a2 ... h8 ('X' Black, 'O'
# White, '-' empty), a space, the side to move, then every legal move as MOVE:SCORE, best first.
# SCORE: the exact final disc difference for the side to move after that move with best play by
# both sides (the empty cells of a game that ends early go to the winner).
)";
  for (const std::string& line : out_lines) out << line << "\n";
  out.close();
  if (!out) {
    std::cerr << "cannot write " << out_path << "\n";
    return 1;
  }
  return 0;
}

int Usage() {
  std::cerr << "usage: make_test_data connect4 SET OUT | connect4-check FILE | reversi IN OUT\n"
               "sets:";
  for (const Connect4Set& s : kConnect4Sets) std::cerr << " " << s.name;
  std::cerr << "\n";
  return 2;
}

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "connect4") return ply::WriteConnect4Set(args[1], args[2]);
  if (args.size() == 2 && args[0] == "connect4-check") return ply::CheckConnect4File(args[1]);
  if (args.size() == 3 && args[0] == "reversi") return ply::WriteReversiFile(args[1], args[2]);
  return ply::Usage();
}
