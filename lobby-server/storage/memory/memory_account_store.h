// AccountStore in memory, with the PostgreSQL store's semantics (storage/postgres/players.cc:
// names unique ignoring case, look-alike skeletons, registrations counted per address) for unit
// tests of the account rules (players/accounts.h).
#ifndef PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_ACCOUNT_STORE_H_
#define PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_ACCOUNT_STORE_H_

#include <mutex>
#include <string>
#include <vector>

#include "lobby-server/storage/store.h"

namespace ply::lobby {

class MemoryAccountStore : public AccountStore {
 public:
  absl::StatusOr<PlayerRecord> CreatePlayer(const std::string& name, const std::string& key_hash,
                                            int64_t now_ms, const RegistrationLimit& limit = {},
                                            const std::string& skeleton = "") override;
  absl::StatusOr<std::string> PlayerBySkeleton(const std::string& skeleton) override;
  absl::StatusOr<PlayerRecord> PlayerByKey(const std::string& key_hash, int64_t now_ms) override;
  absl::StatusOr<PlayerRecord> LoadPlayer(const std::string& name) override;

 private:
  struct Row {
    PlayerRecord player;
    std::string key_hash;
    std::string created_by;
    std::string skeleton;
  };
  std::mutex mu_;
  std::vector<Row> rows_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_ACCOUNT_STORE_H_
