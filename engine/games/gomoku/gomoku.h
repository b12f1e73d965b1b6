// Gomoku: Black (player 0) and White alternate placing a stone on an empty intersection of a
// square board; the first to make an unbroken line of five, horizontally, vertically or
// diagonally, wins. No opening restrictions (no swap, no renju fouls). A full board without a
// winning line is a draw, so every game ends within size * size moves.
//
// Options: `size` (default 15, any size 5..20; 20 is the Gomocup free-style board) and
// `rule`: `freestyle` (default: five or more in a row wins) or `exact` (exactly five wins; an
// overline of six or more does not, and a four that can only grow into an overline is no
// threat). The overline rule lives in one place: IsFive in the line-shape table (gomoku_tables.cc).
//
// Notation: column letter and row number, `h8` (the centre of 15x15): columns a.. from the
// left, rows 1.. from the bottom, as Gomoku records are written.
//
// Moves for people and for the AI: GenerateMoves yields every empty cell (perft, the registry,
// ParseMove); GenerateSearchMoves yields the AI's candidates, narrowed by the threats on the
// board: a five is played at once, a four is blocked, a win by continuous fours (VCF, found by a
// small threat search at every node) is followed, and against an open three or an opponent's
// VCF only blocks on its cells and fours of our own are tried. This is the threat extension:
// forcing lines cost the search one move a ply, so it reads them far deeper than the quiet
// ones. A quiet position yields the best ten cells by move order among those within distance 2
// of a stone (the centre on an empty board).
//
// Representation: a padded mailbox (two rings of wall cells around the board, stride
// kStride) so that walking along a line stops at a wall without bounds checks. For every cell
// and direction the engine keeps the line around the cell (four cells each side, five under the
// exact rule) as one key for both players (empty / Black / White / off the board, two bits a
// cell), updated incrementally by Make/Unmake; a table turns a key into the shapes both players
// make by playing there (five, open four, four, open three, three, open two, two). Per cell and
// player these four shapes fold into a class (win, winning four, four-three, ...) and a value
// (move generation and order); the class counts are kept incrementally. The evaluation is
// stone-centred: every stone is ranked along its four lines by the windows of five it can still
// complete (a table on the same keys, so each rank is kept incrementally too), the side to move's
// sum less the opponent's, overridden by the threats that decide the game: a five to play, two
// to block, a winning four, and a VCF the side to move has, or the opponent has once a four is
// blocked. The evaluation runs that VCF search itself, so a line of
// fours cut off by the depth still counts as won. The threat searches (VCF, VCT) are in
// gomoku_threats.cc, the root checks around the search in gomoku_root.cc.
#ifndef PLY_ENGINE_GAMES_GOMOKU_GOMOKU_H_
#define PLY_ENGINE_GAMES_GOMOKU_GOMOKU_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "engine/core/board_look.h"
#include "engine/core/move_list.h"
#include "engine/core/options.h"
#include "engine/core/random.h"
#include "engine/core/types.h"
#include "engine/games/gomoku/win_chance.h"
#include "engine/search/difficulty.h"
#include "engine/search/search.h"

namespace ply {

class Gomoku {
 public:
  static constexpr int kMaxSize = 20;
  static constexpr int kPad = 2;
  static constexpr int kStride = kMaxSize + 2 * kPad;
  static constexpr int kCells = kStride * kStride;

  // A move is a padded cell index: (y + kPad) * kStride + (x + kPad), y counted from the top.
  using Move = uint16_t;
  struct UndoInfo {};
  static constexpr std::string_view kName = "gomoku";
  // What people read in game lists and on the board (the registry passes it to clients).
  static constexpr std::string_view kTitle = "Gomoku";
  static constexpr std::string_view kDescription =
      "five in a row on a 15x15 board (sizes 5..20; free-style or exact five)";
  static constexpr std::string_view kSides[2] = {"Black", "White"};
  // How to type a move, in one line.
  static constexpr std::string_view kNotationHint = "a point such as h8 (a1 is bottom left).";
  // How clients draw it (engine/core/board_look.h) and how analysis reads its scores (its
  // fitted curve, win_chance.h beside this file).
  static constexpr BoardLook kLook{.pieces = {{{'X', "●", "1"}, {'O', "○", "1"}}},
                                   .marks = {{{'.', "·", "2"}}},
                                   .cell_names = "letter-row-up",
                                   .board = "intersections",
                                   .background = "#e3b96a",
                                   .empty = "none",
                                   .lines = "#6b4b16"};
  static constexpr WinChanceCurve kWinChance = kGomokuWinChance;
  static constexpr Move kNoMove = 0;  // a wall cell, never a legal move
  static constexpr int kMaxMoves = kMaxSize * kMaxSize;
  static constexpr int kHistorySize = kCells;
  static constexpr bool kPerftCountsFinishedGames = false;

  // What a player makes in one direction by playing a cell, weakest first. "Open" shapes have
  // two ways to grow (an open four has two cells that make five), closed ones one.
  enum Shape : uint8_t {
    kDead,  // no five can ever pass through the cell in this direction
    kOne,
    kTwo,
    kOpenTwo,
    kThree,
    kOpenThree,
    kFour,
    kOpenFour,  // also two fours on one line
    kFive,
    kShapeCount
  };
  // The four shapes of a cell folded together, weakest first: what playing there threatens.
  enum CellClass : uint8_t {
    kQuiet,
    kMakesOpenThree,
    kMakesFour,
    kMakesDoubleThree,  // two open threes
    kMakesFourThree,    // a four and an open three
    kMakesWinningFour,  // an open four or two fours: wins unless the opponent has a five
    kMakesFive,
    kClassCount
  };

  static absl::StatusOr<Gomoku> Create(const GameOptions& options);
  static std::vector<OptionInfo> OptionInfos();
  // The default levels, plus `greedy`: the classic one-ply pattern-score player (a baseline,
  // reached through PlayPolicy below, not a search).
  static std::vector<Difficulty> Levels();
  GameOptions EffectiveOptions() const;

  void GenerateMoves(MoveList<Move, kMaxMoves>& moves) const;
  // The AI's candidates (threat-narrowed, then the best quiet cells), less the root moves
  // SearchRoot found lost (ExcludeAtRoot) when this is the position it was asked about.
  void GenerateSearchMoves(MoveList<Move, kMaxMoves>& moves) const;

  void Make(Move cell, UndoInfo&);
  void Unmake(Move cell, const UndoInfo&);

  Outcome GetOutcome() const {
    if (last_move_won_) return Outcome::kLoss;
    return stones_ == size_ * size_ ? Outcome::kDraw : Outcome::kOngoing;
  }
  GameStatus Status() const;
  Player SideToMove() const { return stones_ & 1; }

  Score Evaluate() const;
  // Evaluate() of the position once `m` (an empty cell) is played, without playing it: for the
  // search's leaves, most of which need no more than the class counts and the stones' ranks
  // after the move (the lines through `m` read, nothing written; Make and Unmake cost about
  // twice that). False, with `eval` unset, where the leaf needs the position itself: when the
  // move fills the board or the mover has or makes a five cell (a four), or when the side to
  // move after it has a four and the VCF memo has no answer for that position.
  bool EvaluateAfter(Move m, Score& eval) const;
  uint64_t Hash() const { return hash_; }
  // Hash() once `m` is played (the search loads its table entry while Make runs).
  uint64_t HashAfter(Move m) const { return hash_ ^ CellKey(SideToMove(), m); }
  uint64_t ComputeHash() const;
  // Whether the search may play the table's move before making its list: an empty cell (the
  // same position lists it; a stale or colliding entry's cell is still a legal move).
  bool IsSearchMove(Move m) const { return m < kCells && board_[m] == kEmptyCell; }
  // Winning and forcing cells first, then by attack plus (slightly more) defence value.
  int MoveOrderScore(Move cell) const;
  static int HistoryIndex(Move cell) { return cell; }

  std::string MoveToText(Move cell) const;
  absl::StatusOr<Move> ParseMove(std::string_view text) const;
  std::string Render() const;

  bool operator==(const Gomoku&) const = default;

  // The game-specific players named by a level's `policy`: "greedy" (GreedyMove); nullopt for
  // any other name.
  static std::optional<SearchResult<Move>> PlayPolicy(Gomoku& game, std::string_view policy,
                                                      const SearchLimits& limits);
  // The classic greedy Gomoku AI: for every empty cell, the sum over the four directions of the
  // pattern weight it makes for the side to move plus that of the pattern it takes away from
  // the opponent; the best cell wins, ties broken by `seed`.
  Move GreedyMove(uint64_t seed) const;
  // A forced win by continuous fours for the side to move (every attacking move makes a four,
  // every defence is the one forced block; when that block makes a four of the defender's, the
  // next attack must take its five cell, so the line goes on only where that cell is a four of
  // the attacker's too), searched up to `max_depth` (at most 20) attacking moves and
  // `max_nodes` positions. Returns the first attacking move, or kNoMove. The game is unchanged.
  // `nodes_used`, when given, receives the positions it visited (its cost, at most max_nodes).
  Move FindVcf(int max_depth, int max_nodes, int64_t* nodes_used = nullptr);
  static constexpr int kMaxVcfDepth = 20;
  // A forced win by continuous threats (VCT) for the side to move: every attacking move makes
  // a four or an open three (one stone from an open four); after the first, a move that makes
  // only a four or only an open three is one on the lines of the attacker's last threat, within
  // four cells of it (a four-three or a double three may be anywhere). A four has one answer, the
  // block; a three is answered by every cell where the attacker would make a winning four, every
  // cell within reach on the lines that make it one where the attacker would make a four (no
  // other stone stops that winning four), and every four of the defender's (which
  // the attacker blocks before the defender answers again), and it fails outright if the
  // defender has an open four to make or a win by fours (VCF) of its own. When the defender
  // has a four to complete, the attacker's move is the block, and the line goes on if the block
  // wins (a double four), makes a four or an open three, or leaves one standing. A position
  // proved won or lost once is not searched again within the call (nor remembered after it). Up to
  // `max_depth` (at most 20) attacking moves a line, deepened one attack a pass so that a short
  // win is found before long lines spend the budget, and `max_nodes` moves in all, after a VCF
  // search of the same size (a win by fours is one by threats, found sooner); returns the first
  // attacking move or kNoMove; the game is unchanged. Like the VCF, an open four counts as won when
  // the defender has no five to play. `nodes_used` as for FindVcf (both searches together: at most
  // 2 * max_nodes). `fours_searched`: the caller has just run FindVcf on this position, at least
  // as deep and as large, and it found nothing; the VCF search is not repeated.
  Move FindVct(int max_depth, int max_nodes, int64_t* nodes_used = nullptr,
               bool fours_searched = false);
  static constexpr int kMaxVcfPath = 2 * kMaxVcfDepth + 1;

  // The alpha-beta search with threat checks around it at the root, at every level: a move the
  // level's random-move chance makes random (the roll the search makes, PlaysRandomMove) is left to
  // `search` alone, and the threats searches reach RootVctDepth(limits); the search keeps the
  // level's depth cap and noise. Before the search: a win by continuous fours (up to kMaxVcfDepth
  // attacks), then one by continuous threats, is played at once; then every candidate is checked
  // for a win of the opponent's by fours or threats after it (passes of doubling size from
  // kRootFilterFirstNodes, within kRootFilterPercent of the budget), and those proved lost are left
  // out of the search (ExcludeAtRoot; all of them stay when all are lost). After it: when the
  // search's move (not a proven result, nor checked safe before) lets the opponent win by fours or
  // threats, the first of the other candidates (move order, at most kRootAlternatives) that does
  // not is played instead; when none does, or the budget runs out first, the search's move stands.
  // The solvers' positions count as nodes and their time as time: all of it comes out of `limits`
  // (the search runs on what the checks before it left, less a tenth of the budget kept for the
  // checks after it), so the result's nodes never exceed a node budget and its time passes the
  // budget only by one threats search's overrun (they cannot be stopped midway; the checks before
  // the search size theirs to the time left).
  // `search` runs the alpha-beta search (the caller's searcher and reports); `note`, when
  // given, receives a line saying what the checks changed (empty when nothing). The registry's
  // search (GameAdapter) goes through it for every Gomoku level that searches, pbrain-ply too.
  using RootSearch = absl::FunctionRef<SearchResult<Move>(const SearchLimits&)>;
  static SearchResult<Move> SearchRoot(Gomoku& game, const SearchLimits& limits, RootSearch search,
                                       std::string* note = nullptr);
  // How a Gomoku search spends a clock budget, in the lobby's levels and pbrain-ply alike (the
  // registry's GameAdapter calls it for every search, pbrain-ply for its own): no iteration
  // starts once 60% of the budget is spent (the search's default stops at 40%: Gomoku's
  // iterations grow more slowly than that rule assumes), and the iteration running at the
  // deadline still counts for the root moves it finished (keep_partial_iteration). Limits
  // without a clock, or with their own soft limit, keep theirs.
  static void SetTimeUse(SearchLimits& limits) {
    if (limits.time_ms <= 0) return;
    if (limits.soft_time_ms == 0) limits.soft_time_ms = limits.time_ms * 6 / 10;
    limits.keep_partial_iteration = true;
  }
  static constexpr int kRootVctDepth = 10;
  static_assert(kRootVctDepth <= kMaxVcfDepth);  // the fours searched first reach as far
  // How many attacking moves SearchRoot's threats searches (its own win, the opponent's after
  // each candidate) look ahead at a level: kRootVctDepth at full strength, and one less than
  // the depth cap of a level that has one (beginner 1, easy 2, medium 4), so that a level that
  // misses deeper plans in its search misses them at its root too. Wins by continuous fours are
  // searched to kMaxVcfDepth at every level (the search's own look-up, ProbeVcf, finds them at
  // every node anyway).
  static int RootVctDepth(const SearchLimits& limits) {
    return limits.max_depth > 0 ? std::clamp(limits.max_depth - 1, 1, kRootVctDepth)
                                : kRootVctDepth;
  }
  static constexpr int kRootAlternatives = 8;
  // SearchRoot's checks of the candidates before the search: the first pass's size in
  // positions, the share of the budget (in hundredths) they may spend, and what the budget's
  // time is taken to be worth in positions (the threat search's speed: 1.3-1.9 M a second on
  // this machine, less a margin for a loaded one). Candidates a pass does not reach stay in.
  static constexpr int kRootFilterFirstNodes = 1000;
  static constexpr int kMaxRootFilterNodes = 256000;
  static constexpr int kRootFilterPercent = 30;
  static constexpr int kVctNodesPerMs = 1000;

  // Until cleared, GenerateSearchMoves leaves out `moves` in this position (the same hash and
  // stone count; the count only grows along a search line, so no other position of a search
  // from here matches): the search does not spend its time on root moves already proved lost.
  // Part of the game's state (copies and == see it).
  void ExcludeAtRoot(const MoveList<Move, kMaxMoves>& moves);
  void ClearRootExclusions() {
    excluded_stones_ = -1;
    excluded_hash_ = 0;
    std::fill(std::begin(excluded_), std::end(excluded_), 0);
  }

  // Recomputes every incrementally kept table (line keys, shape sums, classes, class
  // counts, the cell sets, the near counts, the hash) from the stones alone and names the first
  // that differs; empty when all agree. For tests: it scans the whole board.
  std::string CheckIncrementalState() const;
  // For tests: for every cell where a player makes a plain four in a position the VCF search
  // would try it in (no five or winning four to make, none for the opponent either), checks that
  // FourLeadsNowhere calls it a dead end only when playing it and its block on a copy shows one;
  // names the first cell where it does not, empty when none. `dead_ends` counts those it called.
  std::string CheckFourDeadEnds(int* dead_ends) const;

  int size() const { return size_; }
  bool exact_five() const { return exact_; }
  int stones() const { return stones_; }
  static constexpr Move CellAt(int x, int y) {
    return static_cast<Move>((y + kPad) * kStride + x + kPad);
  }
  static constexpr int XOf(Move cell) { return cell % kStride - kPad; }
  static constexpr int YOf(Move cell) { return cell / kStride - kPad; }
  bool IsEmpty(Move cell) const { return board_[cell] == kEmptyCell; }
  // 0 or 1 for a stone of that player, -1 for an empty cell.
  int StoneAt(int x, int y) const;
  Shape ShapeAt(Player p, Move cell, int direction) const;
  CellClass ClassAt(Player p, Move cell) const { return static_cast<CellClass>(class_[p][cell]); }

 private:
  static constexpr uint8_t kEmptyCell = 0;
  static constexpr uint8_t kWall = 3;
  static constexpr int kDirections[4] = {1, kStride, kStride + 1, kStride - 1};

  // Sets of cells as bits, one per padded cell index, so that walking a set visits its cells in
  // reading order (the order of a scan of the board) at the cost of its members only.
  static constexpr int kWords = (kCells + 63) / 64;
  static void SetBit(uint64_t* bits, int cell) { bits[cell >> 6] |= uint64_t{1} << (cell & 63); }
  static bool HasBit(const uint64_t* bits, int cell) {
    return (bits[cell >> 6] >> (cell & 63) & 1) != 0;
  }
  static void ClearBit(uint64_t* bits, int cell) {
    bits[cell >> 6] &= ~(uint64_t{1} << (cell & 63));
  }
  template <class F>
  static void ForEachCell(const uint64_t* bits, F&& f) {
    for (int w = 0; w < kWords; ++w) {
      for (uint64_t b = bits[w]; b != 0; b &= b - 1) {
        f(static_cast<Move>(w * 64 + __builtin_ctzll(b)));
      }
    }
  }

  Gomoku(int size, bool exact);
  bool OnBoard(int x, int y) const { return x >= 0 && y >= 0 && x < size_ && y < size_; }
  // ZobristKey(salt_, player * kCells + cell), with its mixed salt kept from the constructor.
  uint64_t CellKey(int player, int cell) const {
    return ZobristKeyOfMixedSalt(mixed_salt_, static_cast<uint64_t>(player * kCells + cell));
  }
  // Calls visit(other, d, stone, shift) for every cell `other` on the board within kReach of
  // `cell` along direction d (kDirections), nearest first each way, with its board byte and the
  // bit position in its line keys of the digit for `cell` (a cell after `cell` sees it at offset
  // -k, one before at +k): UpdateLines' and PeekLines' walk. Its two inner loops are unrolled,
  // so each offset's shift is a constant (2-3% faster); unrolling the directions too made the
  // code too large for its cache (18% slower).
  template <int kReach, class Visit>
  static void WalkLines(const uint8_t* board, int cell, Visit&& visit);
  // Adds (kSign +1) or removes (-1) a stone of `p` at `cell` in the line keys around it, and
  // recomputes the shapes, line sums and classes of the empty cells whose lines changed (kReach:
  // reach_); with kRanks, the stones' ranks too (the evaluation's; the threat searches never
  // read them).
  template <int kSign, bool kRanks>
  void UpdateLines(int cell, int p);
  template <int kReach, int kSign, bool kRanks>
  void UpdateLines(int cell, int p);
  // What EvaluateAfter needs of the position after a stone of `p` at `cell`: every player's
  // class counts and stone-rank sums, as UpdateLines<+1, true> and Retire would leave them.
  struct LeafCounts {
    int count[2][kClassCount];
    int32_t stone_score[2];
  };
  void PeekLines(int cell, int p, LeafCounts& after) const;
  template <int kReach>
  void PeekLines(int cell, int p, LeafCounts& after) const;
  // The shape `p` makes at `cell` in direction `d`, from the cell's key.
  uint8_t ShapeOf(int cell, int d, int p) const;
  // Brings an empty cell's shapes and line sums up to date with its keys (kept while occupied).
  void RefreshShapes(int cell);
  // Sets the class of an empty cell for player `p` from its line sum.
  void Classify(int cell, int p);
  // Takes an occupied cell out of the class counts and cell sets.
  void Retire(int cell);
  // Puts a stone of `p` on / takes it off an empty cell, for either side: Make's and Unmake's
  // placement less the hash and the cells near the stones, which the VCF search never reads, and
  // without kRanks less the stones' ranks, which it does not read either: for its own attacks
  // and blocks, always taken back in reverse order before it returns (so the ranks are right
  // again once it has). Taking a stone off never ranks: Unmake restores the ranks' sums from
  // before the stone (score_before_).
  template <bool kRanks>
  void PlaceLines(int cell, int p);
  void RemoveLines(int cell, int p);
  // PlaceLines<false> and RemoveLines with the hash: for the threat searches that key a
  // memo by position (VCT, the evaluation's VCF probe after a forced block), taken back in
  // reverse order like the VCF's.
  void PlaceThreat(int cell, int p);
  void RemoveThreat(int cell, int p);
  // Counts a stone at `cell` in (out of) the near counts of the 5x5 square around it and
  // updates the set of empty cells near a stone.
  void AddNear(int cell);
  void SubtractNear(int cell);
  // The VCF search behind FindVcf. On success `path[len..]` holds the line found (attack, block,
  // attack, block, ..., winning move) and `len` its end; on failure `len` is unchanged.
  bool VcfSearch(int attacker, int depth, int& nodes_left, Move* path, int& len);
  // VcfSearch from a const view (move generation and evaluation), with the AI's depth.
  bool ProbeVcf(int attacker, int max_nodes, Move* path, int& len) const;
  // ProbeVcf's answer for the position whose hash is `hash` where its memo holds one (a win
  // with its line), without searching: true, with `won` set, when it does.
  bool RecallVcf(uint64_t hash, int attacker, int max_nodes, bool& won) const;
  // The searches behind FindVct: the attacker to move (`first` receives its winning move), and
  // the defender to move against the threat just made (a four, or a cell where the attacker
  // would make a winning four).
  // `near`: the attacker's last threat (kNoMove before the first), near which its next plain
  // four or three must be (NearThreatCells).
  bool VctAttack(int attacker, int depth, int& nodes_left, Move* first, Move near);
  // VctAttack's search over the attacker's threats, once the position's memo has no answer.
  bool VctAttackMoves(int attacker, int depth, int& nodes_left, Move* first, Move near);
  bool VctDefend(int attacker, int depth, int& nodes_left, Move near);
  // The cells within four of `near` on its lines (those whose fives could hold its stone).
  void NearThreatCells(Move near, uint64_t* cells) const;
  // Whether the four `attacker` makes at `cell` (of class kMakesFour; the defender has no five to
  // make) ends the VCF search's line as soon as it is blocked: once both are played neither side
  // has a five to make and the attacker no four. Read off the cell's shapes and line key, and
  // true only when placing both would show it. Freestyle only (false for `exact`).
  bool FourLeadsNowhere(Move cell, int attacker) const;
  // The empty cell within four of `cell` on its lines where `p` makes five, or kNoMove.
  Move FiveCellNear(int cell, int p) const;
  // Whether `p` has a cell that makes a four (not a winning one).
  bool HasFours(int p) const {
    return class_count_[p][kMakesFour] + class_count_[p][kMakesFourThree] > 0;
  }
  // The first empty cell (reading order) of class `wanted` for `p`, or kNoMove.
  Move FirstOfClass(int p, uint8_t wanted) const {
    const uint64_t* bits = class_bits_[p][wanted];
    for (int w = 0; w < kWords; ++w) {
      if (bits[w] != 0) return static_cast<Move>(w * 64 + __builtin_ctzll(bits[w]));
    }
    return kNoMove;
  }
  // MoveOrderScore less its class ranks: all of it for a cell of class kQuiet for both players
  // (below that of every other).
  int QuietOrderScore(Move cell) const;
  // GenerateSearchMoves before ExcludeAtRoot's cells are taken out.
  void GenerateCandidates(MoveList<Move, kMaxMoves>& moves) const;
  // How far the AI's VCF look-up (ProbeVcf) reaches at every searched node, and its positions.
  static constexpr int kVcfDepth = 16;
  static_assert(kVcfDepth <= kMaxVcfDepth);
  static constexpr int kVcfNodes = 40;

  int size_ = 15;
  bool exact_ = false;
  // How far from a cell its line keys look. A five through a cell lies within 4 cells of it; the
  // fifth cell each side only tells an overline, so freestyle keys hold 4 cells each side (a
  // 64 K-entry table) and every stone updates 4 cells each way rather than 5; `exact` keys hold
  // 5 (a 1 M-entry table, built when the first exact game is created).
  int reach_ = 5;
  uint64_t salt_ = 0;
  uint64_t mixed_salt_ = 0;         // Mix64(salt_), CellKey's
  const uint8_t* pairs_ = nullptr;  // both players' shapes (a pair, gomoku_tables.h) per line key
  const uint16_t* stone_ranks_ =
      nullptr;  // both players' stone ranks per line key (gomoku_tables.h)

  // Both have a few bytes to spare after the last cell: the near-stone upkeep reads and writes
  // eight bytes at a time (AddNear).
  uint8_t board_[kCells + 8];  // kEmptyCell, 1 + player, or kWall
  uint8_t near_[kCells + 8];   // stones within distance 2 (Chebyshev)
  uint32_t key_[kCells][4];    // line key per cell and direction, both players (gomoku_tables.h)
  // For empty cells (occupied ones only keep their keys): pairs_[key_] per direction, and the
  // shapes' LineInfo summed over the four directions (Black's in the low half, White's high).
  uint8_t shape_[kCells][4];
  uint64_t line_sum_[kCells];
  uint8_t class_[2][kCells];  // CellClass per player, kQuiet for occupied cells
  int16_t class_count_[2][kClassCount] = {};
  // The stones' ranks summed, per player: the evaluation's measure of what is on the board.
  int32_t stone_score_[2] = {0, 0};
  // stone_score_ before the stone numbered `i` (from 0) was placed: Unmake, which always takes
  // back the last stone, restores it from here rather than ranking the stones again (3-4% of
  // the search's time). A record of how the position was reached, not part of it: positions
  // compare equal whatever it holds.
  struct ScoreHistory {
    int32_t before[kMaxSize * kMaxSize][2];
    bool operator==(const ScoreHistory&) const { return true; }
  };
  ScoreHistory score_before_ = {};
  // The empty cells of each class per player (kQuiet's set is left empty), and the empty cells
  // within distance 2 of a stone: what move generation and the VCF search walk.
  uint64_t class_bits_[2][kClassCount][kWords] = {};
  uint64_t near_bits_[kWords] = {};

  uint64_t hash_ = 0;
  int stones_ = 0;
  // ExcludeAtRoot's cells, and the hash and stone count of the position they belong to (-1:
  // none).
  uint64_t excluded_[kWords] = {};
  uint64_t excluded_hash_ = 0;
  int excluded_stones_ = -1;
  bool last_move_won_ = false;
};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_GOMOKU_GOMOKU_H_
