#include "engine/registry/registry.h"

#include <algorithm>
#include <concepts>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/core/text.h"
#include "engine/games/connect4/connect4.h"
#include "engine/games/draughts/draughts.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/games/morris/morris.h"
#include "engine/games/reversi/reversi.h"
#include "engine/games/tictactoe/tictactoe.h"
#include "engine/games/tictactwo/tictactwo.h"
#include "engine/registry/game_adapter.h"

namespace ply {
namespace {

struct Entry {
  GameInfo info;
  std::function<absl::StatusOr<std::unique_ptr<AnyGame>>(const GameOptions&, const GameInfo*)>
      create;
  // Set when the game has record formats.
  std::function<absl::StatusOr<std::string>(std::string_view, const std::vector<std::string>&,
                                            const RecordHeader&)>
      export_record;
};

// A game's record formats and their writer, when the game has any (G::kRecordFormats and
// G::ExportRecord).
template <typename G>
concept HasRecords = requires(std::string_view format, const std::vector<std::string>& moves,
                              const RecordHeader& header) {
  G::kRecordFormats;
  { G::ExportRecord(format, moves, header) } -> std::same_as<absl::StatusOr<std::string>>;
};

template <Game G>
Entry Register() {
  Entry e;
  e.info = GameInfo{.name = std::string(G::kName),
                    .title = std::string(G::kTitle),
                    .description = std::string(G::kDescription),
                    .options = G::OptionInfos(),
                    .levels = G::Levels(),
                    .player_names = {std::string(G::kSides[0]), std::string(G::kSides[1])},
                    .notation_hint = std::string(G::kNotationHint),
                    .ladder = ShippedLadder(G::kName),
                    .look = G::kLook,
                    .win_chance = G::kWinChance};
  if constexpr (requires(const Difficulty& d) { G::BudgetPlanText(d, int64_t{}, int64_t{}); }) {
    e.info.budget_plans = &G::BudgetPlanText;
  }
  if constexpr (HasRecords<G>) {
    for (std::string_view f : G::kRecordFormats) e.info.record_formats.emplace_back(f);
    e.export_record = [](std::string_view format, const std::vector<std::string>& moves,
                         const RecordHeader& header) {
      return G::ExportRecord(format, moves, header);
    };
  }
  e.create = [](const GameOptions& options,
                const GameInfo* info) -> absl::StatusOr<std::unique_ptr<AnyGame>> {
    absl::Status known = CheckKnownOptions(G::kName, options, G::OptionInfos());
    if (!known.ok()) return known;
    absl::StatusOr<G> game = G::Create(options);
    if (!game.ok()) return game.status();
    return std::make_unique<GameAdapter<G>>(*std::move(game), info);
  };
  return e;
}

const std::vector<Entry>& Entries() {
  static const auto* entries = new std::vector<Entry>{
      Register<Connect4>(), Register<TicTacToe>(), Register<TicTacTwo>(), Register<Reversi>(),
      Register<Gomoku>(),   Register<Draughts>(),  Register<Morris>(),
  };
  return *entries;
}

}  // namespace

const std::vector<GameInfo>& ListGames() {
  static const auto* infos = [] {
    auto* v = new std::vector<GameInfo>;
    for (const Entry& e : Entries()) v->push_back(e.info);
    return v;
  }();
  return *infos;
}

const GameInfo* FindGame(std::string_view name) {
  for (const Entry& e : Entries()) {
    if (e.info.name == name) return &e.info;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<AnyGame>> CreateGame(std::string_view name,
                                                    const GameOptions& options) {
  for (const Entry& e : Entries()) {
    if (e.info.name == name) return e.create(options, &e.info);
  }
  std::vector<std::string> names;
  for (const Entry& e : Entries()) names.push_back(e.info.name);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown game '", Absl(name), "' (known: ", absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<std::unique_ptr<AnyGame>> ReplayGame(std::string_view name,
                                                    const GameOptions& options,
                                                    const std::vector<std::string>& moves) {
  absl::StatusOr<std::unique_ptr<AnyGame>> game = CreateGame(name, options);
  if (!game.ok()) return game.status();
  for (size_t i = 0; i < moves.size(); ++i) {
    absl::Status s = (*game)->Play(moves[i]);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("move ", i + 1, " '", moves[i], "': ", s.message()));
    }
  }
  return game;
}

absl::StatusOr<std::string> ExportRecord(std::string_view name, std::string_view format,
                                         const std::vector<std::string>& moves,
                                         const RecordHeader& header) {
  const Entry* entry = nullptr;
  for (const Entry& e : Entries()) {
    if (e.info.name == name) entry = &e;
  }
  if (entry == nullptr) return CreateGame(name).status();
  const std::vector<std::string>& formats = entry->info.record_formats;
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        Absl(name), " has no record format '", Absl(format), "'",
        formats.empty() ? " (it has none)"
                        : absl::StrCat(" (its formats: ", absl::StrJoin(formats, ", "), ")")));
  }
  return entry->export_record(format, moves, header);
}

std::string SearchReport::ScoreText() const {
  if (IsMateScore(score)) {
    int plies = MatePlies(score);
    return plies > 0 ? absl::StrCat("win in ", plies) : absl::StrCat("loss in ", -plies);
  }
  if (exact && score == 0) return "draw";
  if (exact && outcome_only) return score > 0 ? "win (proven)" : "loss (proven)";
  // A proven margin (a solver that counts, such as Reversi's discs) is a result, not an estimate.
  if (exact) return score > 0 ? absl::StrCat("win by ", score) : absl::StrCat("loss by ", -score);
  return score > 0 ? absl::StrCat("+", score) : absl::StrCat(score);
}

}  // namespace ply
