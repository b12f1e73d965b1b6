// Tic-Tac-Toe on 3x3: X (player 0) and O alternate placing a mark; three in a row, column or
// diagonal wins; a full board without one is a draw. No options. This is also the "plain 3x3"
// preset of the Tic-Tac-Two family.
//
// Notation: a cell as column letter and row number, `a1` top-left to `c3` bottom-right. The
// digits 1..9 (left to right, top to bottom) are accepted too.
#ifndef PLY_ENGINE_GAMES_TICTACTOE_TICTACTOE_H_
#define PLY_ENGINE_GAMES_TICTACTOE_TICTACTOE_H_

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/board_look.h"
#include "engine/core/move_list.h"
#include "engine/core/options.h"
#include "engine/core/types.h"
#include "engine/games/tictactoe/win_chance.h"
#include "engine/search/difficulty.h"

namespace ply {

class TicTacToe {
 public:
  // A move is a cell, 0..8, row by row from the top-left.
  using Move = uint8_t;
  struct UndoInfo {};
  static constexpr std::string_view kName = "tictactoe";
  // What people read in game lists and on the board (the registry passes it to clients).
  static constexpr std::string_view kTitle = "Tic-Tac-Toe";
  static constexpr std::string_view kDescription = "three in a row on a 3x3 board";
  static constexpr std::string_view kSides[2] = {"X", "O"};
  // How to type a move, in one line.
  static constexpr std::string_view kNotationHint = "a cell, a1 (top left) to c3, or 1 to 9.";
  // How clients draw it (engine/core/board_look.h) and how analysis reads its scores (its
  // fitted curve, win_chance.h beside this file).
  static constexpr BoardLook kLook{.pieces = {{{'X', "X", "1;31"}, {'O', "O", "1;34"}}},
                                   .marks = {{{'.', "·", "2"}}},
                                   .piece_shape = "crosses-and-noughts",
                                   .first = "#1b4f9c",
                                   .second = "#b3261e"};
  static constexpr WinChanceCurve kWinChance = kTictactoeWinChance;
  static constexpr Move kNoMove = 0xff;
  static constexpr int kMaxMoves = 9;
  static constexpr int kHistorySize = 9;
  static constexpr bool kPerftCountsFinishedGames = false;

  static absl::StatusOr<TicTacToe> Create(const GameOptions& options);
  static std::vector<OptionInfo> OptionInfos() { return {}; }
  static std::vector<Difficulty> Levels();
  GameOptions EffectiveOptions() const { return {}; }

  void GenerateMoves(MoveList<Move, kMaxMoves>& moves) const {
    for (uint32_t empty = ~(marks_[0] | marks_[1]) & kFull; empty != 0; empty &= empty - 1) {
      moves.push_back(static_cast<Move>(std::countr_zero(empty)));
    }
  }
  void Make(Move cell, UndoInfo&) {
    int p = SideToMove();
    marks_[p] |= 1u << cell;
    hash_ ^= CellKey(p, cell);
    ++ply_;
    last_move_won_ = HasLine(marks_[p]);
  }
  void Unmake(Move cell, const UndoInfo&) {
    --ply_;
    int p = SideToMove();
    marks_[p] &= ~(1u << cell);
    hash_ ^= CellKey(p, cell);
    last_move_won_ = false;
  }
  Outcome GetOutcome() const {
    if (last_move_won_) return Outcome::kLoss;
    return ply_ == 9 ? Outcome::kDraw : Outcome::kOngoing;
  }
  GameStatus Status() const;
  Player SideToMove() const { return ply_ & 1; }

  Score Evaluate() const;
  uint64_t Hash() const { return hash_; }
  uint64_t ComputeHash() const;
  int MoveOrderScore(Move cell) const;
  static int HistoryIndex(Move cell) { return cell; }

  std::string MoveToText(Move cell) const;
  absl::StatusOr<Move> ParseMove(std::string_view text) const;
  std::string Render() const;

  bool operator==(const TicTacToe&) const = default;

  static bool HasLine(uint32_t marks);

 private:
  static constexpr uint32_t kFull = 0x1ff;
  static uint64_t CellKey(int player, int cell);

  uint32_t marks_[2] = {0, 0};
  uint64_t hash_ = 0;
  int ply_ = 0;
  bool last_move_won_ = false;
};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_TICTACTOE_TICTACTOE_H_
