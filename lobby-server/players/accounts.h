// Players' accounts: who a player key is, registering a name, and the names guests may use.
// The rules, apart from the calls that use them (players/player_calls.cc, the Lobby's part):
// - A player's name has 2 to 24 letters, digits, '_', '-' and '.' (CheckPlayerName), is unique
//   ignoring case, and may not look like another player's (NameSkeleton: "aIice" beside
//   "alice", "a1ice", look-alike letters of other scripts).
// - An address registers at most Quotas' bound an hour (counted by the store over every
//   instance), so that free accounts cannot multiply the per-player quotas.
// - A player key is shown once, at registration; the store keeps its hash only.
// - A guest's display name must be printable text (CleanDisplayName), not read as a bot's
//   however it is written, and not be (or look like) a registered player's name.
#ifndef PLY_LOBBY_SERVER_PLAYERS_ACCOUNTS_H_
#define PLY_LOBBY_SERVER_PLAYERS_ACCOUNTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "lobby-server/players/quotas.h"
#include "lobby-server/storage/store.h"

namespace ply::lobby {

class Accounts {
 public:
  Accounts(AccountStore* store, const Quotas* quotas, std::function<int64_t()> now_ms);

  // The player whose key this is: none for "", UNAUTHENTICATED for a key no player has.
  absl::StatusOr<std::optional<PlayerRecord>> PlayerOf(const std::string& key);
  // Registers `name` for a caller at `client` (its address key; "" when exempt): the player
  // and its key. ALREADY_EXISTS when the name is taken or looks like a player's,
  // RESOURCE_EXHAUSTED past the address's registrations, INVALID_ARGUMENT for a bad name.
  absl::StatusOr<std::pair<PlayerRecord, std::string>> Register(const std::string& name,
                                                                const std::string& client);
  // A guest's display name as it will be shown, or why not.
  absl::StatusOr<std::string> GuestName(std::string_view raw);

 private:
  AccountStore* store_;
  const Quotas* quotas_;
  const std::function<int64_t()> now_ms_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_PLAYERS_ACCOUNTS_H_
