// The client's link to the lobby (lobby-client/lobby_link), against fake lobbies served in this
// process: a lobby of several instances where one is gone or goes away, a WatchMatch stream that
// repeats moves, skips one or breaks off (what the user sees has each move once, in order), and
// an address where nothing listens (said at once, not retried for ever), and a stream whose
// thread cannot start (no descriptor left behind).
#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lobby-client/lobby_link.h"
#include "tests/fake_lobby.h"

namespace ply::client {
namespace {

v1::MatchEvent Move(int ply) {
  v1::MatchEvent e;
  e.mutable_move_applied()->mutable_move()->set_ply(ply);
  e.mutable_move_applied()->mutable_move()->set_move(absl::StrCat(ply % 7 + 1));
  return e;
}

using ::ply::testing::FakeLobby;

LobbyClient Client(const std::string& servers) {
  absl::StatusOr<LobbyTarget> target = ParseServers(servers);
  EXPECT_TRUE(target.ok()) << target.status();
  return LobbyClient(*target);
}

// Everything the stream delivers until it ends (or `timeout`).
std::vector<MatchStream::Item> Drain(MatchStream& stream, absl::Duration timeout) {
  std::vector<MatchStream::Item> all;
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    pollfd p{.fd = stream.wake_fd(), .events = POLLIN, .revents = 0};
    poll(&p, 1, 100);
    for (MatchStream::Item& item : stream.Take()) {
      const bool ended = item.ended;
      all.push_back(std::move(item));
      if (ended) return all;
    }
  }
  return all;
}

TEST(LobbyLink, CallsGoToTheInstancesThatAnswerInEitherOrder) {
  FakeLobby a("a");
  for (const std::string& servers :
       {absl::StrCat("127.0.0.1:1,", a.address()), absl::StrCat(a.address(), ",127.0.0.1:1")}) {
    LobbyClient lobby = Client(servers);
    for (int i = 0; i < 10; ++i) {
      absl::StatusOr<v1::Match> m = lobby.GetMatch(5);
      ASSERT_TRUE(m.ok()) << servers << ": " << m.status();
    }
  }
}

TEST(LobbyLink, CallsMoveOnWhenAnInstanceGoes) {
  FakeLobby a("a"), b("b");
  LobbyClient lobby = Client(absl::StrCat(a.address(), ",", b.address()));
  // Round robin: both instances serve, once both are connected.
  std::set<std::string> served;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (served.size() < 2 && absl::Now() < deadline) {
    absl::StatusOr<v1::Match> m = lobby.GetMatch(5);
    ASSERT_TRUE(m.ok()) << m.status();
    served.insert(m->spec().name());
  }
  EXPECT_EQ(served, (std::set<std::string>{"a", "b"}));
  a.Stop();
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<v1::Match> m = lobby.GetMatch(5);
    ASSERT_TRUE(m.ok()) << "call " << i << " after a went: " << m.status();
    EXPECT_EQ(m->spec().name(), "b");
  }
}

TEST(LobbyLink, AWatchThatNeverConnectedEndsAtOnce) {
  LobbyClient lobby = Client("127.0.0.1:1");
  MatchStream stream(&lobby, 1);
  const absl::Time start = absl::Now();
  std::vector<MatchStream::Item> items = Drain(stream, absl::Seconds(20));
  ASSERT_FALSE(items.empty());
  EXPECT_TRUE(items.back().ended);
  EXPECT_EQ(items.back().error.code(), absl::StatusCode::kUnavailable) << items.back().error;
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  for (const MatchStream::Item& item : items) {
    EXPECT_EQ(item.notice.find("retrying"), std::string::npos) << item.notice;
  }
}

TEST(LobbyLink, AWatchShowsEveryMoveOnceAcrossLostStreamsRepeatsAndGaps) {
  FakeLobby a("a"), b("b");
  // One set of scripts for both instances: the calls of the stream in turn.
  b.ShareScriptsWith(a);
  using Writer = grpc::ServerWriter<v1::MatchEvent>;
  // 1: a snapshot with two moves, move 3 twice and an old move 2, then the instance goes.
  a.AddScript([](grpc::ServerContext*, Writer* w) {
    v1::MatchEvent snapshot;
    for (int ply = 1; ply <= 2; ++ply) snapshot.mutable_snapshot()->add_moves()->set_ply(ply);
    w->Write(snapshot);
    w->Write(Move(3));
    w->Write(Move(3));
    w->Write(Move(2));
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "instance going away");
  });
  // 2: (after move 3) a careless resume that repeats move 3, then move 4, then skips to 6.
  a.AddScript([](grpc::ServerContext* context, Writer* w) {
    w->Write(Move(3));
    w->Write(Move(4));
    w->Write(Move(6));
    // The client hangs up on a gap.
    for (int i = 0; i < 100 && !context->IsCancelled(); ++i) absl::SleepFor(absl::Milliseconds(50));
    return grpc::Status::OK;
  });
  // 3: (after move 4) the rest, and the end.
  a.AddScript([](grpc::ServerContext*, Writer* w) {
    w->Write(Move(5));
    w->Write(Move(6));
    v1::MatchEvent over;
    over.mutable_game_over()->mutable_result()->set_winner(0);
    w->Write(over);
    return grpc::Status::OK;
  });

  LobbyClient lobby = Client(absl::StrCat(a.address(), ",", b.address()));
  MatchStream stream(&lobby, 1);
  std::vector<MatchStream::Item> items = Drain(stream, absl::Seconds(20));
  ASSERT_FALSE(items.empty());
  EXPECT_TRUE(items.back().ended);
  EXPECT_TRUE(items.back().error.ok()) << items.back().error;
  std::vector<int> plies;
  bool lost = false, back = false;
  for (const MatchStream::Item& item : items) {
    lost |= item.notice.find("Connection to the lobby lost") != std::string::npos;
    back |= item.notice == "Reconnected to the lobby.";
    if (!item.event) continue;
    if (item.event->has_snapshot()) plies.push_back(item.event->snapshot().moves_size());
    if (item.event->has_move_applied()) plies.push_back(item.event->move_applied().move().ply());
  }
  EXPECT_EQ(plies, (std::vector<int>{2, 3, 4, 5, 6}));
  EXPECT_TRUE(lost);
  EXPECT_TRUE(back);
  EXPECT_EQ(a.after_plies(), (std::vector<int>{-1, 3, 4}));
}

// Descriptors open in this process.
int OpenDescriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n;
}

// This process's address space in bytes (VmSize), 0 when unknown.
uint64_t AddressSpace() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  unsigned long long kb = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmSize: %llu kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

// The stream's thread cannot start when the address space has no room for its stack: the
// constructor throws std::system_error, and the wake pipe it opened first is closed again. In a
// child process (a death test), whose address space is capped just above what it uses; its exit
// code says how it went: 0 thrown and nothing left open, 1 thrown with descriptors left open, 2
// not thrown (the cap did not stop the thread; the stream's thread then has no lobby to use and
// the child exits at once), 3 the cap could not be set.
// What a person reads when a call fails: what happened and what to do, never gRPC's internals.
TEST(LobbyLink, ErrorsSayWhatHappenedWithoutGrpcInternals) {
  {
    LobbyClient lobby = Client("127.0.0.1:1");
    absl::StatusOr<v1::Match> m = lobby.GetMatch(5);
    ASSERT_FALSE(m.ok());
    const std::string text = Describe(m.status(), lobby.address());
    EXPECT_NE(text.find("nothing is listening at 127.0.0.1:1"), std::string::npos) << text;
    EXPECT_EQ(text.find("ipv4:"), std::string::npos) << text;
  }
  {
    // A name that cannot resolve (.invalid never does, RFC 6761).
    LobbyClient lobby = Client("no-such-lobby.invalid:50050");
    absl::StatusOr<v1::Match> m = lobby.GetMatch(5);
    ASSERT_FALSE(m.ok());
    const std::string text = Describe(m.status(), lobby.address());
    EXPECT_NE(text.find("cannot find the lobby's host no-such-lobby.invalid"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("C-ares"), std::string::npos) << text;
    EXPECT_EQ(text.find("ARES"), std::string::npos) << text;
  }
  // A lobby that answered is not unreachable: its sentence is shown as its own.
  const std::string busy =
      Describe(absl::UnavailableError("no bot could judge the position now"), "127.0.0.1:50050");
  EXPECT_EQ(busy.find("cannot reach"), std::string::npos) << busy;
  EXPECT_NE(busy.find("the lobby cannot do this now: no bot could judge the position now"),
            std::string::npos)
      << busy;
}

TEST(LobbyLinkDeathTest, AStreamWhoseThreadCannotStartLeavesNoDescriptorsOpen) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory does not live under an address-space cap";
#endif
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &limit), 0);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < AddressSpace() + (64 << 20)) {
    GTEST_SKIP() << "the hard address-space limit leaves no room to set a cap";
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // Every new thread asks for a 256 MiB stack, so that no stack limit or cached stack
        // lets one start under the cap.
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 256 << 20) != 0 ||
            pthread_setattr_default_np(&attr) != 0) {
          _exit(3);
        }
        const int before = OpenDescriptors();
        const uint64_t used = AddressSpace();
        rlimit cap{};
        if (before < 0 || used == 0 || getrlimit(RLIMIT_AS, &cap) != 0) _exit(3);
        // Room for the stream's heap allocations, none for a thread's stack.
        cap.rlim_cur = used + (1 << 20);
        if (setrlimit(RLIMIT_AS, &cap) != 0) _exit(3);
        int code = 2;
        try {
          MatchStream stream(/*lobby=*/nullptr, 1);
          _exit(2);
        } catch (const std::system_error&) {
          code = OpenDescriptors() == before ? 0 : 1;
        }
        _exit(code);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ply::client
