#include "lobby-server/players/accounts.h"

#include "absl/strings/str_cat.h"
#include "common/log_text.h"
#include "lobby-server/names.h"
#include "lobby-server/token.h"

namespace ply::lobby {

Accounts::Accounts(AccountStore* store, const Quotas* quotas, std::function<int64_t()> now_ms)
    : store_(store), quotas_(quotas), now_ms_(std::move(now_ms)) {}

absl::StatusOr<std::optional<PlayerRecord>> Accounts::PlayerOf(const std::string& key) {
  if (key.empty()) return std::optional<PlayerRecord>();
  if (!IsWellFormedToken(key)) {
    return absl::UnauthenticatedError("that is not a player key of this lobby (ply login)");
  }
  absl::StatusOr<PlayerRecord> player = store_->PlayerByKey(TokenHash(key), now_ms_());
  if (absl::IsNotFound(player.status())) {
    return absl::UnauthenticatedError(
        "unknown player key: log in again (ply login NAME --key KEY)");
  }
  if (!player.ok()) return player.status();
  return std::optional<PlayerRecord>(*std::move(player));
}

absl::StatusOr<std::pair<PlayerRecord, std::string>> Accounts::Register(const std::string& name,
                                                                        const std::string& client) {
  if (absl::Status s = CheckPlayerName(name); !s.ok()) return s;
  const std::string key = NewSeatToken();
  const int64_t now = now_ms_();
  absl::StatusOr<PlayerRecord> made = store_->CreatePlayer(
      name, TokenHash(key), now, quotas_->Registration(client, now), NameSkeleton(name));
  if (absl::IsAlreadyExists(made.status()) &&
      made.status().message().find("looks like") == std::string_view::npos) {
    return absl::AlreadyExistsError(absl::StrCat(
        "the name ", name,
        " is taken; on another machine of yours, log in with your key: ply login NAME --key KEY"));
  }
  if (!made.ok()) return made.status();
  return std::make_pair(*std::move(made), key);
}

absl::StatusOr<std::string> Accounts::GuestName(std::string_view raw) {
  absl::StatusOr<std::string> name = CleanDisplayName(raw);
  if (!name.ok()) return name.status();
  // Registered names are the players': a guest cannot pass for one, however it writes the name.
  absl::StatusOr<std::string> player = store_->PlayerBySkeleton(NameSkeleton(*name));
  if (player.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the name ", EchoBounded(*name, 24), " is (or looks like) the player ",
                     *player, "'s: log in as that player (ply login), or pick another name"));
  }
  if (!absl::IsNotFound(player.status()) && !absl::IsUnimplemented(player.status())) {
    return player.status();
  }
  return name;
}

}  // namespace ply::lobby
