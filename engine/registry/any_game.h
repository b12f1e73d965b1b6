// The one interface through which tools and services see a game: create it by name and
// options, replay and validate move texts, list legal moves, render it, and ask the search for a
// move at a difficulty. This is the only place in the engine with virtual dispatch; the search
// itself runs on the concrete game type.
#ifndef PLY_ENGINE_REGISTRY_ANY_GAME_H_
#define PLY_ENGINE_REGISTRY_ANY_GAME_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/core/board_look.h"
#include "engine/core/options.h"
#include "engine/core/types.h"
#include "engine/core/win_chance_curve.h"
#include "engine/registry/ladder_data.h"
#include "engine/search/difficulty.h"

namespace ply {

struct GameInfo {
  std::string name;
  std::string title;
  std::string description;
  std::vector<OptionInfo> options;
  std::vector<Difficulty> levels;
  // Names of the two sides, first player first ("Red", "Yellow").
  std::vector<std::string> player_names;
  // How to type a move, in one line ("a column number, 1 from the left (e.g. 4).").
  std::string notation_hint;
  // The record formats ExportRecord (registry.h) writes for the game, e.g. {"pdn"}; often none.
  std::vector<std::string> record_formats;
  // Every level's rating from the game's calibration ladder (games/GAME/ladder.txt).
  LadderData ladder;
  // The game's budget-dependent decisions per level (ladder_data.h), folded into the ladder's
  // levels fingerprint; null for games without any.
  BudgetPlans budget_plans;
  // How clients draw it and how analysis reads its scores: the game's kLook and kWinChance.
  BoardLook look;
  WinChanceCurve win_chance;
};

// What a search saw, in text, for tools, logs and the wire.
struct SearchReport {
  std::string move;
  Score score = 0;
  int depth = 0;
  int64_t nodes = 0;
  double elapsed_ms = 0;
  double nodes_per_second = 0;
  std::vector<std::string> pv;
  bool exact = false;
  // With `exact`: only the outcome is proven, the score is its sign (SearchResult::outcome_only).
  bool outcome_only = false;
  bool random_move = false;
  bool stopped = false;
  // The score for people: "+35", "-120", "win in 7", "loss in 4", "draw", for a proven margin
  // "win by 38" or "loss by 6", and for a proven outcome without its margin "win (proven)" or
  // "loss (proven)".
  std::string ScoreText() const;
};

struct SearchRequest {
  // The level's dials; limits below only ever tighten them.
  Difficulty level;
  // When > 0: at most this many milliseconds (min with the level's time).
  int64_t time_ms = 0;
  // When > 0: at most this depth (min with the level's depth cap).
  int max_depth = 0;
  // When > 0: at most this many nodes.
  int64_t max_nodes = 0;
  uint64_t seed = 0;
  const std::atomic<bool>* stop = nullptr;
  // Called after each completed iteration.
  std::function<void(const SearchReport&)> on_iteration;
};

// Search tables kept between requests by one worker thread (transposition table, history), one
// set per game type. A worker serving several games keeps the tables of the `max_slots` most
// recently used game types, so alternating requests do not rebuild a table each time.
class SearchCache {
 public:
  explicit SearchCache(size_t tt_megabytes = 16, size_t max_slots = 3)
      : tt_megabytes_(tt_megabytes), max_slots_(max_slots < 1 ? 1 : max_slots) {}
  size_t tt_megabytes() const { return tt_megabytes_; }

  class Slot {
   public:
    virtual ~Slot() = default;
    // Writes every page of the slot's tables. A table is made without writing its memory (a
    // search faults its pages in as it stores, within its budget); this does it beforehand.
    virtual void Touch() {}
  };
  // The slot of type T, created with `make` when absent (evicting the least recently used).
  template <class T, class Make>
  T& Get(Make make) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (T* t = dynamic_cast<T*>(slots_[i].get())) {
        std::rotate(slots_.begin(), slots_.begin() + i, slots_.begin() + i + 1);
        return *t;
      }
    }
    // Free the evicted tables before making new ones.
    if (slots_.size() >= max_slots_) slots_.pop_back();
    slots_.insert(slots_.begin(), make());
    return static_cast<T&>(*slots_.front());
  }

  // Touch() on every slot held (a bot worker's warm-up).
  void TouchAll() {
    for (const std::unique_ptr<Slot>& slot : slots_) slot->Touch();
  }

 private:
  size_t tt_megabytes_;
  size_t max_slots_;
  // Most recently used first.
  std::vector<std::unique_ptr<Slot>> slots_;
};

class AnyGame {
 public:
  virtual ~AnyGame() = default;

  virtual const GameInfo& Info() const = 0;
  // Every option with the value in force, defaults included.
  virtual GameOptions Options() const = 0;
  virtual std::unique_ptr<AnyGame> Clone() const = 0;

  virtual Player SideToMove() const = 0;
  virtual GameStatus Status() const = 0;
  // Moves played from the initial position, in canonical notation.
  virtual const std::vector<std::string>& History() const = 0;
  virtual std::vector<std::string> LegalMoves() const = 0;
  // Validates `move` against the rules and plays it; on error the game is unchanged.
  virtual absl::Status Play(std::string_view move) = 0;
  // Takes back the last move; FAILED_PRECONDITION at the start.
  virtual absl::Status Undo() = 0;
  virtual std::string Render() const = 0;
  virtual uint64_t Hash() const = 0;

  // Positions after exactly `depth` plies (see the game's perft convention).
  virtual uint64_t Perft(int depth) = 0;
  // Searches for a move; the game is unchanged. FAILED_PRECONDITION when the game is over.
  virtual absl::StatusOr<SearchReport> ChooseMove(const SearchRequest& request,
                                                  SearchCache* cache = nullptr) = 0;
};

}  // namespace ply

#endif  // PLY_ENGINE_REGISTRY_ANY_GAME_H_
