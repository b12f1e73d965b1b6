// Games by name: what the services and tools use to list games and create one from a spec.
// A game joins the registry with one line in registry.cc; what people read about it (title,
// description, sides, notation hint, record formats) lives in the game's own class.
#ifndef PLY_ENGINE_REGISTRY_REGISTRY_H_
#define PLY_ENGINE_REGISTRY_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/options.h"
#include "engine/core/record.h"
#include "engine/registry/any_game.h"

namespace ply {

// Every registered game, in a fixed order.
const std::vector<GameInfo>& ListGames();
const GameInfo* FindGame(std::string_view name);

// A new game at its initial position. INVALID_ARGUMENT for an unknown game or a bad option.
absl::StatusOr<std::unique_ptr<AnyGame>> CreateGame(std::string_view name,
                                                    const GameOptions& options = {});

// A game replayed from its initial position through `moves`, each validated. The error names the
// first bad move and its number (1-based).
absl::StatusOr<std::unique_ptr<AnyGame>> ReplayGame(std::string_view name,
                                                    const GameOptions& options,
                                                    const std::vector<std::string>& moves);

// The game `name` from its initial position through `moves` as a record in `format`, one of its
// GameInfo::record_formats (PDN for draughts). INVALID_ARGUMENT for an unknown game or a format
// the game does not offer (the message lists those it has); a move that is not legal is an
// error naming it.
absl::StatusOr<std::string> ExportRecord(std::string_view name, std::string_view format,
                                         const std::vector<std::string>& moves,
                                         const RecordHeader& header = {});

}  // namespace ply

#endif  // PLY_ENGINE_REGISTRY_REGISTRY_H_
