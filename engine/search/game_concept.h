// What a concrete game class must offer to be searched, tested by the conformance suite and
// served through the registry. Every game in engine/games/ satisfies `Game`.
//
// A game is a small value type. Make/Unmake change it in place; the undo record lives on the
// caller's stack. Moves are small trivially copyable values and legal moves go into a
// fixed-capacity MoveList, so the search never allocates.
#ifndef PLY_ENGINE_SEARCH_GAME_CONCEPT_H_
#define PLY_ENGINE_SEARCH_GAME_CONCEPT_H_

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/move_list.h"
#include "engine/core/options.h"
#include "engine/core/types.h"

namespace ply {

struct Difficulty;

template <class G>
using MoveListOf = MoveList<typename G::Move, G::kMaxMoves>;

template <class G>
concept Game = requires(G g, const G cg, typename G::Move m, typename G::UndoInfo u,
                        MoveListOf<G>& list, const GameOptions& options, std::string_view text) {
  requires std::is_trivially_copyable_v<typename G::Move>;
  requires std::equality_comparable<typename G::Move>;
  requires std::equality_comparable<G>;
  { G::kNoMove } -> std::convertible_to<typename G::Move>;
  { G::kMaxMoves } -> std::convertible_to<int>;
  // Size of the history-heuristic table; HistoryIndex(m) is in [0, kHistorySize).
  { G::kHistorySize } -> std::convertible_to<int>;
  // Perft convention: does a finished game count as one leaf at every later depth?
  { G::kPerftCountsFinishedGames } -> std::convertible_to<bool>;

  // Construction and description.
  { G::Create(options) } -> std::same_as<absl::StatusOr<G>>;
  { G::kName } -> std::convertible_to<std::string_view>;
  { G::OptionInfos() } -> std::same_as<std::vector<OptionInfo>>;
  { G::Levels() } -> std::same_as<std::vector<Difficulty>>;
  { cg.EffectiveOptions() } -> std::same_as<GameOptions>;

  // Rules. GenerateMoves is only called while GetOutcome() is kOngoing, and then yields at
  // least one move (a pass is a move where the rules force one). A game may also offer
  // `void GenerateSearchMoves(MoveListOf<G>&) const`: a non-empty subset of the legal moves
  // that the search considers (e.g. cells near the stones); people may still play any legal move.
  // Two more hooks a game with costly moves may offer the search (Gomoku does):
  // `bool IsSearchMove(Move) const`, whether the table's move may be searched before the list
  // is made, and `bool EvaluateAfter(Move, Score&) const`, a leaf's Evaluate() without making
  // its move (false where the move must be made, always when it ends the game).
  cg.GenerateMoves(list);
  g.Make(m, u);
  g.Unmake(m, u);
  { cg.GetOutcome() } -> std::same_as<Outcome>;
  { cg.Status() } -> std::same_as<GameStatus>;
  { cg.SideToMove() } -> std::convertible_to<Player>;

  // Search support. Evaluate is from the side to move, within +-kMaxEval.
  { cg.Evaluate() } -> std::convertible_to<Score>;
  { cg.Hash() } -> std::same_as<uint64_t>;
  { cg.ComputeHash() } -> std::same_as<uint64_t>;
  { cg.MoveOrderScore(m) } -> std::convertible_to<int>;
  { G::HistoryIndex(m) } -> std::convertible_to<int>;

  // Text.
  { cg.MoveToText(m) } -> std::same_as<std::string>;
  // A legal move in this position, or INVALID_ARGUMENT / FAILED_PRECONDITION with a sentence.
  { cg.ParseMove(text) } -> std::same_as<absl::StatusOr<typename G::Move>>;
  { cg.Render() } -> std::same_as<std::string>;
};

}  // namespace ply

#endif  // PLY_ENGINE_SEARCH_GAME_CONCEPT_H_
