// ply-bot-load: drives one or more ply-bot instances with many concurrent ChooseMove calls and
// prints throughput, reply-time percentiles and deadline slack (deadline minus reply time)
// percentiles, plus how the replies spread over instances.
//
//   ply-bot-load --target=ipv4:127.0.0.1:50051,127.0.0.1:50052 --game=connect4
//       --level=hard --budget_ms=100 --concurrency=4 --requests=400
//
// Positions are random openings (--opening_plies random moves from the start, seeded), so the
// searches differ; --max_nodes fixes the work per search for throughput comparisons.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bot-service/bot_client.h"
#include "common/credentials.h"
#include "engine/core/flags_usage.h"
#include "engine/core/percentile.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"

ABSL_FLAG(std::string, target, "ipv4:127.0.0.1:50051",
          "Instances: ipv4:host:port,host:port,... or dns:///name:port.");
ABSL_FLAG(std::string, game, "connect4", "Game to search.");
ABSL_FLAG(std::string, options, "", "Game options, k=v,k2=v2.");
ABSL_FLAG(std::string, level, "hard", "Difficulty level.");
ABSL_FLAG(int64_t, budget_ms, 100, "Requested budget per search, in ms (0: the level's own).");
ABSL_FLAG(int64_t, deadline_ms, 0,
          "Deadline of each call, in ms; 0 means the budget plus --deadline_extra_ms.");
ABSL_FLAG(int64_t, deadline_extra_ms, 200, "See --deadline_ms.");
ABSL_FLAG(int64_t, max_nodes, 0, "Node budget per search (0: none).");
ABSL_FLAG(int, concurrency, 4, "Calls in flight at once.");
ABSL_FLAG(bool, background, false,
          "Send the requests as BACKGROUND (bot-vs-bot) rather than INTERACTIVE.");
ABSL_FLAG(std::string, token_file, "",
          "File with the token the instances require (their --auth_token_file); empty: none.");
ABSL_FLAG(int, requests, 200, "Calls in all.");
ABSL_FLAG(int, opening_plies, 4, "Random moves from the start before each searched position.");
ABSL_FLAG(uint64_t, seed, 1, "Seed for the openings.");
ABSL_FLAG(int, warmup, 8,
          "Calls sent (one at a time per instance slot) before measuring, so that every worker has "
          "built its search tables.");

namespace ply {
namespace {

struct Sample {
  bool ok = false;
  std::string code;
  double reply_ms = 0;
  std::string instance;
  int depth = 0;
  int64_t nodes = 0;
  double search_ms = 0;
};

int Main() {
  const std::string game = absl::GetFlag(FLAGS_game);
  absl::StatusOr<GameOptions> options = ParseOptions(absl::GetFlag(FLAGS_options));
  if (!options.ok()) {
    std::fprintf(stderr, "ply-bot-load: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  const int total = absl::GetFlag(FLAGS_requests);
  if (total <= 0 || absl::GetFlag(FLAGS_concurrency) <= 0) {
    std::fprintf(stderr, "ply-bot-load: --requests and --concurrency must be positive\n");
    return 2;
  }
  const int64_t budget_ms = absl::GetFlag(FLAGS_budget_ms);
  int64_t deadline_ms = absl::GetFlag(FLAGS_deadline_ms);
  if (deadline_ms <= 0) deadline_ms = budget_ms + absl::GetFlag(FLAGS_deadline_extra_ms);

  // The positions, built locally with the engine so that every request is valid.
  std::vector<v1::ChooseMoveRequest> requests;
  Rng rng(absl::GetFlag(FLAGS_seed));
  for (int i = 0; i < total; ++i) {
    absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame(game, *options);
    if (!g.ok()) {
      std::fprintf(stderr, "ply-bot-load: %s\n", std::string(g.status().message()).c_str());
      return 2;
    }
    for (int ply = 0; ply < absl::GetFlag(FLAGS_opening_plies); ++ply) {
      std::vector<std::string> legal = (*g)->LegalMoves();
      if (legal.empty()) break;
      (void)(*g)->Play(legal[rng.Below(legal.size())]);
      if ((*g)->Status().over) {
        (void)(*g)->Undo();
        break;
      }
    }
    v1::ChooseMoveRequest r;
    r.mutable_position()->mutable_spec()->set_name(game);
    for (const auto& [k, v] : *options)
      (*r.mutable_position()->mutable_spec()->mutable_options())[k] = v;
    for (const std::string& m : (*g)->History()) r.mutable_position()->add_moves(m);
    r.set_difficulty(absl::GetFlag(FLAGS_level));
    r.set_budget_ms(budget_ms);
    r.set_max_nodes(absl::GetFlag(FLAGS_max_nodes));
    r.set_seed(static_cast<uint64_t>(i + 1));
    if (absl::GetFlag(FLAGS_background)) r.set_priority(v1::BOT_PRIORITY_BACKGROUND);
    requests.push_back(std::move(r));
  }

  absl::StatusOr<std::string> token = ReadTokenFile(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) {
    std::fprintf(stderr, "ply-bot-load: --token_file: %s\n",
                 std::string(token.status().message()).c_str());
    return 2;
  }
  BotClient client(BotClientOptions{.target = absl::GetFlag(FLAGS_target), .token = *token});
  if (!client.WaitForReady(absl::Seconds(5))) {
    std::fprintf(stderr, "ply-bot-load: no instance of %s answers\n",
                 absl::GetFlag(FLAGS_target).c_str());
    return 1;
  }

  // Warm-up calls go out concurrently so that round_robin spreads them over every worker.
  {
    std::vector<std::thread> warm;
    for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
      warm.emplace_back([&, i] {
        (void)client.ChooseMove(requests[i % total], absl::Milliseconds(deadline_ms));
      });
    }
    for (std::thread& t : warm) t.join();
  }

  std::vector<Sample> samples(total);
  std::atomic<int> next{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < absl::GetFlag(FLAGS_concurrency); ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < total; i = next++) {
        auto sent = std::chrono::steady_clock::now();
        absl::StatusOr<v1::ChooseMoveResponse> reply =
            client.ChooseMove(requests[i], absl::Milliseconds(deadline_ms));
        Sample& s = samples[i];
        s.reply_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent)
                .count();
        s.ok = reply.ok();
        if (reply.ok()) {
          s.instance = reply->instance();
          s.depth = reply->depth();
          s.nodes = reply->nodes();
          s.search_ms = reply->elapsed_ms();
        } else {
          s.code = absl::StatusCodeToString(reply.status().code());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<double> reply, slack;
  std::map<std::string, int> errors, instances;
  double depth_sum = 0, nodes_sum = 0, search_ms_sum = 0;
  int ok = 0;
  for (const Sample& s : samples) {
    if (!s.ok) {
      ++errors[s.code];
      continue;
    }
    ++ok;
    reply.push_back(s.reply_ms);
    slack.push_back(static_cast<double>(deadline_ms) - s.reply_ms);
    ++instances[s.instance];
    depth_sum += s.depth;
    nodes_sum += static_cast<double>(s.nodes);
    search_ms_sum += s.search_ms;
  }
  std::printf(
      "target %s  game %s  level %s  budget %lld ms  deadline %lld ms  max_nodes %lld  "
      "concurrency %d\n",
      absl::GetFlag(FLAGS_target).c_str(), game.c_str(), absl::GetFlag(FLAGS_level).c_str(),
      static_cast<long long>(budget_ms), static_cast<long long>(deadline_ms),
      static_cast<long long>(absl::GetFlag(FLAGS_max_nodes)), absl::GetFlag(FLAGS_concurrency));
  std::printf("requests   %d ok, %d failed", ok, total - ok);
  for (const auto& [code, n] : errors) std::printf("  %s: %d", code.c_str(), n);
  std::printf("\nthroughput %.1f replies/s over %.2f s\n", ok / wall_s, wall_s);
  std::printf("reply ms   p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", Percentile(reply, 50),
              Percentile(reply, 90), Percentile(reply, 99), Percentile(reply, 100));
  std::printf("slack ms   p50 %.1f  p10 %.1f  p1 %.1f  min %.1f\n", Percentile(slack, 50),
              Percentile(slack, 10), Percentile(slack, 1), Percentile(slack, 0));
  if (ok > 0) {
    std::printf("search     mean depth %.1f  mean nodes %.0f  %.2f Mnodes/s per search\n",
                depth_sum / ok, nodes_sum / ok,
                search_ms_sum > 0 ? nodes_sum / search_ms_sum / 1000.0 : 0.0);
  }
  std::vector<std::string> spread;
  for (const auto& [name, n] : instances) spread.push_back(absl::StrCat(name, " ", n));
  std::printf("instances  %s\n", absl::StrJoin(spread, ", ").c_str());
  return ok == total ? 0 : 1;
}

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  ply::SetFlagsUsage("load test for ply-bot instances");
  ply::ParseFlags(argc, argv);
  return ply::Main();
}
