// Live matches for the page's event streams (Server-Sent Events). Each match that someone
// watches through this gateway has one feed: one WatchMatch stream to the lobby (client-cli's
// MatchStream, which resumes across lobby instances), the match as it stands (MatchModel), and the
// recent events already written out as SSE text. Any number of browsers share a feed, so a
// thousand spectators of one match cost the lobby one stream. A feed nobody reads goes after a
// short linger.
//
// Nothing here outlives the process or is needed by another instance: an SSE event's id is the
// number of moves played, and a browser that reconnects anywhere with Last-Event-ID gets the moves
// after it from whichever gateway it reaches.
#ifndef PLY_CLIENT_WEB_WATCH_HUB_H_
#define PLY_CLIENT_WEB_WATCH_HUB_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client-web/match_json.h"
#include "lobby-client/lobby_link.h"
#include "lobby-client/match_model.h"

namespace ply::web {

class MatchFeed {
 public:
  // Where one reader is in the feed.
  struct Cursor {
    Reader reader = Reader::kSpectator;
    // The moves the reader has (Last-Event-ID); nullopt: none, start with a snapshot.
    std::optional<int> after_ply;
    // The reader has had the match as it was when it came; `seq` is the last event written since.
    bool caught_up = false;
    int64_t seq = 0;
  };

  MatchFeed(client::LobbyClient* lobby, int64_t match_id);
  ~MatchFeed();
  MatchFeed(const MatchFeed&) = delete;
  MatchFeed& operator=(const MatchFeed&) = delete;

  // Waits until the feed has the match (ok) or knows it cannot have it (NOT_FOUND, UNAVAILABLE...).
  absl::Status WaitLoaded(absl::Duration timeout);
  // Appends to `out` the SSE text the reader has not had, waiting up to `timeout` for some.
  // False once the match is over and the reader has had everything (then `out` ends with an
  // "end" event).
  bool Next(Cursor& cursor, absl::Duration timeout, std::string& out);
  // The lobby refused the match or could not be reached.
  bool failed();
  // When the last reader left (InfinitePast while some are reading).
  absl::Time idle_since();
  void AddReader();
  void DropReader();

 private:
  struct Entry {
    int64_t seq;
    std::string spectator;
    std::string player;
  };
  void Run();
  void Apply(const v1::MatchEvent& event);
  // The match now, whole ("snapshot") or without its moves ("state"), as one SSE event.
  std::string SnapshotEvent(Reader reader) const;
  nlohmann::json State() const;
  void Append(std::string spectator, std::string player);

  const int64_t match_id_;
  std::unique_ptr<client::MatchStream> stream_;
  std::mutex mu_;
  std::condition_variable changed_;
  client::MatchModel view_;
  absl::Status error_;
  bool loaded_ = false;
  bool ended_ = false;
  bool stopping_ = false;
  int64_t seq_ = 0;
  std::deque<Entry> recent_;
  int readers_ = 0;
  absl::Time idle_since_;
  std::thread thread_;
};

class WatchHub {
 public:
  // At most `max_feeds` feeds are kept (0: no bound): each is a lobby stream and a thread, and
  // one that nobody reads lingers, so a client churning through distinct matches could
  // otherwise make any number. Past it the longest-idle unread feeds go first.
  WatchHub(client::LobbyClient* lobby, absl::Duration linger, size_t max_feeds = 0);
  ~WatchHub();
  // The feed of `match_id`, made on first use; the caller pairs AddReader/DropReader. Null when
  // max_feeds feeds are kept and every one of them has a reader.
  std::shared_ptr<MatchFeed> Feed(int64_t match_id);
  // Feeds being kept (for /healthz and tests).
  size_t size();

 private:
  // Drops the feeds nobody has read for `linger_`, but `keep`'s.
  void Sweep(int64_t keep);

  client::LobbyClient* lobby_;
  const absl::Duration linger_;
  const size_t max_feeds_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::map<int64_t, std::shared_ptr<MatchFeed>> feeds_;
  // Sweeps now and then, so that a quiet gateway lets go of its lobby streams too.
  std::thread sweeper_;
};

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_WATCH_HUB_H_
