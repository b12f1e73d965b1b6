// Deterministic, seedable pseudo-random numbers for Zobrist keys, difficulty noise and openings.
// SplitMix64 is tiny, fast and good enough for all of these; it never allocates.
#ifndef PLY_ENGINE_CORE_RANDOM_H_
#define PLY_ENGINE_CORE_RANDOM_H_

#include <cstdint>

namespace ply {

// One step of SplitMix64: also a good 64-bit mixing function for hashing a key with a seed.
constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit constexpr Rng(uint64_t seed) : state_(seed) {}
  constexpr uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t x = state_;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  // Uniform in [0, n); n > 0. The modulo bias is irrelevant for the small n used here.
  constexpr uint64_t Below(uint64_t n) { return Next() % n; }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// Zobrist keys for a game: key(i) is a fixed pseudo-random 64-bit number for feature i.
// Computed on the fly from the index so that tables of any size cost no memory and no set-up.
// ZobristKeyOfMixedSalt takes Mix64(game_salt), for a game that keeps it rather than mixing it
// again for every key.
constexpr uint64_t ZobristKeyOfMixedSalt(uint64_t mixed_salt, uint64_t feature) {
  return Mix64(mixed_salt ^ (feature * 0x2545f4914f6cdd1dULL));
}
constexpr uint64_t ZobristKey(uint64_t game_salt, uint64_t feature) {
  return ZobristKeyOfMixedSalt(Mix64(game_salt), feature);
}

}  // namespace ply

#endif  // PLY_ENGINE_CORE_RANDOM_H_
