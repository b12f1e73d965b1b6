#include "engine/games/morris/morris.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/core/random.h"
#include "engine/core/text.h"

namespace ply {
namespace {

using morris_internal::kLineCount;
using morris_internal::kTables;

constexpr uint64_t kSalt = 0x4d6f'7272'6973ULL;

// Keys 0..47: a piece of player p on point i (p * 24 + i); 48..67: p holding c pieces in hand
// (48 + p * 10 + c); 68: Black to move.
constexpr int kHandKeyBase = 48;
constexpr int kSideKeyIndex = 68;
constexpr std::array<uint64_t, 69> MakeKeys() {
  std::array<uint64_t, 69> keys{};
  for (int i = 0; i < 69; ++i) keys[i] = ZobristKey(kSalt, static_cast<uint64_t>(i));
  return keys;
}
constexpr std::array<uint64_t, 69> kKeys = MakeKeys();

constexpr std::string_view kPointNames[Morris::kPoints] = {
    "a1", "d1", "g1", "b2", "d2", "f2", "c3", "d3", "e3", "a4", "b4", "c4",
    "e4", "f4", "g4", "c5", "d5", "e5", "b6", "d6", "f6", "a7", "d7", "g7",
};

constexpr const char* kPlayerNames[2] = {"White", "Black"};

// Evaluation weights, in the units of one piece = 300. The placing phase rewards lines that can
// still be completed; the moving phase rewards lines a piece can reach, mobility and "running"
// mills that close again every second move; a flying side threatens every open line at once and
// its mobility means nothing. Mobility and blocked pieces were tuned by fixed-depth self-play:
// weighting them this much (rather than a fifth of it) scored 79% at depth 5 and 70% at depth 7,
// since most games between engines end with one side boxed in.
constexpr int kPieceValue = 300;
constexpr int kMillPlacing = 40;
constexpr int kOpenPlacing = 45;
constexpr int kForkPlacing = 120;
constexpr int kMillMoving = 50;
constexpr int kOpenReachable = 70;
constexpr int kOpenUnreachable = 10;
constexpr int kMobilityPlacing = 8;
constexpr int kBlockedPlacing = 30;
constexpr int kMobility = 15;
constexpr int kBlockedPiece = 100;
constexpr int kNoMobility = 1200;
constexpr int kRunningMill = 250;
constexpr int kMillFlying = 30;
constexpr int kOpenFlying = 110;
constexpr int kForkFlying = 250;

// Move-order tiers; the search's history score (at most 65536) only breaks ties within a tier.
constexpr int kOrderMill = 400'000;
constexpr int kOrderBlock = 150'000;
constexpr int kOrderTakeThreat = 30'000;
constexpr int kOrderBuild = 10'000;

template <class F>
void ForEachBit(uint32_t bits, F&& f) {
  for (; bits != 0; bits &= bits - 1) f(std::countr_zero(bits));
}

}  // namespace

Morris::Morris(bool flying) : flying_(flying) {
  hash_ = ComputeHash();
  ring_[0] = hash_;
}

namespace {
// The option's default, written once: OptionInfos publishes it and Create applies it.
constexpr bool kDefaultFlying = true;
}  // namespace

std::vector<OptionInfo> Morris::OptionInfos() {
  return {{"flying", kDefaultFlying ? "true" : "false",
           "a player reduced to three pieces may move to any empty point"}};
}

std::vector<Difficulty> Morris::Levels() { return DefaultLevels(); }

absl::StatusOr<Morris> Morris::Create(const GameOptions& options) {
  absl::StatusOr<bool> flying = BoolOption(options, "flying", kDefaultFlying);
  if (!flying.ok()) return flying.status();
  return Morris(*flying);
}

GameOptions Morris::EffectiveOptions() const { return {{"flying", flying_ ? "true" : "false"}}; }

absl::StatusOr<Morris> Morris::FromPosition(std::string_view white, std::string_view black,
                                            int white_in_hand, int black_in_hand, Player to_move,
                                            const GameOptions& options) {
  absl::StatusOr<Morris> game = Create(options);
  if (!game.ok()) return game.status();
  if (to_move != 0 && to_move != 1) return absl::InvalidArgumentError("the side to move is 0 or 1");
  const std::string_view lists[2] = {white, black};
  const int hands[2] = {white_in_hand, black_in_hand};
  uint32_t taken = 0;
  for (int p = 0; p < 2; ++p) {
    uint32_t mask = 0;
    for (absl::string_view name :
         absl::StrSplit(Absl(lists[p]), absl::ByAnyChar(" ,"), absl::SkipEmpty())) {
      int point = PointIndex(Std(name));
      if (point < 0) {
        return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a point"));
      }
      if (taken & (1u << point)) {
        return absl::InvalidArgumentError(absl::StrCat(name, " is listed twice"));
      }
      taken |= 1u << point;
      mask |= 1u << point;
    }
    if (hands[p] < 0 || hands[p] > kPiecesEach || std::popcount(mask) + hands[p] > kPiecesEach) {
      return absl::InvalidArgumentError(
          absl::StrCat(kPlayerNames[p], " has more than ", kPiecesEach, " pieces"));
    }
    game->pieces_[p] = mask;
    game->hand_[p] = static_cast<uint8_t>(hands[p]);
  }
  // Placements alternate, White first; once every piece is placed either side may be to move.
  if (white_in_hand + black_in_hand > 0 && black_in_hand - white_in_hand != to_move) {
    return absl::InvalidArgumentError(absl::StrCat(
        "with ", kPlayerNames[to_move], " to move, ", kPlayerNames[1], " must hold ",
        to_move == 0 ? "as many pieces as " : "one more piece than ", kPlayerNames[0]));
  }
  game->ply_ = to_move;
  game->hash_ = game->ComputeHash();
  game->ring_ = {};
  game->ring_[game->ply_] = game->hash_;
  game->end_ = game->ComputeEnd();
  return game;
}

std::string_view Morris::PointName(int point) { return kPointNames[point]; }

int Morris::PointIndex(std::string_view name) {
  for (int i = 0; i < kPoints; ++i) {
    if (kPointNames[i] == name) return i;
  }
  return -1;
}

uint64_t Morris::PointKey(int player, int point) { return kKeys[player * kPoints + point]; }
uint64_t Morris::HandKey(int player, int count) {
  return kKeys[kHandKeyBase + player * 10 + count];
}
uint64_t Morris::SideKey() { return kKeys[kSideKeyIndex]; }

uint64_t Morris::ComputeHash() const {
  uint64_t h = HandKey(0, hand_[0]) ^ HandKey(1, hand_[1]);
  if (SideToMove() == 1) h ^= SideKey();
  for (int p = 0; p < 2; ++p) ForEachBit(pieces_[p], [&](int i) { h ^= PointKey(p, i); });
  return h;
}

uint32_t Morris::Removable(int opponent) const {
  const uint32_t theirs = pieces_[opponent];
  uint32_t in_mill = 0;
  for (uint32_t line : kTables.lines) {
    if ((theirs & line) == line) in_mill |= line;
  }
  const uint32_t outside = theirs & ~in_mill;
  return outside != 0 ? outside : theirs;
}

bool Morris::CanSlide(int p) const {
  const uint32_t empty = Empty();
  for (uint32_t b = pieces_[p]; b != 0; b &= b - 1) {
    if (kTables.adjacent[std::countr_zero(b)] & empty) return true;
  }
  return false;
}

Morris::End Morris::ComputeEnd() const {
  const int me = SideToMove();
  const int on_board = std::popcount(pieces_[me]);
  if (on_board + hand_[me] < 3) return End::kFewerThanThree;
  if (hand_[me] == 0 && !IsFlying(me) && !CanSlide(me)) return End::kBlocked;
  if (quiet_plies_ >= kQuietPlyLimit) return End::kMoveLimit;
  // A position recurs at the earliest four plies later, so a third time needs eight.
  if (quiet_plies_ >= 8) {
    int seen = 0;
    for (int back = 4; back <= quiet_plies_; back += 2) {
      if (ring_[(ply_ - back) & (kRingSize - 1)] == hash_ && ++seen == 2) return End::kRepetition;
    }
  }
  return End::kNotOver;
}

void Morris::GenerateMoves(MoveList<Move, kMaxMoves>& moves) const {
  const int me = SideToMove();
  const uint32_t own = pieces_[me];
  const uint32_t empty = Empty();
  // Computed only when some move closes a mill.
  uint32_t removable = 0;
  bool removable_known = false;
  auto add = [&](int from, int to, uint32_t own_after) {
    if (!ClosesMill(own_after, to)) {
      moves.push_back(MakeMove(from, to, kNone));
      return;
    }
    if (!removable_known) {
      removable = Removable(1 - me);
      removable_known = true;
    }
    if (removable == 0) {
      moves.push_back(MakeMove(from, to, kNone));
      return;
    }
    ForEachBit(removable, [&](int r) { moves.push_back(MakeMove(from, to, r)); });
  };
  if (hand_[me] > 0) {
    ForEachBit(empty, [&](int to) { add(kNone, to, own | (1u << to)); });
    return;
  }
  const bool flying = IsFlying(me);
  ForEachBit(own, [&](int from) {
    const uint32_t rest = own ^ (1u << from);
    const uint32_t targets = flying ? empty : kTables.adjacent[from] & empty;
    ForEachBit(targets, [&](int to) { add(from, to, rest | (1u << to)); });
  });
}

int Morris::SideScore(int p) const {
  const uint32_t own = pieces_[p];
  const uint32_t theirs = pieces_[1 - p];
  const uint32_t empty = Empty();
  const bool placing = hand_[0] + hand_[1] > 0;
  const bool flying = IsFlying(p);

  int score = (std::popcount(own) + hand_[p]) * kPieceValue;
  int mills = 0, open_reachable = 0, open_unreachable = 0;
  uint32_t open_points = 0, fork_points = 0;
  for (uint32_t line : kTables.lines) {
    const int n = std::popcount(own & line);
    if (n == 3) {
      ++mills;
    } else if (n == 2 && (theirs & line) == 0) {
      const uint32_t point = line & empty;
      fork_points |= open_points & point;
      open_points |= point;
      // Sliding: the gap counts when a piece from off the line stands next to it.
      if (kTables.adjacent[std::countr_zero(point)] & own & ~line) {
        ++open_reachable;
      } else {
        ++open_unreachable;
      }
    }
  }
  const int open = open_reachable + open_unreachable;
  const int forks = std::popcount(fork_points);
  if (flying && !placing) {
    return score + mills * kMillFlying + open * kOpenFlying + forks * kForkFlying;
  }

  int mobility = 0, blocked = 0, running = 0;
  ForEachBit(own, [&](int q) {
    const uint32_t free = kTables.adjacent[q] & empty;
    mobility += std::popcount(free);
    if (free == 0) ++blocked;
    if (placing || mills == 0) return;
    const auto& through_q = kTables.lines_of[q];
    if ((own & through_q[0]) != through_q[0] && (own & through_q[1]) != through_q[1]) return;
    // q leaves its mill for a neighbour where it closes another: a mill every second move.
    ForEachBit(free, [&](int e) {
      for (uint32_t line : kTables.lines_of[e]) {
        if ((line & (1u << q)) == 0 && (own & line) == (line & ~(1u << e))) ++running;
      }
    });
  });
  if (placing) {
    // Mobility already counts here: the moving phase often opens with a side boxed in.
    return score + mills * kMillPlacing + open * kOpenPlacing + forks * kForkPlacing +
           mobility * kMobilityPlacing - blocked * kBlockedPlacing;
  }
  score += mills * kMillMoving + open_reachable * kOpenReachable +
           open_unreachable * kOpenUnreachable + mobility * kMobility - blocked * kBlockedPiece +
           running * kRunningMill;
  // A side that cannot move loses as soon as it is its turn.
  if (mobility == 0) score -= kNoMobility;
  return score;
}

Score Morris::Evaluate() const {
  const int me = SideToMove();
  return std::clamp(SideScore(me) - SideScore(1 - me), -kMaxEval, kMaxEval);
}

int Morris::MoveOrderScore(Move m) const {
  const int me = SideToMove();
  const int from = From(m), to = To(m), removed = Removed(m);
  const uint32_t theirs = pieces_[1 - me];
  uint32_t own_after = pieces_[me] | (1u << to);
  if (from != kNone) own_after ^= 1u << from;
  int score = 0;
  if (removed != kNone || ClosesMill(own_after, to)) score += kOrderMill;
  if (removed != kNone) {
    // Take a piece from a line the opponent is about to complete.
    for (uint32_t line : kTables.lines_of[removed]) {
      if (std::popcount(theirs & line) == 2 && (own_after & line) == 0) score += kOrderTakeThreat;
    }
  }
  for (uint32_t line : kTables.lines_of[to]) {
    if (std::popcount(theirs & line) == 2) score += kOrderBlock;
    if (std::popcount(own_after & line) == 2 && (theirs & line) == 0) score += kOrderBuild;
  }
  return score;
}

GameStatus Morris::Status() const {
  const int loser = SideToMove();
  switch (end_) {
    case End::kNotOver:
      return {};
    case End::kFewerThanThree:
      return {.over = true, .winner = 1 - loser, .reason = "fewer than three pieces left"};
    case End::kBlocked:
      return {.over = true, .winner = 1 - loser, .reason = "no legal move"};
    case End::kMoveLimit:
      return {.over = true, .winner = -1, .reason = "50 moves each without a mill"};
    case End::kRepetition:
      return {.over = true, .winner = -1, .reason = "threefold repetition"};
  }
  return {};
}

std::string Morris::MoveToText(Move m) const {
  std::string out;
  if (From(m) != kNone) absl::StrAppend(&out, Absl(PointName(From(m))), "-");
  absl::StrAppend(&out, Absl(PointName(To(m))));
  if (Removed(m) != kNone) absl::StrAppend(&out, "x", Absl(PointName(Removed(m))));
  return out;
}

absl::StatusOr<Morris::Move> Morris::ParseMove(std::string_view raw) const {
  std::string text(Trim(raw));
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a move: expected a point like d2, a move like d2-d3, ",
                     "and a removal like xg7 after a mill"));
  };
  // point ['-' point] ['x' point]
  int from = kNone, to = kNone, removed = kNone;
  size_t pos = 0;
  auto point = [&](int* out) {
    if (pos + 2 > text.size()) return false;
    std::string_view name(text.data() + pos, 2);
    const bool shape = name[0] >= 'a' && name[0] <= 'g' && name[1] >= '1' && name[1] <= '7';
    *out = PointIndex(name);
    pos += 2;
    return shape;
  };
  if (!point(&to)) return bad();
  if (to < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(text.substr(0, 2), " is not a point of the board"));
  }
  if (pos < text.size() && text[pos] == '-') {
    ++pos;
    from = to;
    if (!point(&to)) return bad();
  }
  if (pos < text.size() && text[pos] == 'x') {
    ++pos;
    if (!point(&removed)) return bad();
  }
  if (pos != text.size()) return bad();
  if (to < 0 || removed < 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' names a point not on the board"));
  }

  if (end_ != End::kNotOver) {
    return absl::FailedPreconditionError(absl::StrCat("the game is over (", Status().reason, ")"));
  }
  const int me = SideToMove();
  const char* name = kPlayerNames[me];
  const char* other = kPlayerNames[1 - me];
  if (hand_[me] > 0 && from != kNone) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " still has ", hand_[me], " pieces to place: name only the point, e.g. ",
                     Absl(PointName(to))));
  }
  if (hand_[me] == 0 && from == kNone) {
    return absl::FailedPreconditionError(absl::StrCat(
        name, " has placed every piece: a move goes from a point to another, e.g. d2-d3"));
  }
  if (from != kNone && (pieces_[me] & (1u << from)) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("there is no ", name, " piece on ", Absl(PointName(from))));
  }
  if ((Empty() & (1u << to)) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(Absl(PointName(to)), " is not empty"));
  }
  if (from != kNone && !IsFlying(me) && (kTables.adjacent[from] & (1u << to)) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(Absl(PointName(from)), " and ", Absl(PointName(to)),
                     " are not adjacent (only a player with three pieces left may fly)"));
  }
  uint32_t own_after = pieces_[me] | (1u << to);
  if (from != kNone) own_after ^= 1u << from;
  const Move plain = MakeMove(from, to, kNone);
  if (!ClosesMill(own_after, to)) {
    if (removed != kNone) {
      return absl::FailedPreconditionError(
          absl::StrCat(MoveToText(plain), " closes no mill, so it removes no piece"));
    }
    return plain;
  }
  const uint32_t removable = Removable(1 - me);
  if (removable == 0) {
    if (removed != kNone) {
      return absl::FailedPreconditionError(
          absl::StrCat(other, " has no piece on the board to remove"));
    }
    return plain;
  }
  if (removed == kNone) {
    return absl::FailedPreconditionError(absl::StrCat(
        MoveToText(plain), " closes a mill: add the ", other, " piece to remove, e.g. ",
        MoveToText(plain), "x", Absl(PointName(std::countr_zero(removable)))));
  }
  if ((pieces_[1 - me] & (1u << removed)) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("there is no ", other, " piece on ", Absl(PointName(removed))));
  }
  if ((removable & (1u << removed)) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(Absl(PointName(removed)), " stands in a mill and ", other,
                     " has pieces outside mills: remove one of those"));
  }
  return MakeMove(from, to, removed);
}

std::string Morris::Render() const {
  // 13 text rows (rows 7..1 and the lines between them) by 25 columns (a..g, four apart).
  constexpr int kWidth = 25, kHeight = 13;
  char grid[kHeight][kWidth];
  for (auto& row : grid) std::fill(std::begin(row), std::end(row), ' ');
  auto x_of = [](int point) { return (kPointNames[point][0] - 'a') * 4; };
  auto y_of = [](int point) { return ('7' - kPointNames[point][1]) * 2; };
  for (const auto& line : morris_internal::kLinePoints) {
    const int x0 = x_of(line[0]), y0 = y_of(line[0]), x1 = x_of(line[2]), y1 = y_of(line[2]);
    for (int x = std::min(x0, x1); x <= std::max(x0, x1); ++x) {
      for (int y = std::min(y0, y1); y <= std::max(y0, y1); ++y) grid[y][x] = y0 == y1 ? '-' : '|';
    }
  }
  for (int i = 0; i < kPoints; ++i) {
    const char c = (pieces_[0] >> i) & 1 ? 'W' : (pieces_[1] >> i) & 1 ? 'B' : '.';
    grid[y_of(i)][x_of(i)] = c;
  }
  std::string out;
  for (int y = 0; y < kHeight; ++y) {
    out += y % 2 == 0 ? static_cast<char>('7' - y / 2) : ' ';
    out += ' ';
    std::string row(grid[y], kWidth);
    row.erase(row.find_last_not_of(' ') + 1);
    out += row;
    out += '\n';
  }
  out += "  a   b   c   d   e   f   g\n";
  for (int p = 0; p < 2; ++p) {
    absl::StrAppend(&out, p == SideToMove() ? "* " : "  ", kPlayerNames[p], " (",
                    p == 0 ? "W" : "B", "): ", std::popcount(pieces_[p]), " on the board, ",
                    hand_[p], " in hand", IsFlying(p) ? ", flying" : "", "\n");
  }
  return out;
}

}  // namespace ply
