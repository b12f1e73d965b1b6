// Drives the bot seats of the matches this instance owns: asks ply-bot for a move when a bot is
// to move (with a budget its clock can afford, and a seed that gives the same answer if the
// same ply is asked again), holds the answer until the match's pacing allows it, has the lobby
// commit it, and on failure tells the watchers, retries with backoff and, after
// give_up_after without a move, forfeits the seat. Replies are handled on the executor, never
// on gRPC's threads; a reply for a position that is gone is dropped.
#ifndef PLY_LOBBY_SERVER_BOTS_DRIVER_H_
#define PLY_LOBBY_SERVER_BOTS_DRIVER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lobby-server/bot_targets.h"
#include "lobby-server/executor.h"
#include "lobby-server/match/clock.h"
#include "lobby-server/match/live_match.h"
#include "lobby-server/metrics.h"
#include "lobby-server/storage/store.h"
#include "ply/v1/bot.pb.h"

namespace ply::lobby {

struct BotDriverOptions {
  // The bot call's deadline is its search budget plus this.
  int64_t deadline_margin_ms = 1000;
  // A bot seat that gets no move for this long (without a clock to end it first) forfeits.
  absl::Duration give_up_after = absl::Minutes(10);
  // A move of a match without people is searched for at most this long (0: the level's time),
  // so that bot-vs-bot matches cannot hold the bots' cores for the levels' full budgets.
  int64_t bot_vs_bot_budget_ms = 0;
  // Moves asked of ply-bot at once for the games against people of one client (the matches'
  // creator, a player or an address), its timed games first; the rest wait here for a place
  // (0: no bound). One client's games answered at once could fill the bots' places for people,
  // so that its own timed game's bot was refused and ran out of time (an unrated end on
  // demand), and everyone else's bots with it.
  int client_bot_calls = 0;
  // The same over every client of one network (an IPv6 /48, or an IPv4 address: as the quotas
  // group addresses): players are cheap to register, and one address's four accounts and its guest
  // games had eight moves asked at once, which filled the bots again (0: no bound).
  int network_bot_calls = 0;
};

// A bot's answer to a draw offer from its level's search of the position: it accepts when the
// position is a proven draw or loss for it, or when its chance (the game's win-chance curve,
// a draw counting half) is at most kBotDrawAcceptChance; otherwise it declines. `bot_to_move`:
// the reply's score is the bot's own (else the opponent's, negated here). `text` says why it
// accepts (the game ends there); a decline says only that it declines: the bot's view of a
// position the person still plays is hidden, like its thinking (a decline that gave its chance
// or "a forced win" was an evaluation for the asking, every move).
inline constexpr double kBotDrawAcceptChance = 0.55;
struct DrawAnswer {
  bool accept = false;
  std::string text;
};
DrawAnswer BotDrawAnswer(std::string_view game, const v1::ChooseMoveResponse& reply,
                         bool bot_to_move, const std::string& who);

class BotDriver {
 public:
  // What the driver needs of the lobby: a match under its lock, and the two commits.
  class Host {
   public:
    virtual ~Host() = default;
    virtual absl::Status WithMatch(int64_t id,
                                   const std::function<absl::Status(LiveMatch&)>& fn) = 0;
    // Commits a move already checked; `after` is the game with it played.
    virtual absl::StatusOr<MoveRecord> CommitMove(LiveMatch& live, int seat,
                                                  std::unique_ptr<AnyGame> after, int64_t think_ms,
                                                  std::string bot_json) = 0;
    virtual absl::Status CommitFinish(LiveMatch& live, MatchResult result,
                                      std::vector<int64_t> clocks) = 0;
    // Re-arms the match's timed work after `delay` (reloading it first if need be).
    virtual void RetryLater(int64_t id, absl::Duration delay) = 0;
    // Withdraws the draw offer standing at this ply, `seat` having declined it with `text`.
    virtual absl::Status DeclineDraw(LiveMatch& live, int seat, const std::string& text) = 0;
  };

  // `bots` may be null: then there are no bot seats to drive. `stopping` is the lobby's.
  BotDriver(Host* host, MatchStore* store, BotTargets* bots, Executor* executor,
            LobbyMetrics* metrics, BotDriverOptions options, NowMsFn now_ms,
            const std::atomic<bool>* stopping);

  bool enabled() const { return bots_ != nullptr; }
  // Asks for a move if a bot is to move in `live` (lock held) and nobody asked for this ply.
  void Request(LiveMatch& live);
  // The bot on `seat` answers the draw offer standing in `live` (lock held): its level searches
  // the position (a short, interactive search) and the answer comes back through the host,
  // accepted (a draw by agreement) or declined (DeclineDraw).
  void AnswerDraw(LiveMatch& live, int seat);

 private:
  void OnReply(int64_t id, int ply, absl::StatusOr<v1::ChooseMoveResponse> reply, int64_t think_ms);
  void OnDrawReply(int64_t id, int ply, int seat, absl::StatusOr<v1::ChooseMoveResponse> reply);
  // "Yellow (bot, hard)".
  static std::string BotSeatName(const LiveMatch& live, int seat);
  // Answers the standing draw offer from `reply`, the bot's search of the position: the draw
  // agreed (the match ends) or the offer declined in the bot's words.
  absl::Status SettleDraw(LiveMatch& live, int seat, const v1::ChooseMoveResponse& reply);
  // The request for the position of `live` at `seat`'s level.
  static v1::ChooseMoveRequest PositionRequest(const LiveMatch& live, const SeatRecord& seat);
  // The reply is no move: tell the watchers, then retry later or forfeit the seat.
  absl::Status Failed(LiveMatch& live, int seat, const absl::Status& problem);
  // Who holds places for a match's bot calls: its client and its client's network, each with
  // its bound.
  struct PlaceKey {
    std::string key;
    int limit;
  };
  std::vector<PlaceKey> PlaceKeys(const LiveMatch& live) const;
  // Whether match `live` may ask a move now (a place of each key taken), or must wait (the
  // match queued at the first key without a place, timed ones first).
  bool TakePlace(const std::vector<PlaceKey>& keys, const LiveMatch& live);
  // A call is done: its places go to the next matches waiting for them.
  void ReleasePlace(const std::vector<PlaceKey>& keys);
  // Asks for the next waiting match of `key` while it has a place free.
  void AskNext(const PlaceKey& key);

  // The places of each client (or network) with calls in flight or matches waiting.
  struct ClientCalls {
    int in_flight = 0;
    std::deque<int64_t> timed, untimed;
  };

  Host* host_;
  MatchStore* store_;
  BotTargets* bots_;
  Executor* executor_;
  LobbyMetrics* metrics_;
  const BotDriverOptions options_;
  const NowMsFn now_ms_;
  const std::atomic<bool>* stopping_;
  std::mutex places_mu_;
  absl::flat_hash_map<std::string, ClientCalls> places_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_BOTS_DRIVER_H_
