#include "engine/games/draughts/draughts.h"

#include <algorithm>
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "engine/core/display_text.h"
#include "engine/core/random.h"
#include "engine/core/text.h"

namespace ply {
namespace {

using MoveListD = MoveList<DraughtsMove, Draughts::kMaxMoves>;
using Board = Draughts::Board;

// Rows 0, 2, 4, 6 (squares on columns b, d, f, h) and rows 1, 3, 5, 7 (columns a, c, e, g).
constexpr uint32_t kEvenRows = 0x0f0f0f0f;
constexpr uint32_t kOddRows = 0xf0f0f0f0;
// Column h (squares 4, 12, 20, 28) and column a (squares 5, 13, 21, 29).
constexpr uint32_t kColumnH = 0x08080808;
constexpr uint32_t kColumnA = 0x10101010;
// The row where each side's men are crowned: Black's on 29-32, White's on 1-4.
constexpr uint32_t kCrownRow[2] = {0xf0000000, 0x0000000f};

constexpr uint32_t Shift(uint32_t b, int d) {
  switch (d) {
    case Draughts::kUpLeft:
      return ((b & kEvenRows) >> 4) | ((b & kOddRows & ~kColumnA) >> 5);
    case Draughts::kUpRight:
      return ((b & kEvenRows & ~kColumnH) >> 3) | ((b & kOddRows) >> 4);
    case Draughts::kDownLeft:
      return ((b & kEvenRows) << 4) | ((b & kOddRows & ~kColumnA) << 3);
    default:
      return ((b & kEvenRows & ~kColumnH) << 5) | ((b & kOddRows) << 4);
  }
}

constexpr int Opposite(int d) { return 3 - d; }
// Men move down for Black (player 0) and up for White.
constexpr bool Forward(int player, int d) { return (d >> 1) != player; }

struct StepTables {
  int8_t neighbour[4][32];
  int8_t landing[4][32];
};

constexpr StepTables MakeStepTables() {
  StepTables t{};
  for (int d = 0; d < 4; ++d) {
    for (int s = 0; s < 32; ++s) {
      uint32_t n = Shift(1u << s, d);
      uint32_t l = Shift(n, d);
      t.neighbour[d][s] = static_cast<int8_t>(n ? std::countr_zero(n) : -1);
      t.landing[d][s] = static_cast<int8_t>(l ? std::countr_zero(l) : -1);
    }
  }
  return t;
}
constexpr StepTables kSteps = MakeStepTables();

constexpr uint64_t kSalt = 0xd4a9'6875'0000ULL;
// Keys for (player * 2 + king) * 32 + square, then the side to move.
constexpr std::array<uint64_t, 129> MakeKeys() {
  std::array<uint64_t, 129> k{};
  for (int i = 0; i < 129; ++i) k[i] = ZobristKey(kSalt, static_cast<uint64_t>(i));
  return k;
}
constexpr std::array<uint64_t, 129> kKeys = MakeKeys();
constexpr uint64_t kSideKey = kKeys[128];

constexpr uint64_t Key(int player, bool king, int square) {
  return kKeys[(player * 2 + (king ? 1 : 0)) * 32 + square];
}

constexpr int Row(int square) { return square >> 2; }
constexpr int Column(int square) { return 2 * (square & 3) + ((Row(square) & 1) ? 0 : 1); }

// The squares a man of `player` on `square` could ever reach: the widening triangle ahead of it.
// No opponent piece inside it and no opponent king anywhere means nothing can stop it.
struct Cones {
  uint32_t cone[2][32];
};
constexpr Cones MakeCones() {
  Cones c{};
  for (int p = 0; p < 2; ++p) {
    for (int s = 0; s < 32; ++s) {
      uint32_t front = 1u << s, all = 0;
      for (int i = 0; i < 7; ++i) {
        front = p == 0 ? Shift(front, Draughts::kDownLeft) | Shift(front, Draughts::kDownRight)
                       : Shift(front, Draughts::kUpLeft) | Shift(front, Draughts::kUpRight);
        all |= front;
      }
      c.cone[p][s] = all;
    }
  }
  return c;
}
constexpr Cones kCones = MakeCones();

void Push(MoveListD& moves, DraughtsMove m) {
  if (moves.size() < Draughts::kMaxMoves) moves.push_back(m);
}

// Extends a jump sequence of a piece that stands on `at` after `jumps` jumps (its starting square
// is in `bits`). `capturable` are the opponent pieces not yet jumped.
void ExtendJumps(int player, bool king, int at, uint32_t capturable, uint32_t empty, uint64_t bits,
                 int jumps, MoveListD& moves) {
  bool extended = false;
  for (int d = 0; d < 4; ++d) {
    if (!king && !Forward(player, d)) continue;
    int over = kSteps.neighbour[d][at];
    int land = kSteps.landing[d][at];
    if (land < 0 || !((capturable >> over) & 1) || !((empty >> land) & 1)) continue;
    extended = true;
    uint64_t next = bits | (uint64_t{1} << over) |
                    (static_cast<uint64_t>(d) << (DraughtsMove::kPathShift + 2 * jumps));
    if (!king && ((1u << land) & kCrownRow[player])) {
      // Crowning ends the move.
      Push(moves, {next | static_cast<uint64_t>(land) << 37});
    } else {
      ExtendJumps(player, king, land, capturable & ~(1u << over), empty, next, jumps + 1, moves);
    }
  }
  if (!extended && jumps > 0) Push(moves, {bits | static_cast<uint64_t>(at) << 37});
}

// Pieces of the side to move that can jump now.
uint32_t Jumpers(const Board& b) {
  const int p = b.side;
  const uint32_t own = b.pieces[p], opp = b.pieces[1 - p], empty = b.Empty();
  uint32_t jumpers = 0;
  for (int d = 0; d < 4; ++d) {
    uint32_t movers = Forward(p, d) ? own : own & b.kings;
    jumpers |= movers & Shift(Shift(empty, Opposite(d)) & opp, Opposite(d));
  }
  return jumpers;
}

// Plays `m` on a bare board (no hash, no history): for the evaluation's capture resolution.
Board Apply(Board b, DraughtsMove m) {
  const int p = b.side;
  const uint32_t from = 1u << m.from(), to = 1u << m.to();
  const bool king = b.kings & from;
  b.pieces[p] ^= from ^ to;
  b.pieces[1 - p] &= ~m.captured();
  b.kings &= ~m.captured();
  if (king || (to & kCrownRow[p])) b.kings = (b.kings & ~from) | to;
  b.side ^= 1;
  return b;
}

// Evaluation weights, in hundredths of a man.
constexpr int kManValue = 100;
constexpr int kKingValue = 150;
// By rows advanced from the man's own back row.
constexpr int kAdvance[8] = {0, 1, 2, 4, 6, 9, 12, 0};
constexpr int kBackRowGuard = 6;
constexpr int kBridgeBonus = 8;  // Black's 1 and 3, White's 30 and 32
constexpr uint32_t kBridge[2] = {0x00000005, 0xa0000000};
constexpr uint32_t kBackRow[2] = {0x0000000f, 0xf0000000};
constexpr uint32_t kCentre = (1u << 13) | (1u << 14) | (1u << 17) | (1u << 18);  // 14 15 18 19
constexpr uint32_t kNearCentre = (1u << 9) | (1u << 10) | (1u << 21) | (1u << 22);
constexpr uint32_t kEdges = kColumnA | kColumnH | 0xf000000f;
constexpr int kMobility = 2;
constexpr int kRunaway = 50;
// Resolving pending captures in the evaluation stops after this many jumps in a row.
constexpr int kMaxCaptureChain = 8;
// In endings the side ahead brings its kings to the opponent's pieces (a lead alone does not
// win: the kings must hunt), per square of distance.
constexpr int kEndingPieces = 10;
constexpr int kHunt = 4;

constexpr int Distance(int a, int b) {
  int dr = Row(a) - Row(b), dc = Column(a) - Column(b);
  return std::max(dr < 0 ? -dr : dr, dc < 0 ? -dc : dc);
}

// Sum over `hunters` of the distance to the nearest of `prey`.
int HuntDistance(uint32_t hunters, uint32_t prey) {
  int total = 0;
  for (; hunters != 0; hunters &= hunters - 1) {
    int h = std::countr_zero(hunters), nearest = 7;
    for (uint32_t p = prey; p != 0; p &= p - 1) {
      nearest = std::min(nearest, Distance(h, std::countr_zero(p)));
    }
    total += nearest;
  }
  return total;
}

struct SideTerms {
  int material = 0;
  int positional = 0;
};

SideTerms EvalSide(const Board& b, int p) {
  const uint32_t own = b.pieces[p], opp = b.pieces[1 - p];
  const uint32_t men = own & ~b.kings, kings = own & b.kings;
  const uint32_t opp_men = opp & ~b.kings, opp_kings = opp & b.kings;
  SideTerms t;
  t.material = kManValue * std::popcount(men) + kKingValue * std::popcount(kings);
  int pos = 0;
  for (uint32_t m = men; m != 0; m &= m - 1) {
    int sq = std::countr_zero(m);
    int advanced = p == 0 ? Row(sq) : 7 - Row(sq);
    pos += kAdvance[advanced];
    if ((kCones.cone[p][sq] & opp) == 0) {
      // Nothing stands between this man and the crown: worth nearly a king when far ahead of
      // any king that could chase it.
      int bonus = kRunaway - 5 * (7 - advanced);
      pos += opp_kings ? bonus / 3 : bonus;
    }
  }
  // The back row stops the opponent's men from crowning, as long as there are men to stop.
  if (opp_men != 0) {
    pos += kBackRowGuard * std::popcount(men & kBackRow[p]);
    pos += kBridgeBonus * std::popcount(men & kBridge[p]);
  }
  pos += 6 * std::popcount(men & kCentre) + 4 * std::popcount(kings & kCentre);
  pos += 2 * std::popcount(own & kNearCentre);
  pos -= 6 * std::popcount(kings & kEdges);
  // Mobility: squares the side's pieces could step to.
  const uint32_t empty = b.Empty();
  int steps = 0;
  for (int d = 0; d < 4; ++d) {
    uint32_t movers = Forward(p, d) ? own : kings;
    steps += std::popcount(Shift(movers, d) & empty);
  }
  pos += kMobility * steps;
  t.positional = pos;
  return t;
}

Score Resolve(const Board& b, Score alpha, Score beta, int chain) {
  if (chain >= kMaxCaptureChain || Jumpers(b) == 0) {
    return Draughts::HasMove(b) ? Draughts::StaticEval(b) : -kMaxEval / 2;
  }
  MoveListD moves;
  Draughts::Generate(b, moves);
  Score best = -kMaxEval;
  for (DraughtsMove m : moves) {
    Score s = -Resolve(Apply(b, m), -beta, -alpha, chain + 1);
    if (s > best) {
      best = s;
      if (s > alpha) alpha = s;
      if (alpha >= beta) break;
    }
  }
  return best;
}

char PieceChar(const Board& b, int sq) {
  uint32_t bit = 1u << sq;
  bool king = b.kings & bit;
  if (b.pieces[0] & bit) return king ? 'B' : 'b';
  if (b.pieces[1] & bit) return king ? 'W' : 'w';
  return 0;
}

}  // namespace

Draughts::Draughts() {
  board_.pieces[0] = 0x00000fff;  // 1-12
  board_.pieces[1] = 0xfff00000;  // 21-32
  hash_ = ComputeHash();
}

absl::StatusOr<Draughts> Draughts::Create(const GameOptions&) { return Draughts(); }

std::vector<Difficulty> Draughts::Levels() {
  std::vector<Difficulty> levels = DefaultLevels();
  for (Difficulty& d : levels) {
    if (d.name == "medium") d.max_depth = 8;
    // Noise of four men's worth drowned the evaluation: beginner lost to random moves.
    if (d.name == "beginner") d.eval_noise = 150;
  }
  return levels;
}

void Draughts::Generate(const Board& b, MoveListD& moves) {
  const int p = b.side;
  const uint32_t own = b.pieces[p], opp = b.pieces[1 - p], empty = b.Empty();
  if (uint32_t jumpers = Jumpers(b); jumpers != 0) {
    for (; jumpers != 0; jumpers &= jumpers - 1) {
      int sq = std::countr_zero(jumpers);
      // The jumping piece has left its square, so it may land there again.
      ExtendJumps(p, (b.kings >> sq) & 1, sq, opp, empty | (1u << sq),
                  static_cast<uint64_t>(sq) << 32, 0, moves);
    }
    return;
  }
  for (int d = 0; d < 4; ++d) {
    uint32_t movers = Forward(p, d) ? own : own & b.kings;
    for (uint32_t targets = Shift(movers, d) & empty; targets != 0; targets &= targets - 1) {
      int to = std::countr_zero(targets);
      Push(moves, Move::Simple(kSteps.neighbour[Opposite(d)][to], to));
    }
  }
}

bool Draughts::HasMove(const Board& b) {
  const int p = b.side;
  const uint32_t own = b.pieces[p], opp = b.pieces[1 - p], empty = b.Empty();
  for (int d = 0; d < 4; ++d) {
    uint32_t movers = Forward(p, d) ? own : own & b.kings;
    uint32_t next = Shift(movers, d);
    if ((next & empty) || (Shift(next & opp, d) & empty)) return true;
  }
  return false;
}

void Draughts::Make(Move m, UndoInfo& undo) {
  const int p = board_.side;
  const int from_sq = m.from(), to_sq = m.to();
  const uint32_t from = 1u << from_sq, to = 1u << to_sq;
  const uint32_t captured = m.captured();
  const bool king = board_.kings & from;
  const uint64_t hash_before = hash_;

  // from ^ to is empty when a king's jumps bring it back to its square.
  board_.pieces[p] ^= from ^ to;
  hash_ ^= Key(p, king, from_sq) ^ Key(p, king, to_sq);
  if (king) board_.kings ^= from ^ to;

  undo.captured_kings = captured & board_.kings;
  if (captured != 0) {
    board_.pieces[1 - p] ^= captured;
    board_.kings &= ~captured;
    for (uint32_t c = captured; c != 0; c &= c - 1) {
      int sq = std::countr_zero(c);
      hash_ ^= Key(1 - p, (undo.captured_kings >> sq) & 1, sq);
    }
  }

  undo.crowned = !king && (to & kCrownRow[p]);
  if (undo.crowned) {
    board_.kings |= to;
    hash_ ^= Key(p, false, to_sq) ^ Key(p, true, to_sq);
  }

  undo.reversible_plies = static_cast<uint8_t>(reversible_plies_);
  if (king && captured == 0) {
    if (reversible_plies_ < kDrawPlies) {
      undo.overwritten_history = history_[reversible_plies_];
      history_[reversible_plies_++] = hash_before;
    }
  } else {
    reversible_plies_ = 0;
  }

  board_.side ^= 1;
  hash_ ^= kSideKey;
  ++ply_;
  // A repetition needs at least four king moves since the first occurrence.
  repeated_ = reversible_plies_ >= 4 && IsRepetition();
}

void Draughts::Unmake(Move m, const UndoInfo& undo) {
  board_.side ^= 1;
  hash_ ^= kSideKey;
  --ply_;
  repeated_ = false;
  const int p = board_.side;
  const int from_sq = m.from(), to_sq = m.to();
  const uint32_t from = 1u << from_sq, to = 1u << to_sq;
  const uint32_t captured = m.captured();

  if (undo.crowned) {
    board_.kings &= ~to;
    hash_ ^= Key(p, false, to_sq) ^ Key(p, true, to_sq);
  }
  const bool king = board_.kings & to;
  board_.pieces[p] ^= from ^ to;
  hash_ ^= Key(p, king, from_sq) ^ Key(p, king, to_sq);
  if (king) board_.kings ^= from ^ to;

  if (captured != 0) {
    board_.pieces[1 - p] |= captured;
    board_.kings |= undo.captured_kings;
    for (uint32_t c = captured; c != 0; c &= c - 1) {
      int sq = std::countr_zero(c);
      hash_ ^= Key(1 - p, (undo.captured_kings >> sq) & 1, sq);
    }
  }

  if (king && captured == 0 && undo.reversible_plies < kDrawPlies) {
    history_[undo.reversible_plies] = undo.overwritten_history;
  }
  reversible_plies_ = undo.reversible_plies;
}

bool Draughts::IsRepetition() const {
  // Only positions with the same side to move can be equal: every other entry, from the one two
  // plies back.
  int seen = 0;
  for (int i = reversible_plies_ - 2; i >= 0; i -= 2) {
    if (history_[i] == hash_ && ++seen == 2) return true;
  }
  return false;
}

uint64_t Draughts::ComputeHash() const {
  uint64_t h = 0;
  for (int p = 0; p < 2; ++p) {
    for (uint32_t b = board_.pieces[p]; b != 0; b &= b - 1) {
      int sq = std::countr_zero(b);
      h ^= Key(p, (board_.kings >> sq) & 1, sq);
    }
  }
  if (board_.side == 1) h ^= kSideKey;
  return h;
}

GameStatus Draughts::Status() const {
  switch (GetOutcome()) {
    case Outcome::kLoss:
      return {.over = true,
              .winner = 1 - SideToMove(),
              .reason = board_.pieces[SideToMove()] == 0 ? "no pieces left" : "no legal move"};
    case Outcome::kDraw:
      return {.over = true,
              .winner = -1,
              .reason = repeated_ ? "threefold repetition"
                                  : "40 moves each without a capture or a man move"};
    default:
      return {};
  }
}

Score Draughts::StaticEval(const Board& b) {
  const int me = b.side;
  SideTerms mine = EvalSide(b, me), theirs = EvalSide(b, 1 - me);
  int score = mine.material - theirs.material + mine.positional - theirs.positional;
  // Ahead in material, trade down: the same lead counts for more with fewer pieces left.
  int pieces = std::popcount(b.pieces[0] | b.pieces[1]);
  score += (mine.material - theirs.material) * (24 - pieces) / 48;
  if (pieces <= kEndingPieces && mine.material != theirs.material) {
    const int strong = mine.material > theirs.material ? me : 1 - me;
    int hunt = kHunt * HuntDistance(b.pieces[strong] & b.kings, b.pieces[1 - strong]);
    score += strong == me ? -hunt : hunt;
  }
  return static_cast<Score>(std::clamp(score, -kMaxEval / 2, kMaxEval / 2));
}

Score Draughts::Evaluate() const {
  // Captures are forced, so a position with a jump pending is judged after the jumps (and any
  // jumps back) have been played out: the search has no quiescence of its own.
  if (Jumpers(board_) == 0) return StaticEval(board_);
  return Resolve(board_, -kMaxEval, kMaxEval, 0);
}

int Draughts::MoveOrderScore(Move m) const {
  const uint32_t to = 1u << m.to();
  const bool crowns = !(board_.kings & (1u << m.from())) && (to & kCrownRow[board_.side]);
  int score = crowns ? 150'000 : 0;
  if (m.is_capture()) {
    score += 200'000 + 20'000 * m.jumps() + 5'000 * std::popcount(m.captured() & board_.kings);
  }
  return score;
}

std::string Draughts::MoveToText(Move m) const {
  int at = m.from();
  std::string text = std::to_string(at + 1);
  if (!m.is_capture()) return absl::StrCat(text, "-", m.to() + 1);
  for (int i = 0; i < m.jumps(); ++i) {
    at = kSteps.landing[m.direction(i)][at];
    absl::StrAppend(&text, "x", at + 1);
  }
  return text;
}

absl::StatusOr<Draughts::Move> Draughts::ParseMove(std::string_view text) const {
  text = Trim(text);
  std::vector<int> squares;
  for (absl::string_view part : absl::StrSplit(Absl(text), absl::ByAnyChar("-xX:"))) {
    int sq = 0;
    if (!ParseInt(Std(part), &sq) || sq < 1 || sq > 32) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", Absl(text),
                       "' is not a draughts move: expected squares 1-32 as in 11-15, 22x15 or "
                       "22x15x6"));
    }
    squares.push_back(sq - 1);
  }
  if (squares.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", Absl(text), "' is not a draughts move: expected 11-15, 22x15 or 22x15x6"));
  }

  MoveListD moves;
  if (GetOutcome() == Outcome::kOngoing) GenerateMoves(moves);
  std::vector<Move> matches;
  for (Move m : moves) {
    if (m.from() != squares.front() || m.to() != squares.back()) continue;
    if (squares.size() > 2) {
      // A full path: every landing square must match.
      if (!m.is_capture() || m.jumps() + 1 != static_cast<int>(squares.size())) continue;
      bool same = true;
      int at = m.from();
      for (int i = 0; i < m.jumps() && same; ++i) {
        at = kSteps.landing[m.direction(i)][at];
        same = at == squares[i + 1];
      }
      if (!same) continue;
    }
    matches.push_back(m);
  }
  if (matches.size() == 1) return matches[0];
  if (matches.size() > 1) {
    std::vector<std::string> paths;
    for (Move m : matches) paths.push_back(MoveToText(m));
    return absl::FailedPreconditionError(absl::StrCat(
        "'", Absl(text), "' is ambiguous: give the whole path (", absl::StrJoin(paths, ", "), ")"));
  }
  if (GetOutcome() != Outcome::kOngoing) {
    return absl::FailedPreconditionError("the game is over");
  }
  if (moves[0].is_capture()) {
    std::vector<std::string> jumps;
    for (Move m : moves) jumps.push_back(MoveToText(m));
    return absl::FailedPreconditionError(absl::StrCat("'", Absl(text),
                                                      "' is not legal here: capturing is "
                                                      "mandatory (",
                                                      absl::StrJoin(jumps, ", "), ")"));
  }
  return absl::FailedPreconditionError(absl::StrCat("'", Absl(text), "' is not a legal move for ",
                                                    SideToMove() == 0 ? "Black" : "White"));
}

std::string Draughts::Render() const {
  // Empty dark squares show their number; b/w are men, B/W kings. Black moves down the page.
  std::string out;
  for (int row = 0; row < 8; ++row) {
    for (int col = 0; col < 8; ++col) {
      if (((row + col) & 1) == 0) {
        out += "   ";
        continue;
      }
      int sq = row * 4 + (row & 1 ? col : col - 1) / 2;
      char c = PieceChar(board_, sq);
      if (c != 0) {
        out += "  ";
        out += c;
      } else {
        absl::StrAppend(&out, sq + 1 < 10 ? "  " : " ", sq + 1);
      }
    }
    absl::StrAppend(&out, "    ", row * 4 + 1, "-", row * 4 + 4, "\n");
  }
  absl::StrAppend(&out, SideToMove() == 0 ? "Black (b)" : "White (w)",
                  " to move; B and W are kings\n");
  return out;
}

std::string Draughts::ToFen() const {
  std::string out = board_.side == 0 ? "B" : "W";
  for (int p : {1, 0}) {
    std::vector<std::string> squares;
    for (uint32_t b = board_.pieces[p]; b != 0; b &= b - 1) {
      int sq = std::countr_zero(b);
      squares.push_back(absl::StrCat((board_.kings >> sq) & 1 ? "K" : "", sq + 1));
    }
    absl::StrAppend(&out, ":", p == 0 ? "B" : "W", absl::StrJoin(squares, ","));
  }
  return out;
}

absl::StatusOr<Draughts> Draughts::FromFen(std::string_view fen) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad FEN '", Absl(fen), "': ", Absl(why),
                                                   " (expected e.g. B:W21,22,K30:B1,2,K9)"));
  };
  std::string text(Trim(fen));
  // PDN tags may quote the value.
  text.erase(std::remove(text.begin(), text.end(), '"'), text.end());
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() != 3) return bad("it needs the side to move and two piece lists");
  Draughts g;
  g.board_ = Board{};
  std::string turn(Trim(parts[0]));
  if (turn != "B" && turn != "W") return bad("the side to move must be B or W");
  g.board_.side = turn == "B" ? 0 : 1;
  bool seen[2] = {false, false};
  for (int i = 1; i < 3; ++i) {
    std::string_view list = Trim(parts[i]);
    if (list.empty() || (list[0] != 'B' && list[0] != 'W')) {
      return bad("each piece list starts with B or W");
    }
    int p = list[0] == 'B' ? 0 : 1;
    if (seen[p]) return bad("a colour is listed twice");
    seen[p] = true;
    list.remove_prefix(1);
    if (Trim(list).empty()) continue;
    for (absl::string_view item : absl::StrSplit(Absl(list), ',')) {
      std::string_view s = Trim(Std(item));
      bool king = !s.empty() && (s[0] == 'K' || s[0] == 'k');
      if (king) s.remove_prefix(1);
      // A range such as 1-12 is a common shorthand.
      int lo = 0, hi = 0;
      std::vector<std::string> ends = absl::StrSplit(Absl(s), '-');
      if (ends.size() > 2 || !ParseInt(ends[0], &lo) || !ParseInt(ends.back(), &hi) || lo < 1 ||
          hi > 32 || lo > hi) {
        return bad(absl::StrCat("'", Absl(s), "' is not a square 1-32"));
      }
      for (int sq = lo - 1; sq < hi; ++sq) {
        uint32_t bit = 1u << sq;
        if ((g.board_.pieces[0] | g.board_.pieces[1]) & bit) {
          return bad(absl::StrCat("square ", sq + 1, " is taken twice"));
        }
        if (!king && (bit & kCrownRow[p])) {
          return bad(absl::StrCat("a man on ", sq + 1, " would have been crowned"));
        }
        g.board_.pieces[p] |= bit;
        if (king) g.board_.kings |= bit;
      }
    }
  }
  g.hash_ = g.ComputeHash();
  return g;
}

absl::StatusOr<std::string> ExportPdn(const std::vector<std::string>& moves, const PdnTags& tags) {
  auto find = [&](std::string_view name) -> const std::string* {
    for (const auto& [k, v] : tags) {
      if (k == name) return &v;
    }
    return nullptr;
  };
  absl::StatusOr<Draughts> start =
      find("FEN") != nullptr ? Draughts::FromFen(*find("FEN")) : Draughts::Create({});
  if (!start.ok()) return start.status();
  Draughts game = *start;
  const int first_side = game.SideToMove();

  // Replay to validate the moves and write them with their full paths.
  std::vector<std::string> texts;
  for (size_t i = 0; i < moves.size(); ++i) {
    absl::StatusOr<Draughts::Move> m = game.ParseMove(moves[i]);
    if (!m.ok()) {
      return absl::Status(m.status().code(), absl::StrCat("move ", i + 1, " '", moves[i],
                                                          "': ", m.status().message()));
    }
    texts.push_back(game.MoveToText(*m));
    Draughts::UndoInfo undo;
    game.Make(*m, undo);
  }

  std::string result = "*";
  if (const std::string* r = find("Result")) {
    result = *r;
  } else if (GameStatus s = game.Status(); s.over) {
    result = s.winner == 0 ? "1-0" : s.winner == 1 ? "0-1" : "1/2-1/2";
  }

  std::string out;
  // Tag values come from people (names) or other programs: escaped, so none can close its tag
  // and forge another.
  for (const char* name : {"Event", "Site", "Date", "Round", "Black", "White"}) {
    const std::string* v = find(name);
    absl::StrAppend(&out, "[", name, " \"", v != nullptr ? PdnTagValue(*v) : "?", "\"]\n");
  }
  absl::StrAppend(&out, "[Result \"", PdnTagValue(result), "\"]\n");
  if (find("GameType") == nullptr) absl::StrAppend(&out, "[GameType \"21\"]\n");
  for (const auto& [k, v] : tags) {
    if (k == "Event" || k == "Site" || k == "Date" || k == "Round" || k == "Black" ||
        k == "White" || k == "Result") {
      continue;
    }
    // A tag name is a symbol: letters, digits and underscores; anything else is left out.
    if (k.empty() || !std::all_of(k.begin(), k.end(), [](char c) {
          return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
        })) {
      continue;
    }
    if (k == "FEN" && find("SetUp") == nullptr) absl::StrAppend(&out, "[SetUp \"1\"]\n");
    absl::StrAppend(&out, "[", k, " \"", PdnTagValue(v), "\"]\n");
  }
  out += "\n";

  // Movetext: numbered moves, Black's then White's, wrapped before 80 columns.
  std::vector<std::string> tokens;
  int number = 1;
  for (size_t i = 0; i < texts.size(); ++i) {
    int side = (first_side + static_cast<int>(i)) & 1;
    if (side == 0) {
      tokens.push_back(absl::StrCat(number, "."));
    } else if (i == 0) {
      tokens.push_back(absl::StrCat(number, "..."));
    }
    tokens.push_back(texts[i]);
    if (side == 1) ++number;
  }
  tokens.push_back(result);
  size_t column = 0;
  for (const std::string& t : tokens) {
    if (column > 0 && column + 1 + t.size() > 79) {
      out += "\n";
      column = 0;
    } else if (column > 0) {
      out += " ";
      ++column;
    }
    out += t;
    column += t.size();
  }
  out += "\n";
  return out;
}

absl::StatusOr<std::string> Draughts::ExportRecord(std::string_view format,
                                                   const std::vector<std::string>& moves,
                                                   const RecordHeader& header) {
  if (format != "pdn") {
    return absl::InvalidArgumentError(
        absl::StrCat("draughts has no record format '", Absl(format), "' (its formats: pdn)"));
  }
  PdnTags tags;
  if (!header.event.empty()) tags.push_back({"Event", header.event});
  if (!header.site.empty()) tags.push_back({"Site", header.site});
  // PDN writes dates as YYYY.MM.DD.
  if (!header.date.empty())
    tags.push_back({"Date", absl::StrReplaceAll(header.date, {{"-", "."}})});
  if (header.players.size() == 2) {
    // ExportPdn escapes tag values itself.
    tags.push_back({"Black", header.players[0]});
    tags.push_back({"White", header.players[1]});
  }
  if (header.winner) {
    const int w = *header.winner;
    tags.push_back({"Result", w < 0 ? "1/2-1/2" : w == 0 ? "1-0" : "0-1"});
  }
  return ExportPdn(moves, tags);
}

}  // namespace ply
