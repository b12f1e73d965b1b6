#include "engine/games/tictactoe/tictactoe.h"

#include "absl/strings/str_cat.h"
#include "engine/core/random.h"
#include "engine/core/text.h"

namespace ply {
namespace {

constexpr uint32_t kLines[8] = {0007, 0070, 0700, 0111, 0222, 0444, 0421, 0124};
constexpr uint64_t kSalt = 0x7177'7100;

}  // namespace

absl::StatusOr<TicTacToe> TicTacToe::Create(const GameOptions&) { return TicTacToe(); }

std::vector<Difficulty> TicTacToe::Levels() {
  std::vector<Difficulty> levels = LevelsWithPerfect(/*perfect_time_ms=*/1000);
  for (Difficulty& d : levels) {
    // Tuned on the rating ladder (games/tictactoe/ladder.txt) to stand 100 points apart: four
    // plies already played this game all but perfectly (42 points below hard), so medium
    // looks two ahead without easy's random moves. Hard plays perfectly, as perfect does.
    if (d.name == "beginner") d.max_depth = 1;
    if (d.name == "easy") {
      d.max_depth = 2;
      d.random_move_chance = 0.2;
    }
    if (d.name == "medium") d.max_depth = 2;
  }
  return levels;
}

bool TicTacToe::HasLine(uint32_t marks) {
  for (uint32_t line : kLines) {
    if ((marks & line) == line) return true;
  }
  return false;
}

uint64_t TicTacToe::CellKey(int player, int cell) {
  return ZobristKey(kSalt, static_cast<uint64_t>(player * 9 + cell));
}

uint64_t TicTacToe::ComputeHash() const {
  uint64_t h = 0;
  for (int p = 0; p < 2; ++p) {
    for (int c = 0; c < 9; ++c) {
      if (marks_[p] & (1u << c)) h ^= CellKey(p, c);
    }
  }
  return h;
}

Score TicTacToe::Evaluate() const {
  // Open lines: each line still free of the opponent counts, more with more own marks in it.
  const int me = SideToMove();
  Score score = 0;
  for (uint32_t line : kLines) {
    int mine = std::popcount(marks_[me] & line);
    int theirs = std::popcount(marks_[1 - me] & line);
    if (theirs == 0) score += mine == 2 ? 10 : mine == 1 ? 3 : 1;
    if (mine == 0) score -= theirs == 2 ? 10 : theirs == 1 ? 3 : 1;
  }
  return score;
}

int TicTacToe::MoveOrderScore(Move cell) const {
  // Centre, then corners, then edges: the number of lines through the cell.
  int lines = 0;
  for (uint32_t line : kLines) lines += (line >> cell) & 1;
  return lines * 100'000;
}

GameStatus TicTacToe::Status() const {
  switch (GetOutcome()) {
    case Outcome::kLoss:
      return {.over = true, .winner = 1 - SideToMove(), .reason = "three in a row"};
    case Outcome::kDraw:
      return {.over = true, .winner = -1, .reason = "the board is full"};
    default:
      return {};
  }
}

std::string TicTacToe::MoveToText(Move cell) const {
  return {static_cast<char>('a' + cell % 3), static_cast<char>('1' + cell / 3)};
}

absl::StatusOr<TicTacToe::Move> TicTacToe::ParseMove(std::string_view text) const {
  text = Trim(text);
  int cell = -1;
  if (text.size() == 2 && text[0] >= 'a' && text[0] <= 'c' && text[1] >= '1' && text[1] <= '3') {
    cell = (text[1] - '1') * 3 + (text[0] - 'a');
  } else if (text.size() == 1 && text[0] >= '1' && text[0] <= '9') {
    cell = text[0] - '1';
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("'", Absl(text), "' is not a cell: expected a1..c3 (or 1..9)"));
  }
  if ((marks_[0] | marks_[1]) & (1u << cell)) {
    return absl::FailedPreconditionError(
        absl::StrCat(MoveToText(static_cast<Move>(cell)), " is already taken"));
  }
  return static_cast<Move>(cell);
}

std::string TicTacToe::Render() const {
  std::string out = "  a b c\n";
  for (int r = 0; r < 3; ++r) {
    out += static_cast<char>('1' + r);
    for (int c = 0; c < 3; ++c) {
      uint32_t bit = 1u << (r * 3 + c);
      out += ' ';
      out += (marks_[0] & bit) ? 'X' : (marks_[1] & bit) ? 'O' : '.';
    }
    out += '\n';
  }
  return out;
}

}  // namespace ply
