// Per-client budgets every ply server keeps, counted the same way everywhere: a token bucket of
// calls per second for each client key, and a cap on the streams one key holds open. ply-lobby
// keys a client by its address (ClientLimits adds proxies and exemptions), ply-web by its
// visitor's address. Clients idle long enough to have a full bucket and no stream are forgotten,
// so the table holds the clients of the last minute or so.
#ifndef PLY_COMMON_CLIENT_BUDGET_H_
#define PLY_COMMON_CLIENT_BUDGET_H_

#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/time/time.h"

namespace ply {

struct ClientBudgetOptions {
  // Sustained calls per second per client, and how many may come at once; <= 0 turns it off.
  double calls_per_second = 0;
  double burst = 0;
  // Streams open at once per client; <= 0 turns it off.
  int max_streams = 0;
};

class ClientBudget {
 public:
  explicit ClientBudget(ClientBudgetOptions options) : options_(options) {}

  // Takes a token for one call at `now`; false when the client is over its rate.
  bool AllowCall(const std::string& client, absl::Time now);
  // Counts a stream as open; false (and nothing counted) when the client has too many. Each
  // true is paired with a CloseStream.
  bool OpenStream(const std::string& client);
  void CloseStream(const std::string& client);

  // Clients the table holds now (for tests of the pruning).
  size_t tracked() const;

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time refilled;
    int streams = 0;
  };
  // Forgets clients that have been quiet long enough to have a full bucket and no stream.
  void Prune(absl::Time now);

  const ClientBudgetOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Bucket> clients_;
  absl::Time last_prune_ = absl::InfinitePast();
};

}  // namespace ply

#endif  // PLY_COMMON_CLIENT_BUDGET_H_
