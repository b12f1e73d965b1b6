#include "lobby-server/storage/memory/memory_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lobby-server/rating/ratings.h"

namespace ply::lobby {
namespace {

absl::Status NoSuchMatch(int64_t match_id) {
  return absl::NotFoundError(absl::StrCat("there is no match ", match_id));
}

int OpenSeats(const MatchRecord& m) { return VersionOf(m).open_seats; }

bool BotsOnly(const MatchRecord& m) {
  return std::all_of(m.seats.begin(), m.seats.end(),
                     [](const SeatRecord& s) { return s.kind == SeatKind::kBot; });
}

}  // namespace

MemoryStore::MemoryStore(bool async_appends) {
  if (async_appends) writer_ = std::thread([this] { WriteAppends(); });
}

MemoryStore::~MemoryStore() {
  {
    std::lock_guard<std::mutex> lock(append_mu_);
    closing_ = true;
  }
  append_ready_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void MemoryStore::AppendMoveAsync(int64_t match_id, MoveCommit commit,
                                  std::function<void(absl::Status)> done) {
  if (!writer_.joinable()) {
    done(AppendMove(match_id, commit));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(append_mu_);
    appends_.push_back({match_id, std::move(commit), std::move(done)});
  }
  append_ready_.notify_one();
}

void MemoryStore::WriteAppends() {
  for (;;) {
    PendingAppend next;
    {
      std::unique_lock<std::mutex> lock(append_mu_);
      append_ready_.wait(lock, [&] { return closing_ || !appends_.empty(); });
      // Closing still answers what was queued: those callers are waiting.
      if (appends_.empty()) return;
      next = std::move(appends_.front());
      appends_.pop_front();
    }
    next.done(AppendMove(next.match_id, next.commit));
  }
}

void MemoryStore::FailCalls(absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  failure_ = std::move(status);
}

int64_t MemoryStore::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

absl::Status MemoryStore::Enter() {
  ++calls_;
  return failure_;
}

absl::StatusOr<MatchRecord*> MemoryStore::FindLocked(int64_t match_id) {
  auto it = matches_.find(match_id);
  if (it == matches_.end()) return NoSuchMatch(match_id);
  return &it->second;
}

absl::StatusOr<int64_t> MemoryStore::CreateMatch(const MatchRecord& match) {
  return CreateMatchWithin(match, nullptr);
}

absl::StatusOr<int64_t> MemoryStore::CreateMatchWithin(const MatchRecord& match,
                                                       const QuotaCheck& check) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  // Under the one lock, as PostgreSQL serialises a creator's creates.
  if (check) {
    if (absl::Status s = CheckQuotaLocked(match, check); !s.ok()) return s;
  }
  MatchRecord& m = matches_[next_id_];
  m = match;
  m.id = next_id_;
  // As PostgreSQL keeps them: a new match has no moves, whatever the record carried.
  m.moves.clear();
  m.ply = 0;
  return next_id_++;
}

absl::StatusOr<bool> MemoryStore::TakeSeat(int64_t match_id, int seat, const std::string& name,
                                           const std::string& token_hash, int64_t now_ms,
                                           int64_t player_id, SeatRecord* /*taken*/) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<MatchRecord*> m = FindLocked(match_id);
  if (!m.ok()) return m.status();
  MatchRecord& r = **m;
  // Only an open human seat of a waiting match (the SQL's condition); anything else is taken.
  if (r.status != MatchStatus::kWaiting || seat < 0 || seat >= static_cast<int>(r.seats.size()) ||
      r.seats[seat].kind != SeatKind::kHuman || r.seats[seat].taken()) {
    return absl::AlreadyExistsError(
        absl::StrCat("seat ", seat + 1, " of match ", match_id, " is already taken"));
  }
  if (absl::Status s = CheckSeatOfRatedMatch(r, player_id); !s.ok()) return s;
  r.seats[seat].display_name = name;
  r.seats[seat].token_hash = token_hash;
  r.seats[seat].player_id = player_id;
  if (player_id == 0) r.rated = false;
  if (OpenSeats(r) > 0) return false;
  r.status = MatchStatus::kActive;
  r.turn_started_ms = now_ms;
  return true;
}

absl::Status MemoryStore::AppendMove(int64_t match_id, const MoveCommit& commit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<MatchRecord*> m = FindLocked(match_id);
  const MoveRecord& mv = commit.move;
  // PostgreSQL's conditional update finds no row either way: ABORTED, not NOT_FOUND.
  if (!m.ok() || (*m)->status != MatchStatus::kActive || (*m)->ply != mv.ply - 1) {
    return MatchMovedOn(match_id, mv.ply - 1);
  }
  MatchRecord& r = **m;
  r.ply = mv.ply;
  r.turn_started_ms = commit.turn_started_ms;
  r.draw_offer = commit.draw_offer;
  if (commit.result) {
    r.status = MatchStatus::kFinished;
    r.result = *commit.result;
  }
  r.moves.push_back(mv);
  if (commit.clocked && mv.seat >= 0 && mv.seat < static_cast<int>(r.seats.size())) {
    r.seats[mv.seat].clock_ms = commit.mover_clock_ms;
  }
  return absl::OkStatus();
}

absl::Status MemoryStore::Finish(int64_t match_id, const FinishCommit& commit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<MatchRecord*> m = FindLocked(match_id);
  if (!m.ok() || (*m)->status != MatchStatus::kActive || (*m)->ply != commit.expected_ply) {
    return MatchMovedOn(match_id, commit.expected_ply);
  }
  MatchRecord& r = **m;
  r.status = MatchStatus::kFinished;
  r.result = commit.result;
  r.draw_offer = -1;
  for (size_t i = 0; i < commit.clocks_ms.size() && i < r.seats.size(); ++i) {
    r.seats[i].clock_ms = commit.clocks_ms[i];
  }
  return absl::OkStatus();
}

absl::Status MemoryStore::SetDrawOffer(int64_t match_id, int expected_ply, int seat) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<MatchRecord*> m = FindLocked(match_id);
  if (!m.ok() || (*m)->status != MatchStatus::kActive || (*m)->ply != expected_ply) {
    return MatchMovedOn(match_id, expected_ply);
  }
  (*m)->draw_offer = seat;
  return absl::OkStatus();
}

absl::StatusOr<MatchRecord> MemoryStore::LoadMatch(int64_t match_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<MatchRecord*> m = FindLocked(match_id);
  if (!m.ok()) return m.status();
  return **m;
}

absl::StatusOr<std::vector<MatchRecord>> MemoryStore::ListMatches(const MatchFilter& f) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::vector<MatchRecord> found;
  // Newest first, as the SQL orders them.
  for (auto it = matches_.rbegin(); it != matches_.rend(); ++it) {
    if (static_cast<int>(found.size()) >= f.limit) break;
    const MatchRecord& m = it->second;
    if ((!f.game.empty() && m.game != f.game) || (f.status && m.status != *f.status) ||
        (f.open_seats && OpenSeats(m) == 0) || (f.bots_only && !BotsOnly(m)) ||
        (f.before_id != 0 && m.id >= f.before_id)) {
      continue;
    }
    MatchRecord listed = m;
    listed.moves.clear();
    found.push_back(std::move(listed));
  }
  return found;
}

absl::StatusOr<std::vector<int64_t>> MemoryStore::MatchesToResume() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::vector<int64_t> ids;
  for (const auto& [id, m] : matches_) {
    const bool bots = std::any_of(m.seats.begin(), m.seats.end(),
                                  [](const SeatRecord& s) { return s.kind == SeatKind::kBot; });
    if (m.status == MatchStatus::kActive && (m.time_initial_ms || bots)) ids.push_back(id);
  }
  return ids;
}

absl::StatusOr<std::optional<std::pair<int64_t, int>>> MemoryStore::FindToken(
    const std::string& token_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  for (const auto& [id, m] : matches_) {
    for (size_t i = 0; i < m.seats.size(); ++i) {
      if (!token_hash.empty() && m.seats[i].token_hash == token_hash) {
        return std::make_optional(std::make_pair(id, static_cast<int>(i)));
      }
    }
  }
  return std::optional<std::pair<int64_t, int>>();
}

absl::StatusOr<MatchVersion> MemoryStore::LoadVersion(int64_t match_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<MatchRecord*> m = FindLocked(match_id);
  if (!m.ok()) return m.status();
  return VersionOf(**m);
}

namespace {

int BotSeats(const MatchRecord& m) {
  return static_cast<int>(std::count_if(m.seats.begin(), m.seats.end(), [](const SeatRecord& s) {
    return s.kind == SeatKind::kBot;
  }));
}

}  // namespace

absl::StatusOr<Holdings> MemoryStore::HoldingsOf(const std::string& creator) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  return HoldingsLocked(creator, false);
}

absl::Status MemoryStore::CheckQuotaLocked(const MatchRecord& match,
                                           const QuotaCheck& check) const {
  if (!check) return absl::OkStatus();
  Holdings address =
      match.creator_address.empty() ? Holdings() : HoldingsLocked(match.creator_address, true);
  if (!match.creator_network.empty()) {
    for (const auto& [id, m] : matches_) {
      if (m.creator_network == match.creator_network && m.status != MatchStatus::kFinished) {
        address.network_bot_seats += BotSeats(m);
      }
    }
  }
  return check(HoldingsLocked(match.creator, false), address);
}

Holdings MemoryStore::HoldingsLocked(const std::string& key, bool address) const {
  Holdings h;
  for (const auto& [id, m] : matches_) {
    if ((address ? m.creator_address : m.creator) != key || m.status == MatchStatus::kFinished) {
      continue;
    }
    if (m.status == MatchStatus::kWaiting) ++h.waiting;
    ++h.open;
    h.bot_seats += BotSeats(m);
    if (BotSeats(m) == static_cast<int>(m.seats.size())) ++h.bot_matches;
  }
  return h;
}

absl::StatusOr<int> MemoryStore::BotSeatsInPlay() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  int seats = 0;
  for (const auto& [id, m] : matches_) {
    if (m.status != MatchStatus::kFinished) seats += BotSeats(m);
  }
  return seats;
}

absl::StatusOr<std::vector<int64_t>> MemoryStore::AbortUnstarted(int64_t turn_started_before_ms,
                                                                 int64_t /*now_ms*/,
                                                                 const std::string& text,
                                                                 int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::vector<int64_t> ids;
  for (auto& [id, m] : matches_) {
    if (static_cast<int>(ids.size()) >= limit) break;
    if (m.status != MatchStatus::kActive || m.ply >= 2 ||
        m.turn_started_ms >= turn_started_before_ms || m.ply >= static_cast<int>(m.seats.size()) ||
        m.seats[m.ply].kind != SeatKind::kHuman) {
      continue;
    }
    m.status = MatchStatus::kFinished;
    m.draw_offer = -1;
    m.result = {.winner = -1, .reason = EndReason::kAborted, .text = text};
    ids.push_back(id);
  }
  return ids;
}

absl::StatusOr<std::vector<int64_t>> MemoryStore::ExpireWaiting(int64_t created_before_ms,
                                                                const std::string& text,
                                                                int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::vector<int64_t> ids;
  for (auto& [id, m] : matches_) {
    if (static_cast<int>(ids.size()) >= limit) break;
    if (m.status != MatchStatus::kWaiting || m.created_ms >= created_before_ms) continue;
    m.status = MatchStatus::kFinished;
    m.result = {.winner = -1, .reason = EndReason::kCancelled, .text = text};
    ids.push_back(id);
  }
  return ids;
}

absl::StatusOr<RematchState> MemoryStore::OfferRematch(const RematchOffer& offer) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<MatchRecord*> m = FindLocked(offer.match_id);
  if (!m.ok()) return m.status();
  MatchRecord& old = **m;
  if (old.status != MatchStatus::kFinished) {
    return absl::FailedPreconditionError(
        absl::StrCat("match ", offer.match_id, " is not over: a rematch comes after the game"));
  }
  if (old.rematch_id != 0) return RematchState{.rematch_id = old.rematch_id};
  const int other = 1 - offer.seat;
  if (!offer.accept_now && old.rematch_offer != other) {
    old.rematch_offer = offer.seat;
    offer_hashes_[offer.match_id] = offer.token_hash;
    return RematchState{.offer = offer.seat};
  }
  // The offerer's old seat is the other one in the rematch, and the other's is theirs.
  MatchRecord next = offer.next;
  next.seats[other].token_hash = offer.token_hash;
  if (!offer.accept_now) next.seats[offer.seat].token_hash = offer_hashes_[offer.match_id];
  if (absl::Status s = CheckQuotaLocked(next, offer.check); !s.ok()) return s;
  next.id = next_id_;
  next.moves.clear();
  next.ply = 0;
  matches_[next_id_] = next;
  old.rematch_id = next_id_++;
  old.rematch_offer = -1;
  return RematchState{.rematch_id = old.rematch_id, .made = true};
}

absl::StatusOr<RematchState> MemoryStore::WithdrawRematch(int64_t match_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<MatchRecord*> m = FindLocked(match_id);
  if (!m.ok()) return m.status();
  if ((*m)->rematch_id == 0) (*m)->rematch_offer = -1;
  return RematchState{.offer = (*m)->rematch_offer, .rematch_id = (*m)->rematch_id};
}

}  // namespace ply::lobby
