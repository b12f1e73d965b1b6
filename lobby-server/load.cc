// ply-lobby-load: the lobby's two benchmarks, against a running lobby and its database.
//
// 1. Throughput: --clients concurrent human-vs-human matches, each driven over gRPC as fast as
//    the lobby answers (random legal moves, a new match when one ends), for --seconds. Prints
//    committed moves per second and MakeMove latency percentiles. With --pgbench_url it then
//    runs pgbench on the same database with the same number of clients (and with each count
//    of --pgbench_clients), each transaction inserting one row shaped like a stored move, and
//    prints the lobby/pgbench ratio at the same count and against pgbench's best rate.
// 2. Fan-out: one match watched by --spectators WatchMatch streams; --fanout_moves moves are
//    played, and for every (spectator, move) the time from the MakeMove reply reaching the
//    mover to the event reaching the spectator is measured (p50/p99/max), and from the mover
//    sending the move (which includes its commit).
//
// 3. Bots: --bot_matches bot-vs-bot matches kept running, bot moves per second reported every
//    --report_s, and at the end how the matches ended (none may end for a bot failure or be
//    left without a move for 10 s).
//
// 4. Failover (--failover): human matches played through every --lobby address in turn, bot
//    matches and --spectators watchers spread over the addresses, all riding out lobby
//    instances that die or restart meanwhile (deploy/local/lobby-failover kills and restarts
//    them); at the end, a table: moves acknowledged and lost, matches ended by a failure, gaps
//    and duplicates seen by watchers, the longest pause of any match, event lag.
//
// --lobby takes several addresses (a,b,c): the two players of a throughput match then sit on
// different instances, and fan-out spectators are spread over them.
//
// Example (the local stack's ports):
//   ply-lobby-load --lobby=127.0.0.1:50050 --clients=64 --seconds=10
//       --pgbench_url="host=127.0.0.1 port=55432 dbname=ply user=postgres" --spectators=500
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/core/flags_usage.h"
#include "engine/core/percentile.h"
#include "engine/core/random.h"
#include "lobby-server/load_failover.h"
#include "ply/v1/lobby.grpc.pb.h"

ABSL_FLAG(std::vector<std::string>, lobby, {"127.0.0.1:50050"},
          "The lobby's addresses (comma-separated: several instances on one database).");
ABSL_FLAG(std::string, game, "connect4", "Game of the throughput matches.");
ABSL_FLAG(int, clients, 64, "Matches driven at once (one call in flight each).");
ABSL_FLAG(int, seconds, 10, "Length of the throughput run.");
ABSL_FLAG(
    std::string, pgbench_url, "",
    "Connection string of the lobby's database; when set, pgbench runs there for comparison.");
ABSL_FLAG(std::string, pgbench_clients, "8,16",
          "More client counts to run pgbench at (comma-separated), besides --clients; the "
          "lobby's rate is also compared with pgbench's best.");
ABSL_FLAG(std::string, pgbench, "/usr/lib/postgresql/15/bin/pgbench", "The pgbench program.");
ABSL_FLAG(int, spectators, 500, "Watchers of the fan-out match (0 skips the fan-out run).");
ABSL_FLAG(int, fanout_moves, 30, "Moves played in the fan-out match.");
ABSL_FLAG(int, fanout_gap_ms, 50, "Pause between fan-out moves.");
ABSL_FLAG(int, bot_matches, 0,
          "Bot-vs-bot matches kept running for --seconds (a new one when one ends); prints bot "
          "moves per second every --report_s. 0 skips this run.");
ABSL_FLAG(std::string, bot_game, "connect4", "Game of the bot matches.");
ABSL_FLAG(std::string, bot_level, "hard", "Level of both bots.");
ABSL_FLAG(int, report_s, 2, "Seconds between reports of the bot-match run.");
ABSL_FLAG(bool, failover, false,
          "Run the failover scenario's load for --seconds instead of the benchmarks (see the top "
          "of load.cc): --clients people, --bot_matches bot matches, --spectators watchers.");

namespace ply {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Seats {
  int64_t id = 0;
  std::string tokens[2];
};

grpc::Status NewHumanMatch(v1::LobbyService::Stub& stub, const std::string& game, Seats* out) {
  v1::CreateMatchRequest create;
  create.mutable_spec()->set_name(game);
  create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  create.set_take_seat(0);
  create.set_display_name("load-a");
  v1::CreateMatchResponse created;
  grpc::ClientContext c1;
  c1.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (grpc::Status s = stub.CreateMatch(&c1, create, &created); !s.ok()) return s;
  v1::JoinMatchRequest join;
  join.set_match_id(created.match().id());
  join.set_seat(1);
  join.set_display_name("load-b");
  v1::JoinMatchResponse joined;
  grpc::ClientContext c2;
  c2.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (grpc::Status s = stub.JoinMatch(&c2, join, &joined); !s.ok()) return s;
  out->id = created.match().id();
  out->tokens[0] = created.seat_token();
  out->tokens[1] = joined.seat_token();
  return grpc::Status::OK;
}

grpc::Status Move(v1::LobbyService::Stub& stub, const Seats& seats, int ply, int seat,
                  const std::string& move, v1::MakeMoveResponse* out) {
  v1::MakeMoveRequest request;
  request.set_match_id(seats.id);
  request.set_expected_ply(ply);
  request.set_move(move);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  context.AddMetadata("authorization", "Bearer " + seats.tokens[seat]);
  return stub.MakeMove(&context, request, out);
}

// One throughput client: plays human-vs-human matches over its own channel, one call at a
// time, chaining each call from the previous one's callback. The callbacks run on gRPC's own
// threads, so the load costs little CPU beside the lobby's (pgbench's client is cheap too).
class Driver {
 public:
  // The two players of driver `index` call lobby addresses `index` and `index + 1` (the same
  // one when there is one).
  Driver(int index, const std::string& game, Clock::time_point end)
      : game_(game), end_(end), rng_(static_cast<uint64_t>(index) + 1) {
    const std::vector<std::string> lobbies = absl::GetFlag(FLAGS_lobby);
    for (int seat = 0; seat < 2; ++seat) {
      grpc::ChannelArguments args;
      args.SetInt("ply.client", index * 2 + seat);
      stubs_[seat] = v1::LobbyService::NewStub(grpc::CreateCustomChannel(
          lobbies[(index + seat) % lobbies.size()], grpc::InsecureChannelCredentials(), args));
    }
    stub_ = stubs_[0].get();
    latency_.reserve(1 << 16);
  }
  void Start() { Create(); }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }
  // Resigns the match this driver was playing when time ran out, so that benchmark runs do
  // not leave abandoned matches behind.
  void Resign() {
    if (match_.status() != v1::MATCH_STATUS_ACTIVE || match_.to_move() < 0) return;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    context.AddMetadata("authorization", tokens_[match_.to_move()]);
    v1::ResignRequest request;
    request.set_match_id(match_.id());
    v1::Match after;
    (void)stub_->Resign(&context, request, &after);
  }
  int64_t moves() const { return moves_; }
  int64_t errors() const { return errors_; }
  int64_t matches() const { return matches_; }
  const std::vector<double>& latency() const { return latency_; }

 private:
  // A fresh context per call; the previous call's context lives until the one after.
  grpc::ClientContext* NextContext() {
    which_ ^= 1;
    contexts_[which_] = std::make_unique<grpc::ClientContext>();
    contexts_[which_]->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return contexts_[which_].get();
  }
  bool Finished() {
    if (Clock::now() < end_) return false;
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
    return true;
  }
  void Failed() {
    ++errors_;
    Create();
  }
  void Create() {
    if (Finished()) return;
    create_.Clear();
    create_.mutable_spec()->set_name(game_);
    create_.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create_.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create_.set_take_seat(0);
    create_.set_display_name("load-a");
    stub_->async()->CreateMatch(NextContext(), &create_, &created_, [this](grpc::Status s) {
      if (!s.ok()) return Failed();
      join_.set_match_id(created_.match().id());
      join_.set_seat(1);
      join_.set_display_name("load-b");
      stubs_[1]->async()->JoinMatch(NextContext(), &join_, &joined_, [this](grpc::Status s) {
        if (!s.ok()) return Failed();
        ++matches_;
        tokens_[0] = absl::StrCat("Bearer ", created_.seat_token());
        tokens_[1] = absl::StrCat("Bearer ", joined_.seat_token());
        // The first move comes from the match's legal moves: ask for it once.
        get_.set_match_id(created_.match().id());
        stub_->async()->GetMatch(NextContext(), &get_, &match_, [this](grpc::Status s) {
          if (!s.ok()) return Failed();
          Move();
        });
      });
    });
  }
  void Move() {
    if (Finished()) return;
    if (match_.status() != v1::MATCH_STATUS_ACTIVE) return Create();
    move_.set_match_id(match_.id());
    move_.set_expected_ply(match_.moves_size());
    move_.set_move(match_.legal_moves(static_cast<int>(rng_.Below(match_.legal_moves_size()))));
    grpc::ClientContext* context = NextContext();
    context->AddMetadata("authorization", tokens_[match_.to_move()]);
    sent_ = Clock::now();
    stubs_[match_.to_move() == 1 ? 1 : 0]->async()->MakeMove(context, &move_, &moved_,
                                                             [this](grpc::Status s) {
                                                               if (!s.ok()) return Failed();
                                                               latency_.push_back(MsSince(sent_));
                                                               ++moves_;
                                                               match_.Swap(moved_.mutable_match());
                                                               Move();
                                                             });
  }

  const std::string game_;
  const Clock::time_point end_;
  Rng rng_;
  // Seat 0's and seat 1's instance; creating, joining and reading go through seat 0's.
  std::unique_ptr<v1::LobbyService::Stub> stubs_[2];
  v1::LobbyService::Stub* stub_;
  std::unique_ptr<grpc::ClientContext> contexts_[2];
  int which_ = 0;
  v1::CreateMatchRequest create_;
  v1::CreateMatchResponse created_;
  v1::JoinMatchRequest join_;
  v1::JoinMatchResponse joined_;
  v1::GetMatchRequest get_;
  v1::Match match_;
  v1::MakeMoveRequest move_;
  v1::MakeMoveResponse moved_;
  std::string tokens_[2];
  Clock::time_point sent_;
  // Written only from this driver's chain of callbacks, read after Wait().
  int64_t moves_ = 0, errors_ = 0, matches_ = 0;
  std::vector<double> latency_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// Throughput: returns committed moves per second.
double RunThroughput() {
  const int clients = absl::GetFlag(FLAGS_clients);
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(absl::GetFlag(FLAGS_seconds));
  std::vector<std::unique_ptr<Driver>> drivers;
  for (int t = 0; t < clients; ++t) {
    drivers.push_back(std::make_unique<Driver>(t, absl::GetFlag(FLAGS_game), end));
  }
  for (auto& d : drivers) d->Start();
  int64_t moves = 0, errors = 0, matches = 0;
  std::vector<double> latency;
  for (auto& d : drivers) {
    d->Wait();
    moves += d->moves();
    errors += d->errors();
    matches += d->matches();
    latency.insert(latency.end(), d->latency().begin(), d->latency().end());
  }
  const double seconds = MsSince(start) / 1000.0;
  const double rate = static_cast<double>(moves) / seconds;
  for (auto& d : drivers) d->Resign();
  std::printf(
      "lobby: %d clients, %.1f s: %lld moves committed in %lld matches, %.0f moves/s, "
      "%lld errors\n",
      clients, seconds, static_cast<long long>(moves), static_cast<long long>(matches), rate,
      static_cast<long long>(errors));
  std::printf("MakeMove latency ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n",
              Percentile(latency, 50), Percentile(latency, 90), Percentile(latency, 99),
              Percentile(latency, 100));
  // gRPC may still be finishing each driver's last call after its callback returned: the
  // drivers (a few kilobytes) live until the process exits.
  for (auto& d : drivers) (void)d.release();
  return rate;
}

// pgbench with one-row inserts shaped like the lobby's moves; returns transactions per second.
double RunPgbench(const std::string& url, int clients) {
  char path[] = "/tmp/ply-pgbench-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 0;
  const std::string script =
      "\\set m random(1, 1000000000)\n"
      "INSERT INTO ply_bench_moves (match_id, ply, seat, move, think_ms, clock_ms, time_ms) "
      "VALUES (:m, :client_id, 0, '4', 12, 0, 1700000000000);\n";
  if (write(fd, script.data(), script.size()) != static_cast<ssize_t>(script.size())) return 0;
  close(fd);
  chmod(path, 0644);
  const std::string psql = absl::StrCat(
      absl::GetFlag(FLAGS_pgbench).substr(0, absl::GetFlag(FLAGS_pgbench).rfind('/') + 1), "psql");
  const std::string table =
      "CREATE TABLE IF NOT EXISTS ply_bench_moves (match_id bigint, ply integer, seat smallint, "
      "move text, think_ms bigint, clock_ms bigint, time_ms bigint, PRIMARY KEY (match_id, "
      "ply))";
  std::string command = absl::StrCat(psql, " -X -q \"", url, "\" -c \"", table, "\"");
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "ply-lobby-load: cannot create the pgbench table with psql\n");
    return 0;
  }
  command =
      absl::StrCat(absl::GetFlag(FLAGS_pgbench), " -n -M prepared -c ", clients, " -j ", clients,
                   " -T ", absl::GetFlag(FLAGS_seconds), " -f ", path, " \"", url, "\" 2>&1");
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p != nullptr && (n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  if (p != nullptr) pclose(p);
  unlink(path);
  (void)std::system(
      absl::StrCat(psql, " -X -q \"", url, "\" -c \"DROP TABLE ply_bench_moves\"").c_str());
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(tps = ([0-9.]+))"))) {
    std::fprintf(stderr, "ply-lobby-load: pgbench said:\n%s\n", out.c_str());
    return 0;
  }
  const double tps = std::stod(m[1]);
  std::smatch lat;
  std::string latency = std::regex_search(out, lat, std::regex(R"(latency average = ([0-9.]+) ms)"))
                            ? lat[1].str()
                            : "?";
  std::printf("pgbench: %d clients, one-row insert transactions: %.0f tps, latency avg %s ms\n",
              clients, tps, latency.c_str());
  return tps;
}

// One spectator stream, read on the client's callback threads.
class Spectator final : public grpc::ClientReadReactor<v1::MatchEvent> {
 public:
  Spectator(v1::LobbyService::Stub* stub, int64_t id, std::vector<Clock::time_point>* arrivals)
      : arrivals_(arrivals) {
    request_.set_match_id(id);
    stub->async()->WatchMatch(&context_, &request_, this);
    StartRead(&event_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    if (event_.has_snapshot()) {
      std::lock_guard<std::mutex> lock(mu_);
      subscribed_ = true;
      cv_.notify_all();
    } else if (event_.has_move_applied()) {
      const size_t ply = static_cast<size_t>(event_.move_applied().move().ply());
      if (ply < arrivals_->size()) (*arrivals_)[ply] = Clock::now();
    }
    StartRead(&event_);
  }
  void OnDone(const grpc::Status&) override {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    subscribed_ = true;
    cv_.notify_all();
  }
  void WaitSubscribed() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return subscribed_; });
  }
  void Cancel() { context_.TryCancel(); }
  void WaitDone() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }

 private:
  grpc::ClientContext context_;
  v1::WatchMatchRequest request_;
  v1::MatchEvent event_;
  std::vector<Clock::time_point>* arrivals_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool subscribed_ = false;
  bool done_ = false;
};

// Spectator i watches through channels[i % size]; the moves are made through channels[0], so
// with several instances most spectators get them across instances.
void RunFanout(const std::vector<std::shared_ptr<grpc::Channel>>& channels) {
  const int watchers = absl::GetFlag(FLAGS_spectators);
  const int moves = absl::GetFlag(FLAGS_fanout_moves);
  std::vector<std::unique_ptr<v1::LobbyService::Stub>> stubs;
  for (const auto& c : channels) stubs.push_back(v1::LobbyService::NewStub(c));
  v1::LobbyService::Stub* stub = stubs[0].get();
  Seats seats;
  // Gomoku leaves room for many moves in the middle of the board.
  if (grpc::Status s = NewHumanMatch(*stub, "gomoku", &seats); !s.ok()) {
    std::fprintf(stderr, "ply-lobby-load: %s\n", s.error_message().c_str());
    return;
  }
  std::vector<std::vector<Clock::time_point>> arrivals(watchers,
                                                       std::vector<Clock::time_point>(moves + 1));
  std::vector<std::unique_ptr<Spectator>> spectators;
  for (int i = 0; i < watchers; ++i) {
    spectators.push_back(
        std::make_unique<Spectator>(stubs[i % stubs.size()].get(), seats.id, &arrivals[i]));
  }
  for (auto& s : spectators) s->WaitSubscribed();
  std::vector<Clock::time_point> sent(moves + 1), acked(moves + 1);
  for (int ply = 0; ply < moves; ++ply) {
    // A diagonal-free walk: no five in a row within 30 moves.
    const int x = ply % 10, y = ply / 10 * 2 + (ply % 2);
    const std::string move = absl::StrCat(std::string(1, static_cast<char>('c' + x)), 3 + y);
    v1::MakeMoveResponse r;
    sent[ply + 1] = Clock::now();
    grpc::Status s = Move(*stub, seats, ply, ply % 2, move, &r);
    acked[ply + 1] = Clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "ply-lobby-load: fan-out move %s: %s\n", move.c_str(),
                   s.error_message().c_str());
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(absl::GetFlag(FLAGS_fanout_gap_ms)));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::vector<double> delay, from_send, across;
  int missing = 0;
  for (int i = 0; i < watchers; ++i) {
    for (int ply = 1; ply <= moves; ++ply) {
      if (arrivals[i][ply] == Clock::time_point() || acked[ply] == Clock::time_point()) {
        ++missing;
        continue;
      }
      // An event may even beat the reply to the mover; that counts as no delay.
      const double ms = std::max(
          0.0, std::chrono::duration<double, std::milli>(arrivals[i][ply] - acked[ply]).count());
      (i % stubs.size() == 0 ? delay : across).push_back(ms);
      from_send.push_back(
          std::chrono::duration<double, std::milli>(arrivals[i][ply] - sent[ply]).count());
    }
  }
  for (auto& s : spectators) s->Cancel();
  for (auto& s : spectators) s->WaitDone();
  std::printf(
      "fan-out: %d spectators x %d moves: ack-to-delivery ms p50 %.2f  p99 %.2f  max %.2f"
      "  (%d deliveries missing)\n",
      watchers, moves, Percentile(delay, 50), Percentile(delay, 99), Percentile(delay, 100),
      missing);
  if (!across.empty()) {
    std::printf(
        "fan-out: spectators on the other %zu instance(s): ack-to-delivery ms p50 %.2f  p99 %.2f"
        "  max %.2f\n",
        stubs.size() - 1, Percentile(across, 50), Percentile(across, 99), Percentile(across, 100));
  }
  // The same deliveries timed from the mover sending the move (its commit included).
  std::printf("fan-out: send-to-delivery ms p50 %.2f  p99 %.2f  max %.2f\n",
              Percentile(from_send, 50), Percentile(from_send, 99), Percentile(from_send, 100));
}

// Keeps `--bot_matches` bot-vs-bot matches going; returns false when one failed or got stuck.
bool RunBotMatches(const std::vector<std::shared_ptr<grpc::Channel>>& channels) {
  // New matches are created through each instance in turn; they are read through the first.
  std::vector<std::unique_ptr<v1::LobbyService::Stub>> stubs;
  for (const auto& c : channels) stubs.push_back(v1::LobbyService::NewStub(c));
  v1::LobbyService::Stub* stub = stubs[0].get();
  size_t created_count = 0;
  const int wanted = absl::GetFlag(FLAGS_bot_matches);
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(absl::GetFlag(FLAGS_seconds));
  struct Running {
    int64_t id = 0;
    int moves = 0;
    Clock::time_point last_move;
  };
  std::vector<Running> running;
  int64_t finished = 0, failures = 0, stuck = 0, moves_total = 0, moves_at_report = 0;
  auto create = [&]() -> bool {
    v1::CreateMatchRequest r;
    r.mutable_spec()->set_name(absl::GetFlag(FLAGS_bot_game));
    for (int i = 0; i < 2; ++i) {
      v1::SeatSpec* seat = r.add_seats();
      seat->set_kind(v1::SEAT_KIND_BOT);
      seat->set_difficulty(absl::GetFlag(FLAGS_bot_level));
    }
    r.set_bot_pacing_ms(0);
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::CreateMatchResponse created;
    grpc::Status s = stubs[created_count++ % stubs.size()]->CreateMatch(&c, r, &created);
    if (!s.ok()) {
      std::fprintf(stderr, "ply-lobby-load: CreateMatch: %s\n", s.error_message().c_str());
      return false;
    }
    running.push_back({created.match().id(), 0, Clock::now()});
    return true;
  };
  while (static_cast<int>(running.size()) < wanted) {
    if (!create()) return false;
  }
  auto next_report = start + std::chrono::seconds(absl::GetFlag(FLAGS_report_s));
  auto last_report = start;
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (size_t i = 0; i < running.size();) {
      grpc::ClientContext c;
      c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::GetMatchRequest get;
      get.set_match_id(running[i].id);
      v1::Match m;
      if (!stub->GetMatch(&c, get, &m).ok()) {
        ++i;
        continue;
      }
      if (m.moves_size() > running[i].moves) {
        moves_total += m.moves_size() - running[i].moves;
        running[i].moves = m.moves_size();
        running[i].last_move = Clock::now();
      } else if (MsSince(running[i].last_move) > 10000) {
        ++stuck;
        std::fprintf(stderr, "ply-lobby-load: match %lld has had no move for 10 s\n",
                     static_cast<long long>(running[i].id));
        running[i].last_move = Clock::now();
      }
      if (m.status() == v1::MATCH_STATUS_FINISHED) {
        ++finished;
        if (m.result().reason() == v1::END_REASON_BOT_FAILURE ||
            m.result().reason() == v1::END_REASON_TIMEOUT) {
          ++failures;
          std::fprintf(stderr, "ply-lobby-load: match %lld: %s\n", static_cast<long long>(m.id()),
                       m.result().text().c_str());
        }
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        if (Clock::now() < end && !create()) return false;
        continue;
      }
      ++i;
    }
    if (Clock::now() >= next_report) {
      const double seconds = MsSince(last_report) / 1000.0;
      std::printf("t=%5.1fs  bot moves/s %7.1f  (matches running %zu, finished %lld)\n",
                  MsSince(start) / 1000.0,
                  static_cast<double>(moves_total - moves_at_report) / seconds, running.size(),
                  static_cast<long long>(finished));
      std::fflush(stdout);
      moves_at_report = moves_total;
      last_report = Clock::now();
      next_report += std::chrono::seconds(absl::GetFlag(FLAGS_report_s));
    }
  }
  std::printf(
      "bot matches: %lld finished, %lld ended by a bot failure or flag, %lld stalls of "
      "10 s, %lld bot moves\n",
      static_cast<long long>(finished), static_cast<long long>(failures),
      static_cast<long long>(stuck), static_cast<long long>(moves_total));
  return failures == 0 && stuck == 0;
}

int Main() {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (const std::string& address : absl::GetFlag(FLAGS_lobby)) {
    auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5))) {
      std::fprintf(stderr, "ply-lobby-load: no lobby at %s\n", address.c_str());
      return 1;
    }
    channels.push_back(std::move(channel));
  }
  if (channels.empty()) {
    std::fprintf(stderr, "ply-lobby-load: --lobby names no address\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_failover)) {
    return RunFailover({.lobbies = absl::GetFlag(FLAGS_lobby),
                        .seconds = absl::GetFlag(FLAGS_seconds),
                        .spectators = absl::GetFlag(FLAGS_spectators),
                        .bot_matches = std::max(1, absl::GetFlag(FLAGS_bot_matches)),
                        .players = std::max(1, absl::GetFlag(FLAGS_clients))});
  }
  if (absl::GetFlag(FLAGS_clients) > 0 && absl::GetFlag(FLAGS_seconds) > 0) {
    const double lobby = RunThroughput();
    if (const std::string url = absl::GetFlag(FLAGS_pgbench_url); !url.empty()) {
      // The database's own rate: pgbench at the lobby's client count and at each count of
      // --pgbench_clients; the lobby is compared with the same count and with the best.
      std::vector<int> counts = {absl::GetFlag(FLAGS_clients)};
      for (absl::string_view c :
           absl::StrSplit(absl::GetFlag(FLAGS_pgbench_clients), ',', absl::SkipWhitespace())) {
        int n = 0;
        if (absl::SimpleAtoi(c, &n) && n > 0 &&
            std::find(counts.begin(), counts.end(), n) == counts.end()) {
          counts.push_back(n);
        }
      }
      double same = 0, best = 0;
      int best_clients = 0;
      for (int n : counts) {
        const double pg = RunPgbench(url, n);
        if (n == counts[0]) same = pg;
        if (pg > best) {
          best = pg;
          best_clients = n;
        }
      }
      if (same > 0) {
        std::printf(
            "ratio: the lobby commits %.2f moves per pgbench insert transaction at %d clients "
            "(goal >= 0.5)\n",
            lobby / same, counts[0]);
      }
      if (best > 0 && best_clients != counts[0]) {
        std::printf(
            "ratio: %.2f of pgbench's best rate here (%.0f tps at %d clients) (goal >= 0.5)\n",
            lobby / best, best, best_clients);
      }
    }
  }
  if (absl::GetFlag(FLAGS_spectators) > 0) RunFanout(channels);
  if (absl::GetFlag(FLAGS_bot_matches) > 0 && !RunBotMatches(channels)) return 1;
  return 0;
}

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  ply::SetFlagsUsage("lobby throughput (with a pgbench comparison) and spectator fan-out.");
  ply::ParseFlags(argc, argv);
  return ply::Main();
}
