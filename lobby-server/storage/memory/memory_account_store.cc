#include "lobby-server/storage/memory/memory_account_store.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ply::lobby {

absl::StatusOr<PlayerRecord> MemoryAccountStore::CreatePlayer(const std::string& name,
                                                              const std::string& key_hash,
                                                              int64_t now_ms,
                                                              const RegistrationLimit& limit,
                                                              const std::string& skeleton) {
  std::lock_guard<std::mutex> lock(mu_);
  if (limit.max > 0 && !limit.address.empty()) {
    int made = 0;
    for (const Row& r : rows_) {
      made += r.created_by == limit.address && r.player.created_ms >= limit.since_ms ? 1 : 0;
    }
    if (made >= limit.max) {
      return absl::ResourceExhaustedError(
          absl::StrCat(made,
                       " players were registered from your address in the last hour, the most one "
                       "address may"));
    }
  }
  for (const Row& r : rows_) {
    if (absl::EqualsIgnoreCase(r.player.name, name)) {
      return absl::AlreadyExistsError(absl::StrCat("the name ", name, " is taken"));
    }
  }
  for (const Row& r : rows_) {
    if (!skeleton.empty() && r.skeleton == skeleton) {
      return absl::AlreadyExistsError(absl::StrCat("the name ", name, " looks like the player ",
                                                   r.player.name,
                                                   "'s: pick one that reads differently"));
    }
  }
  Row row;
  row.player = {.id = static_cast<int64_t>(rows_.size()) + 1,
                .name = name,
                .created_ms = now_ms,
                .last_seen_ms = now_ms};
  row.key_hash = key_hash;
  row.created_by = limit.address;
  row.skeleton = skeleton;
  rows_.push_back(row);
  return row.player;
}

absl::StatusOr<std::string> MemoryAccountStore::PlayerBySkeleton(const std::string& skeleton) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Row& r : rows_) {
    if (r.skeleton == skeleton) return r.player.name;
  }
  return absl::NotFoundError("no player has a name like that");
}

absl::StatusOr<PlayerRecord> MemoryAccountStore::PlayerByKey(const std::string& key_hash,
                                                             int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Row& r : rows_) {
    if (r.key_hash != key_hash) continue;
    r.player.last_seen_ms = now_ms;
    return r.player;
  }
  return absl::NotFoundError("no player has that key");
}

absl::StatusOr<PlayerRecord> MemoryAccountStore::LoadPlayer(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Row& r : rows_) {
    if (absl::EqualsIgnoreCase(r.player.name, name)) return r.player;
  }
  return absl::NotFoundError(absl::StrCat("there is no player ", name));
}

}  // namespace ply::lobby
