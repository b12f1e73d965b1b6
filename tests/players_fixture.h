// The fixture of the lobby's end-to-end tests of players (players_test, bot_ratings_test,
// pairing_test): a database of its own, one ply-bot and one ply-lobby, and the calls those tests
// make through it.
#ifndef PLY_TESTS_PLAYERS_FIXTURE_H_
#define PLY_TESTS_PLAYERS_FIXTURE_H_

#include <string>

#include "ply/v1/lobby.grpc.pb.h"
#include "tests/players_helper.h"
#include "tests/stack_helper.h"

namespace ply::testing {

class PlayersTest : public StackFixture {
 protected:
  void SetUp() override {
    UseNewDatabase("players");
    if (HasFatalFailure()) return;
    StartLobby();
  }

  // Registers `name`: its player key.
  std::string Register(const std::string& name) {
    const std::string key = ::ply::testing::Register(stub_.get(), name);
    EXPECT_GE(key.size(), 32u);
    return key;
  }

  // A match of `game` between two players (or a guest for an empty key): the seat tokens.
  HumanSeats PlayerMatch(const std::string& game, const std::string& key0, const std::string& key1,
                         bool casual = false) {
    return PlayersMatch(
        stub_.get(), game, key0, key1,
        [casual](v1::CreateMatchRequest& r) {
          r.set_display_name("guest-a");
          r.set_casual(casual);
        },
        /*joiner_name=*/"guest-b");
  }

  v1::Player Whois(const std::string& name) { return GetPlayer(stub_.get(), name); }
};

}  // namespace ply::testing

#endif  // PLY_TESTS_PLAYERS_FIXTURE_H_
