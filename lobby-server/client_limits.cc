#include "lobby-server/client_limits.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/client_address.h"

namespace ply::lobby {
namespace {

// The family (AF_INET, AF_INET6) and bytes of an address; 0 when it is none.
int ParseAddress(std::string_view text, std::array<unsigned char, 16>* bytes) {
  const std::string s(text);
  bytes->fill(0);
  if (inet_pton(AF_INET, s.c_str(), bytes->data()) == 1) return AF_INET;
  if (inet_pton(AF_INET6, s.c_str(), bytes->data()) == 1) return AF_INET6;
  return 0;
}

}  // namespace

bool AddressPrefix::Parse(std::string_view text, AddressPrefix* out) {
  const size_t slash = text.find('/');
  out->family_ = ParseAddress(text.substr(0, slash), &out->bytes_);
  if (out->family_ == 0) return false;
  const int most = out->family_ == AF_INET ? 32 : 128;
  out->bits_ = most;
  if (slash != std::string_view::npos) {
    int bits = -1;
    if (!absl::SimpleAtoi(absl::string_view(text.data() + slash + 1, text.size() - slash - 1),
                          &bits) ||
        bits < 0 || bits > most) {
      return false;
    }
    out->bits_ = bits;
  }
  return true;
}

bool AddressPrefix::Contains(std::string_view address) const {
  std::array<unsigned char, 16> bytes;
  if (ParseAddress(address, &bytes) != family_) return false;
  const int whole = bits_ / 8;
  if (std::memcmp(bytes.data(), bytes_.data(), static_cast<size_t>(whole)) != 0) return false;
  const int rest = bits_ % 8;
  if (rest == 0) return true;
  const unsigned char mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (bytes[whole] & mask) == (bytes_[whole] & mask);
}

ClientLimits::ClientLimits(ClientLimitOptions options)
    : options_(std::move(options)),
      budget_({.calls_per_second = options_.calls_per_second,
               .burst = options_.burst,
               .max_streams = options_.max_streams}) {
  for (const std::string& p : options_.trusted_proxies) {
    AddressPrefix prefix;
    if (AddressPrefix::Parse(p, &prefix)) proxies_.push_back(prefix);
  }
  for (const std::string& e : options_.exempt) exempt_.insert(KeyOf(e));
}

std::string ClientLimits::Check(const ClientLimitOptions& options) {
  for (const std::string& p : options.trusted_proxies) {
    AddressPrefix prefix;
    if (!AddressPrefix::Parse(p, &prefix)) {
      return absl::StrCat("'", p, "' is not an address or a prefix such as 10.0.0.0/8");
    }
  }
  return "";
}

std::string ClientLimits::KeyOf(std::string_view address) { return ClientAddressKey(address); }

namespace {

// Whether `given` is `secret`, in time that does not depend on where they differ.
bool SameSecret(std::string_view given, std::string_view secret) {
  unsigned char diff = given.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < secret.size(); ++i) {
    diff |= static_cast<unsigned char>(secret[i] ^ (i < given.size() ? given[i] : 0));
  }
  return diff == 0;
}

}  // namespace

std::string ClientLimits::ClientOf(std::string_view peer, std::string_view forwarded,
                                   std::string_view proxy) const {
  std::string address = AddressOf(peer);
  const auto trusted = [&](std::string_view a) {
    return std::any_of(proxies_.begin(), proxies_.end(),
                       [&](const AddressPrefix& p) { return p.Contains(a); });
  };
  const bool vouched = !options_.proxy_token.empty() && SameSecret(proxy, options_.proxy_token);
  if (vouched && forwarded.empty()) return std::string(kProxyPrefix) + KeyOf(address);
  if (!forwarded.empty() && (vouched || trusted(address))) {
    // From the right: each trusted proxy vouches for the entry to its left.
    std::vector<absl::string_view> hops =
        absl::StrSplit(absl::string_view(forwarded.data(), forwarded.size()), ',');
    for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
      const std::string hop(absl::StripAsciiWhitespace(*it));
      std::array<unsigned char, 16> bytes;
      // Garbage ends the walk: the last good hop is the client.
      if (ParseAddress(hop, &bytes) == 0) break;
      address = hop;
      if (!trusted(hop)) break;
    }
  }
  return KeyOf(address);
}

std::string ClientLimits::AddressOf(std::string_view peer) {
  std::string_view address = peer;
  if (address.rfind("ipv4:", 0) == 0 || address.rfind("ipv6:", 0) == 0) address.remove_prefix(5);
  if (!address.empty() && address.front() == '[') {
    const size_t close = address.find(']');
    address =
        address.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
    constexpr std::string_view kMapped = "::ffff:";
    if (address.rfind(kMapped, 0) == 0 && address.find('.') != std::string_view::npos) {
      address.remove_prefix(kMapped.size());
    }
    return std::string(address);
  }
  const size_t colon = address.rfind(':');
  return std::string(colon == std::string_view::npos ? address : address.substr(0, colon));
}

}  // namespace ply::lobby
