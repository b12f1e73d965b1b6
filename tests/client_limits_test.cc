// Who a client is for the lobby's per-client limits: its address, an IPv6 client's /64, the
// address a trusted proxy forwarded (and only a trusted one's), and the limits themselves.
#include "lobby-server/client_limits.h"

#include <gtest/gtest.h>

#include "common/client_address.h"
#include "common/client_budget.h"

namespace ply::lobby {
namespace {

TEST(ClientLimitsTest, NamesClientsByAddress) {
  EXPECT_EQ(ClientLimits::AddressOf("ipv4:10.1.2.3:5678"), "10.1.2.3");
  EXPECT_EQ(ClientLimits::AddressOf("ipv6:[::1]:5678"), "::1");
  EXPECT_EQ(ClientLimits::AddressOf("ipv6:[::ffff:127.0.0.1]:80"), "127.0.0.1");
  ClientLimits limits({});
  EXPECT_EQ(limits.ClientOf("ipv4:10.1.2.3:5678"), "10.1.2.3");
}

TEST(ClientLimitsTest, AnIpv6ClientIsItsSlash64) {
  ClientLimits limits({});
  const std::string a = limits.ClientOf("ipv6:[2001:db8:1:2::1]:5678");
  EXPECT_EQ(a, "2001:db8:1:2::/64");
  EXPECT_EQ(limits.ClientOf("ipv6:[2001:db8:1:2:ffff:ee:dd:cc]:1"), a)
      << "another address of the same /64 is the same client";
  EXPECT_NE(limits.ClientOf("ipv6:[2001:db8:1:3::1]:1"), a) << "the next /64 is another client";
  // IPv4 in IPv6 form is its IPv4 client, not one /64 for all of them.
  EXPECT_EQ(ClientLimits::KeyOf("::ffff:203.0.113.7"), "203.0.113.7");
  EXPECT_NE(ClientLimits::KeyOf("::ffff:203.0.113.7"), ClientLimits::KeyOf("::ffff:198.51.100.9"));
}

TEST(ClientLimitsTest, OnlyATrustedProxyNamesTheClient) {
  ClientLimits limits({.trusted_proxies = {"10.0.0.0/8", "fd00::1"}});
  // A proxy inside 10/8 forwarded the call of 203.0.113.7.
  EXPECT_EQ(limits.ClientOf("ipv4:10.9.8.7:4000", "203.0.113.7"), "203.0.113.7");
  // The client's own claim (leftmost) is not believed: the proxy appended the real address.
  EXPECT_EQ(limits.ClientOf("ipv4:10.9.8.7:4000", "1.2.3.4, 203.0.113.7"), "203.0.113.7");
  // Two trusted proxies in a row: the first untrusted hop from the right is the client.
  EXPECT_EQ(limits.ClientOf("ipv4:10.9.8.7:4000", "198.51.100.2, 10.1.1.1"), "198.51.100.2");
  EXPECT_EQ(limits.ClientOf("ipv6:[fd00::1]:4000", "2001:db8:5:6::9"), "2001:db8:5:6::/64");
  // Anyone else's header is ignored: a client cannot pose as another.
  EXPECT_EQ(limits.ClientOf("ipv4:192.0.2.1:4000", "203.0.113.7"), "192.0.2.1");
  // Garbage in the header ends the walk at the last good hop.
  EXPECT_EQ(limits.ClientOf("ipv4:10.9.8.7:4000", "not-an-address"), "10.9.8.7");
  EXPECT_EQ(ClientLimits::Check({.trusted_proxies = {"10.0.0.0/33"}}).empty(), false);
  EXPECT_EQ(ClientLimits::Check({.trusted_proxies = {"10.0.0.0/8", "::1"}}), "");
}

TEST(ClientLimitsTest, ClientsBehindOneProxyAreLimitedApart) {
  ClientLimits limits({.calls_per_second = 1, .burst = 3, .trusted_proxies = {"127.0.0.1"}});
  const absl::Time t = absl::Now();
  const std::string flooder = limits.ClientOf("ipv4:127.0.0.1:1", "198.51.100.1");
  const std::string victim = limits.ClientOf("ipv4:127.0.0.1:2", "198.51.100.2");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.AllowCall(flooder, t));
  EXPECT_FALSE(limits.AllowCall(flooder, t));
  EXPECT_TRUE(limits.AllowCall(victim, t)) << "the proxy's other client is not slowed";
}

TEST(ClientLimitsTest, AProxyThatKnowsTheSecretIsTrustedWhateverItsAddress) {
  // The shipped deployments cannot know the addresses their ply-web containers or pods get; the
  // web sends the secret instead.
  const std::string secret = "0123456789abcdef0123456789abcdef";
  ClientLimits limits({.calls_per_second = 1, .burst = 1, .max_streams = 1, .proxy_token = secret});
  EXPECT_EQ(limits.ClientOf("ipv4:10.89.0.7:1", "198.51.100.1", secret), "198.51.100.1");
  EXPECT_EQ(limits.ClientOf("ipv4:10.89.0.7:1", "2001:db8:5::1", secret), "2001:db8:5::/64");
  // A wrong, short or missing secret is the caller's word only.
  EXPECT_EQ(limits.ClientOf("ipv4:10.89.0.7:1", "198.51.100.1", "0123456789abcdef"), "10.89.0.7");
  EXPECT_EQ(limits.ClientOf("ipv4:10.89.0.7:1", "198.51.100.1", secret + "x"), "10.89.0.7");
  EXPECT_EQ(limits.ClientOf("ipv4:10.89.0.7:1", "198.51.100.1"), "10.89.0.7");
  // The proxy's own calls (its shared match feeds): not limited as one client.
  const std::string own = limits.ClientOf("ipv4:10.89.0.7:1", "", secret);
  EXPECT_TRUE(limits.Exempt(own)) << own;
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limits.OpenStream(own));
  const std::string stranger = limits.ClientOf("ipv4:10.89.0.8:1", "", "nope");
  EXPECT_FALSE(limits.Exempt(stranger));
  EXPECT_TRUE(limits.OpenStream(stranger));
  EXPECT_FALSE(limits.OpenStream(stranger));
  // A lobby without a secret trusts nobody by it, not even an empty one.
  ClientLimits none({});
  EXPECT_EQ(none.ClientOf("ipv4:10.89.0.7:1", "198.51.100.1", ""), "10.89.0.7");
  EXPECT_FALSE(none.Exempt(none.ClientOf("ipv4:10.89.0.7:1", "", "")));
}

TEST(ClientLimitsTest, BucketsAndStreams) {
  ClientLimits limits({.calls_per_second = 10, .burst = 3, .max_streams = 1, .exempt = {"::1"}});
  const absl::Time t = absl::Now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.AllowCall("a", t));
  EXPECT_FALSE(limits.AllowCall("a", t));
  EXPECT_TRUE(limits.AllowCall("b", t)) << "another client is not slowed";
  EXPECT_TRUE(limits.AllowCall("a", t + absl::Milliseconds(150))) << "the bucket refills";
  EXPECT_TRUE(limits.OpenStream("a"));
  EXPECT_FALSE(limits.OpenStream("a"));
  limits.CloseStream("a");
  EXPECT_TRUE(limits.OpenStream("a"));
  const std::string local = limits.ClientOf("ipv6:[::1]:9");
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(limits.AllowCall(local, t)) << "exempt";
}

// The budget ply-web keeps per visitor and the lobby per client.
TEST(ClientBudgetTest, RateAndStreamsArePerClientAndIdleClientsAreForgotten) {
  ClientBudget budget({.calls_per_second = 1, .burst = 3, .max_streams = 2});
  const absl::Time t = absl::Now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(budget.AllowCall("a", t));
  EXPECT_FALSE(budget.AllowCall("a", t));
  EXPECT_TRUE(budget.AllowCall("b", t));
  EXPECT_TRUE(budget.AllowCall("a", t + absl::Seconds(1)));
  EXPECT_TRUE(budget.OpenStream("a"));
  EXPECT_TRUE(budget.OpenStream("a"));
  EXPECT_FALSE(budget.OpenStream("a"));
  budget.CloseStream("a");
  EXPECT_TRUE(budget.OpenStream("a"));
  EXPECT_EQ(budget.tracked(), 2u);
  // Minutes later "b" has a full bucket and no stream: forgotten; "a" holds streams: kept.
  EXPECT_TRUE(budget.AllowCall("c", t + absl::Minutes(5)));
  EXPECT_EQ(budget.tracked(), 2u) << "a and c";
}

TEST(ClientBudgetTest, ZeroTurnsEachLimitOff) {
  ClientBudget budget({});
  const absl::Time t = absl::Now();
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(budget.AllowCall("a", t));
    EXPECT_TRUE(budget.OpenStream("a"));
  }
  EXPECT_EQ(budget.tracked(), 0u);
}

// The key both ply-lobby and ply-web count a client by.
TEST(ClientAddressKey, CountsIpv6ByItsSlash64AndMappedIpv4AsItself) {
  EXPECT_EQ(ClientAddressKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  EXPECT_EQ(ClientAddressKey("::ffff:192.0.2.9"), "192.0.2.9");
  EXPECT_EQ(ClientAddressKey("192.0.2.9"), "192.0.2.9");
  EXPECT_EQ(ClientAddressKey("not an address"), "not an address");
}

// The network a key belongs to where fresh keys are free to their holder: a /64's /48.
TEST(ClientNetworkKey, IsTheSlash48OfAnIpv6KeyAndNothingElse) {
  EXPECT_EQ(ClientNetworkKey("2001:db8:1:2::/64"), "2001:db8:1::/48");
  EXPECT_EQ(ClientNetworkKey(ClientAddressKey("2001:db8:abcd:ff12:1:2:3:4")), "2001:db8:abcd::/48");
  EXPECT_EQ(ClientNetworkKey("192.0.2.9"), "");
  EXPECT_EQ(ClientNetworkKey("not an address/64"), "");
  EXPECT_EQ(ClientNetworkKey(""), "");
}

}  // namespace
}  // namespace ply::lobby
