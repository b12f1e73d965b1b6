// Nine Men's Morris on the standard 24-point board. White (player 0) and Black each have nine
// pieces. A turn is one of:
//   * placing (while the player still has pieces in hand): a piece goes onto any empty point;
//   * moving (all pieces placed): a piece slides along a line to an adjacent empty point;
//   * flying (all pieces placed and exactly three left on the board): a piece jumps to any
//     empty point.
// A turn that closes a mill (three own pieces on one of the 16 lines, the moved or placed piece
// among them) also removes one opponent piece, chosen by the mover, that is not in a mill; only
// when every opponent piece stands in a mill may one be taken from a mill. When the opponent has
// no piece on the board the mill removes nothing. Closing two mills at once still removes one.
//
// The game ends, checked for the side to move in this order:
//   1. a player with fewer than three pieces (on the board plus in hand) loses;
//   2. a player who has placed all pieces and has no legal move (every piece blocked) loses;
//   3. a draw when 100 plies (50 moves each) pass without a placement or a removal, i.e. the
//      moving phase goes 50 moves each without a mill;
//   4. a draw when the same position (pieces, pieces in hand and side to move) occurs for the
//      third time. Positions can only repeat between two placements or removals, so the state
//      keeps the hashes of the last 128 plies in a ring and the search sees repetitions too.
//
// Options: `flying` (default true); with `flying=false` a player with three pieces keeps moving
// along the lines.
//
// Notation: points a1..g7 as on the usual diagram (columns a..g from the left, rows 1..7 from the
// bottom): `d2` places on d2, `d2-d3` moves (or flies), and a removal follows as `xg7`, e.g.
// `d2xg7` or `a1-a4xg7`. One move is one whole turn, removal included.
//
// Representation: one 24-bit mask per player; points are numbered row by row from the bottom
// (a1 d1 g1 b2 d2 f2 c3 d3 e3 a4 b4 c4 e4 f4 g4 c5 d5 e5 b6 d6 f6 a7 d7 g7), and adjacency and the
// 16 mill lines are bit masks over the same numbering.
#ifndef PLY_ENGINE_GAMES_MORRIS_MORRIS_H_
#define PLY_ENGINE_GAMES_MORRIS_MORRIS_H_

#include <array>
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
#include "engine/games/morris/win_chance.h"
#include "engine/search/difficulty.h"

namespace ply {

namespace morris_internal {

inline constexpr int kPoints = 24;
inline constexpr int kLineCount = 16;
// Each line lists its end, middle and other end.
inline constexpr int kLinePoints[kLineCount][3] = {
    {0, 1, 2},    {3, 4, 5},    {6, 7, 8},   {9, 10, 11}, {12, 13, 14}, {15, 16, 17},
    {18, 19, 20}, {21, 22, 23}, {0, 9, 21},  {3, 10, 18}, {6, 11, 15},  {1, 4, 7},
    {16, 19, 22}, {8, 12, 17},  {5, 13, 20}, {2, 14, 23},
};

struct Tables {
  uint32_t lines[kLineCount] = {};
  uint32_t adjacent[kPoints] = {};
  // The two lines through each point.
  uint32_t lines_of[kPoints][2] = {};
};

constexpr Tables MakeTables() {
  Tables t;
  int count[kPoints] = {};
  for (int l = 0; l < kLineCount; ++l) {
    const int a = kLinePoints[l][0], b = kLinePoints[l][1], c = kLinePoints[l][2];
    t.lines[l] = (1u << a) | (1u << b) | (1u << c);
    t.adjacent[a] |= 1u << b;
    t.adjacent[b] |= (1u << a) | (1u << c);
    t.adjacent[c] |= 1u << b;
    for (int p : {a, b, c}) t.lines_of[p][count[p]++] = t.lines[l];
  }
  return t;
}

inline constexpr Tables kTables = MakeTables();

}  // namespace morris_internal

class Morris {
 public:
  // to | from << 5 | removed << 10, with kNone (24) for "no source" (placing) and "no removal".
  using Move = uint16_t;
  struct UndoInfo {
    uint64_t overwritten_hash = 0;
    uint8_t quiet_plies = 0;
  };
  static constexpr std::string_view kName = "morris";
  // What people read in game lists and on the board (the registry passes it to clients).
  static constexpr std::string_view kTitle = "Nine Men's Morris";
  static constexpr std::string_view kDescription =
      "place, move and fly nine pieces on the 24-point board; a mill takes a piece; three pieces "
      "fly";
  static constexpr std::string_view kSides[2] = {"White", "Black"};
  // How to type a move, in one line.
  static constexpr std::string_view kNotationHint =
      "place d2; move d2-d3; after a mill add the piece taken: d2xg7, a1-a4xg7.";
  // How clients draw it (engine/core/board_look.h) and how analysis reads its scores (its
  // fitted curve, win_chance.h beside this file).
  static constexpr BoardLook kLook{.pieces = {{{'W', "○", "1"}, {'B', "●", "1"}}},
                                   .marks = {{{'.', "·", "2"}, {'-', "─", "2"}, {'|', "│", "2"}}},
                                   .cell_names = "letter-row-up",
                                   .board = "morris",
                                   .background = "#f1e3c3",
                                   .empty = "#6b4b16",
                                   .first = "#f7f7f7",
                                   .second = "#151515",
                                   .lines = "#6b4b16"};
  static constexpr WinChanceCurve kWinChance = kMorrisWinChance;
  static constexpr int kPoints = morris_internal::kPoints;
  static constexpr int kNone = 24;
  static constexpr Move kNoMove = 0xffff;
  // Moving: at most 32 slides (one per line segment), flying: 3 pieces x 12 empty points, each
  // times at most 9 removals; 324 is the most either allows.
  static constexpr int kMaxMoves = 336;
  static constexpr int kHistorySize = (kNone + 1) * kPoints;
  static constexpr bool kPerftCountsFinishedGames = false;
  static constexpr int kPiecesEach = 9;
  // Plies without a placement or removal before the game is drawn.
  static constexpr int kQuietPlyLimit = 100;
  // Hashes kept for repetition; more than kQuietPlyLimit, a power of two.
  static constexpr int kRingSize = 128;

  static constexpr Move MakeMove(int from, int to, int removed) {
    return static_cast<Move>(to | (from << 5) | (removed << 10));
  }
  static constexpr int To(Move m) { return m & 31; }
  static constexpr int From(Move m) { return (m >> 5) & 31; }
  static constexpr int Removed(Move m) { return (m >> 10) & 31; }

  static absl::StatusOr<Morris> Create(const GameOptions& options);
  // A position for puzzles and tests: space- or comma-separated point lists for each side,
  // pieces still in hand, and the side to move. An error names what is impossible.
  static absl::StatusOr<Morris> FromPosition(std::string_view white, std::string_view black,
                                             int white_in_hand, int black_in_hand, Player to_move,
                                             const GameOptions& options = {});
  static std::vector<OptionInfo> OptionInfos();
  static std::vector<Difficulty> Levels();
  GameOptions EffectiveOptions() const;

  void GenerateMoves(MoveList<Move, kMaxMoves>& moves) const;

  void Make(Move m, UndoInfo& undo) {
    const int me = SideToMove();
    const int from = From(m), to = To(m), removed = Removed(m);
    undo.quiet_plies = quiet_plies_;
    bool irreversible = false;
    if (from == kNone) {
      hash_ ^= HandKey(me, hand_[me]) ^ HandKey(me, hand_[me] - 1);
      --hand_[me];
      irreversible = true;
    } else {
      pieces_[me] ^= 1u << from;
      hash_ ^= PointKey(me, from);
    }
    pieces_[me] |= 1u << to;
    hash_ ^= PointKey(me, to) ^ SideKey();
    if (removed != kNone) {
      pieces_[1 - me] ^= 1u << removed;
      hash_ ^= PointKey(1 - me, removed);
      irreversible = true;
    }
    quiet_plies_ = irreversible ? 0 : static_cast<uint8_t>(quiet_plies_ + 1);
    ++ply_;
    uint64_t& slot = ring_[ply_ & (kRingSize - 1)];
    undo.overwritten_hash = slot;
    slot = hash_;
    end_ = ComputeEnd();
  }

  void Unmake(Move m, const UndoInfo& undo) {
    ring_[ply_ & (kRingSize - 1)] = undo.overwritten_hash;
    --ply_;
    quiet_plies_ = undo.quiet_plies;
    end_ = End::kNotOver;
    const int me = SideToMove();
    const int from = From(m), to = To(m), removed = Removed(m);
    if (removed != kNone) {
      pieces_[1 - me] |= 1u << removed;
      hash_ ^= PointKey(1 - me, removed);
    }
    pieces_[me] ^= 1u << to;
    hash_ ^= PointKey(me, to) ^ SideKey();
    if (from == kNone) {
      ++hand_[me];
      hash_ ^= HandKey(me, hand_[me]) ^ HandKey(me, hand_[me] - 1);
    } else {
      pieces_[me] |= 1u << from;
      hash_ ^= PointKey(me, from);
    }
  }

  Outcome GetOutcome() const {
    switch (end_) {
      case End::kNotOver:
        return Outcome::kOngoing;
      case End::kFewerThanThree:
      case End::kBlocked:
        return Outcome::kLoss;
      default:
        return Outcome::kDraw;
    }
  }
  GameStatus Status() const;
  Player SideToMove() const { return ply_ & 1; }

  Score Evaluate() const;
  uint64_t Hash() const { return hash_; }
  uint64_t ComputeHash() const;
  // Mill-closing moves first (taking pieces that threaten mills of their own), then moves that
  // block an opponent's mill, then moves that build own lines.
  int MoveOrderScore(Move m) const;
  static int HistoryIndex(Move m) { return From(m) * kPoints + To(m); }

  std::string MoveToText(Move m) const;
  absl::StatusOr<Move> ParseMove(std::string_view text) const;
  std::string Render() const;

  bool operator==(const Morris&) const = default;

  // Point name ("a1".."g7") of an index, and the index of a name or -1.
  static std::string_view PointName(int point);
  static int PointIndex(std::string_view name);

  bool flying() const { return flying_; }
  uint32_t pieces(Player p) const { return pieces_[p]; }
  int in_hand(Player p) const { return hand_[p]; }
  int quiet_plies() const { return quiet_plies_; }
  // True when `p` may jump to any empty point.
  bool IsFlying(Player p) const {
    return flying_ && hand_[p] == 0 && std::popcount(pieces_[p]) == 3;
  }

 private:
  enum class End : uint8_t { kNotOver, kFewerThanThree, kBlocked, kMoveLimit, kRepetition };

  explicit Morris(bool flying);

  uint32_t Empty() const { return kAllPoints & ~(pieces_[0] | pieces_[1]); }
  static uint64_t PointKey(int player, int point);
  static uint64_t HandKey(int player, int count);
  static uint64_t SideKey();
  // Does `to` complete a line of `own` (own already containing `to`)?
  static bool ClosesMill(uint32_t own, int to) {
    const auto& lines = morris_internal::kTables.lines_of[to];
    return (own & lines[0]) == lines[0] || (own & lines[1]) == lines[1];
  }
  // Opponent pieces a mill may take.
  uint32_t Removable(int opponent) const;
  bool CanSlide(int p) const;
  End ComputeEnd() const;
  int SideScore(int p) const;

  static constexpr uint32_t kAllPoints = (1u << kPoints) - 1;

  bool flying_ = true;
  uint32_t pieces_[2] = {0, 0};
  uint8_t hand_[2] = {kPiecesEach, kPiecesEach};
  uint8_t quiet_plies_ = 0;
  End end_ = End::kNotOver;
  int ply_ = 0;
  uint64_t hash_ = 0;
  // ring_[ply & (kRingSize - 1)] is the hash after that ply.
  std::array<uint64_t, kRingSize> ring_ = {};
};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_MORRIS_MORRIS_H_
