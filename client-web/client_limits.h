// Per-client limits of the gateway, as the lobby has its own: a token bucket of requests per
// second for each client address, and a cap on the event streams one address holds open. A client
// past either gets 429 while everyone else is served. The gateway talks to the lobby as one
// client for all its visitors, so these limits are what keeps one visitor from spending the
// lobby's allowance for the rest.
#ifndef PLY_CLIENT_WEB_CLIENT_LIMITS_H_
#define PLY_CLIENT_WEB_CLIENT_LIMITS_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/time/time.h"

namespace ply::web {

class ClientLimits {
 public:
  // `per_s` <= 0 turns the rate off; `streams` <= 0 the stream cap.
  ClientLimits(double per_s, double burst, int streams)
      : per_s_(per_s), burst_(burst), streams_(streams) {}

  // Takes one request from `client`'s bucket at `now`; false when it is empty.
  bool Admit(const std::string& client, absl::Time now);
  // Opens a stream for `client`; false at the cap. Each true is paired with a Release.
  bool OpenStream(const std::string& client);
  void Release(const std::string& client);

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time at;
  };
  const double per_s_;
  const double burst_;
  const int streams_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  std::unordered_map<std::string, int> open_;
  absl::Time last_sweep_;
};

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_CLIENT_LIMITS_H_
