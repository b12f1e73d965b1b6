// English draughts (checkers, the WCDF rules) on 8x8. Each side starts with twelve men on the
// dark squares of its first three rows; Black (player 0) moves first. Men move one square
// diagonally forward, kings one square diagonally either way. Capturing is mandatory: when any
// jump exists the side must jump (but may choose which jump), and a multi-jump continues while
// the jumping piece can jump again. A whole multi-jump is one move. A man that reaches the far row
// is crowned and its move ends there, even if the new king could jump on. The moving piece's
// starting square counts as empty during its jumps, so a king may come back to it. A side with
// no legal move (blocked, or without pieces) loses.
//
// Draw rule: the game is drawn when 80 plies (40 moves by each side) in a row were made by kings
// without capturing, or when a position (pieces, kings and side to move) occurs for the third
// time. Only king moves without a capture can repeat a position, so the state keeps the hashes
// since the last capture or man move in a fixed array; make/undo restore it exactly and the
// search sees repetitions through GetOutcome.
//
// No options.
//
// Notation: the standard square numbers 1..32. Seen with Black at the top, square 1 is in the top
// row, second from the left (b8), numbered left to right and top to bottom; Black starts on 1-12
// and White on 21-32. A move is `11-15`, a jump `22x15`, a multi-jump lists every landing square
// (`22x15x6`), so two paths that end on the same square are different moves. ParseMove also takes
// the short form `22x6` when exactly one jump path goes from 22 to 6. Records export as PDN
// (ExportPdn below), positions as PDN FEN tags (`B:W21,22,K30:B1,2,3`).
//
// Representation: three 32-bit bitboards (pieces of each side, kings), bit i = square i + 1.
// Rows alternate between squares on columns b,d,f,h (rows 0,2,4,6 from the top) and a,c,e,g, so
// each diagonal step is a shift by 3, 4 or 5 with an edge mask.
#ifndef PLY_ENGINE_GAMES_DRAUGHTS_DRAUGHTS_H_
#define PLY_ENGINE_GAMES_DRAUGHTS_DRAUGHTS_H_

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/board_look.h"
#include "engine/core/move_list.h"
#include "engine/core/options.h"
#include "engine/core/record.h"
#include "engine/core/types.h"
#include "engine/games/draughts/win_chance.h"
#include "engine/search/difficulty.h"

namespace ply {

// A whole turn: the starting square, the final square, the captured squares and the direction of
// every jump (so that the path, not just its end, identifies the move). Bits 0-31: captured
// squares; 32-36: from; 37-41: to; 46-63: two bits per jump, in order. A king captures at most
// nine pieces in one move (the landing squares of one piece form a graph with nine edges), so
// eighteen bits hold any path.
struct DraughtsMove {
  uint64_t bits = 0;

  static constexpr int kPathShift = 46;
  static constexpr int kMaxJumps = 9;

  static constexpr DraughtsMove Simple(int from, int to) {
    return {static_cast<uint64_t>(from) << 32 | static_cast<uint64_t>(to) << 37};
  }
  constexpr int from() const { return static_cast<int>(bits >> 32) & 31; }
  constexpr int to() const { return static_cast<int>(bits >> 37) & 31; }
  constexpr uint32_t captured() const { return static_cast<uint32_t>(bits); }
  constexpr bool is_capture() const { return captured() != 0; }
  constexpr int jumps() const { return std::popcount(captured()); }
  // Direction of jump i (see Draughts::Direction).
  constexpr int direction(int i) const {
    return static_cast<int>(bits >> (kPathShift + 2 * i)) & 3;
  }

  bool operator==(const DraughtsMove&) const = default;
};
static_assert(DraughtsMove::kPathShift + 2 * DraughtsMove::kMaxJumps <= 64);

class Draughts {
 public:
  using Move = DraughtsMove;
  struct UndoInfo {
    uint64_t overwritten_history = 0;  // the history slot a king move wrote over
    uint32_t captured_kings = 0;
    uint8_t reversible_plies = 0;  // before the move
    bool crowned = false;
  };
  static constexpr std::string_view kName = "draughts";
  // What people read in game lists and on the board (the registry passes it to clients).
  static constexpr std::string_view kTitle = "English draughts";
  static constexpr std::string_view kDescription =
      "checkers on 8x8: mandatory captures, multi-jumps, kings; standard square numbers 1-32";
  static constexpr std::string_view kSides[2] = {"Black", "White"};
  // How to type a move, in one line.
  static constexpr std::string_view kNotationHint =
      "squares 1-32: 11-15; jumps 22x15, several: 22x15x6.";
  // How clients draw it (engine/core/board_look.h) and how analysis reads its scores (its
  // fitted curve, win_chance.h beside this file).
  static constexpr BoardLook kLook{
      // White in the terminal's own foreground colour: bright white vanishes on a light
      // background, and the foreground is readable on any.
      .pieces = {{{'b', "●", "1;31"}, {'w', "○", "1"}, {'B', "◉", "1;31"}, {'W', "◎", "1"}}},
      .caption_from = "B and W are kings",
      .caption_to = "{B} {W} are kings",
      .flip_for_first_seat = true,
      .turn_cells = 8,
      .turn_cell_width = 3,
      .cell_names = "dark-squares",
      .board = "dark-squares",
      .background = "#f0d9b5",
      .empty = "#8b5a2b",
      .first = "#1b1b1b",
      .second = "#f2f2f2",
      .lines = "#5a3a1a"};
  static constexpr WinChanceCurve kWinChance = kDraughtsWinChance;
  // The record formats ExportRecord writes.
  static constexpr std::string_view kRecordFormats[1] = {"pdn"};
  // The game from the standard position through `moves` in a record format: "pdn" (ExportPdn
  // with the header's facts as the seven-tag roster). INVALID_ARGUMENT for another format.
  static absl::StatusOr<std::string> ExportRecord(std::string_view format,
                                                  const std::vector<std::string>& moves,
                                                  const RecordHeader& header);
  static constexpr Move kNoMove = {};
  // Far above any position from play; generation stops adding moves at the capacity.
  static constexpr int kMaxMoves = 128;
  static constexpr int kHistorySize = 32 * 32;
  static constexpr bool kPerftCountsFinishedGames = false;
  // Plies without a capture or man move that draw the game.
  static constexpr int kDrawPlies = 80;

  // Directions: towards square 1 (up) or 32 (down), to the left or right as Black sees the board
  // from the top. Black men move down, White men up.
  enum Direction { kUpLeft = 0, kUpRight = 1, kDownLeft = 2, kDownRight = 3 };

  // The pieces: the part of the state that move generation and evaluation look at.
  struct Board {
    uint32_t pieces[2] = {0, 0};
    uint32_t kings = 0;
    int side = 0;

    uint32_t Empty() const { return ~(pieces[0] | pieces[1]); }
    bool operator==(const Board&) const = default;
  };

  static absl::StatusOr<Draughts> Create(const GameOptions& options);
  static std::vector<OptionInfo> OptionInfos() { return {}; }
  static std::vector<Difficulty> Levels();
  GameOptions EffectiveOptions() const { return {}; }

  // A position from a PDN FEN tag value such as `W:W21,K30:B1,2,K9`, with no history.
  static absl::StatusOr<Draughts> FromFen(std::string_view fen);
  std::string ToFen() const;

  void GenerateMoves(MoveList<Move, kMaxMoves>& moves) const { Generate(board_, moves); }
  void Make(Move m, UndoInfo& undo);
  void Unmake(Move m, const UndoInfo& undo);

  Outcome GetOutcome() const {
    if (!HasMove(board_)) return Outcome::kLoss;
    if (repeated_ || reversible_plies_ >= kDrawPlies) return Outcome::kDraw;
    return Outcome::kOngoing;
  }
  GameStatus Status() const;
  Player SideToMove() const { return board_.side; }

  Score Evaluate() const;
  uint64_t Hash() const { return hash_; }
  uint64_t ComputeHash() const;
  // Captures first (longer ones before shorter, kings taken before men), then crowning moves.
  int MoveOrderScore(Move m) const;
  static int HistoryIndex(Move m) { return m.from() * 32 + m.to(); }

  std::string MoveToText(Move m) const;
  absl::StatusOr<Move> ParseMove(std::string_view text) const;
  std::string Render() const;

  bool operator==(const Draughts&) const = default;

  const Board& board() const { return board_; }
  int reversible_plies() const { return reversible_plies_; }

  // Legal moves of `board`'s side to move; exposed for the evaluation's capture resolution.
  static void Generate(const Board& board, MoveList<Move, kMaxMoves>& moves);
  static bool HasMove(const Board& board);
  // The static evaluation of `board` for its side to move, ignoring pending captures.
  static Score StaticEval(const Board& board);

 private:
  Draughts();
  bool IsRepetition() const;

  Board board_;
  uint64_t hash_ = 0;
  int ply_ = 0;
  int reversible_plies_ = 0;
  bool repeated_ = false;
  // history_[i], i < reversible_plies_: hashes of the positions since the last capture or man
  // move, oldest first, the current position excluded.
  uint64_t history_[kDrawPlies] = {};
};

// PDN tags for a record, in the order given; the seven-tag roster (Event, Site, Date, Round,
// Black, White, Result) is filled in with "?" (or the result of the game) where missing.
using PdnTags = std::vector<std::pair<std::string, std::string>>;

// A PDN record of the game that starts from the standard position (or from the position in a
// `FEN` tag) and plays `moves` (any notation ParseMove accepts; written with full jump paths).
// The result is "1-0" when Black (the first player) won, "0-1" when White won, "1/2-1/2" for a
// draw and "*" while the game goes on, unless a Result tag is given (a resignation, a time loss).
// INVALID_ARGUMENT or FAILED_PRECONDITION when a move is not legal, naming it.
absl::StatusOr<std::string> ExportPdn(const std::vector<std::string>& moves,
                                      const PdnTags& tags = {});

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_DRAUGHTS_DRAUGHTS_H_
