// Transposition table: a fixed-size hash of positions already searched, keyed by Zobrist hash.
//
// Layout: buckets of four entries (one 64-byte cache line for 16-byte entries); a position may
// live in any slot of the bucket its key selects. Each entry keeps the full 64-bit key, the best
// move, a score (mate scores stored relative to the node, so they stay right at any ply), the
// draft it was searched to, the bound type, whether the score rests on a heuristic evaluation,
// and the generation (search number) that last wrote it.
//
// Replacement: a store for a key already in the bucket overwrites that entry (keeping the old
// best move when the new search has none). Otherwise the victim is the entry with the lowest
// worth = depth - 4 * age, where age is how many searches ago it was written, so deep results
// of the current search survive and stale ones from earlier searches go first. Aging lets a
// bot worker reuse one table across requests without clearing it.
#ifndef PLY_ENGINE_SEARCH_TT_H_
#define PLY_ENGINE_SEARCH_TT_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "engine/core/types.h"

namespace ply {

enum class Bound : uint8_t { kNone = 0, kUpper = 1, kLower = 2, kExact = 3 };

// The largest table, in MiB, that TranspositionTable makes (64 GiB); tools and services refuse
// larger sizes in their flags.
inline constexpr size_t kMaxTableMegabytes = size_t{1} << 16;

template <class Move>
struct TTEntry {
  uint64_t key;
  Move move;
  int16_t score;
  uint8_t depth;
  // bits 0-1: Bound, bit 2: heuristic, bits 3-7: generation.
  uint8_t flags;

  Bound bound() const { return static_cast<Bound>(flags & 3); }
  bool heuristic() const { return (flags & 4) != 0; }
  uint8_t generation() const { return flags >> 3; }
};

template <class Move>
class TranspositionTable {
 public:
  static constexpr int kBucketSize = 4;
  using Entry = TTEntry<Move>;

  explicit TranspositionTable(size_t megabytes) { Resize(megabytes); }

  // Takes zeroed memory from calloc, which for a table this size maps fresh pages without
  // writing them: they are faulted in as the search stores into them, on its clock and under its
  // stop flag. Zeroing the whole table here (as Clear does) took 0.15-0.23 s for 256 MiB that
  // no deadline or cancellation could cut short.
  // Sizes are capped to 1..kMaxTableMegabytes: a size near 2^64 (a negative flag cast to
  // size_t) made the doubling loop that was here overflow to 0 and spin forever.
  void Resize(size_t megabytes) {
    const size_t bytes = std::clamp<size_t>(megabytes, 1, kMaxTableMegabytes) << 20;
    const size_t buckets = std::bit_floor(bytes / sizeof(Bucket));
    buckets_.reset();
    buckets_.reset(static_cast<Bucket*>(std::calloc(buckets, sizeof(Bucket))));
    if (buckets_ == nullptr) throw std::bad_alloc();
    mask_ = buckets - 1;
    generation_ = 0;
  }

  void Clear() {
    std::memset(static_cast<void*>(buckets_.get()), 0, (mask_ + 1) * sizeof(Bucket));
    generation_ = 0;
  }

  // Called once per search: entries written before count as older from now on.
  void NewSearch() { generation_ = (generation_ + 1) & 31; }

  size_t SizeBytes() const { return (mask_ + 1) * sizeof(Bucket); }

  // The entry for `key`, or nullptr. Its score is relative to the node: see ScoreFromTT.
  const Entry* Probe(uint64_t key) const {
    const Bucket& b = buckets_[key & mask_];
    for (const Entry& e : b.entries) {
      if (e.key == key && e.flags != 0) return &e;
    }
    return nullptr;
  }

  // Starts loading the bucket of `key` into the cache, for a Probe or Store soon after.
  void Prefetch(uint64_t key) const { __builtin_prefetch(&buckets_[key & mask_]); }

  void Store(uint64_t key, Move move, Score score, int ply, int depth, Bound bound, bool heuristic,
             Move no_move) {
    Bucket& b = buckets_[key & mask_];
    Entry* victim = nullptr;
    for (Entry& e : b.entries) {
      if (e.key == key && e.flags != 0) victim = &e;
    }
    if (victim == nullptr) {
      int worst = 1 << 30;
      for (Entry& e : b.entries) {
        int age = (generation_ - e.generation()) & 31;
        int worth = e.flags == 0 ? -(1 << 20) : e.depth - 4 * age;
        if (worth < worst) {
          worst = worth;
          victim = &e;
        }
      }
    }
    if (victim->key == key && move == no_move) move = victim->move;
    victim->key = key;
    victim->move = move;
    victim->score = static_cast<int16_t>(ScoreToTT(score, ply));
    victim->depth = static_cast<uint8_t>(std::clamp(depth, 0, 255));
    victim->flags = static_cast<uint8_t>(static_cast<uint8_t>(bound) | (heuristic ? 4 : 0) |
                                         (generation_ << 3));
  }

  // Mate scores are stored as distance from this node, not from the root.
  static Score ScoreToTT(Score s, int ply) {
    if (s >= kMateThreshold) return s + ply;
    if (s <= -kMateThreshold) return s - ply;
    return s;
  }
  static Score ScoreFromTT(Score s, int ply) {
    if (s >= kMateThreshold) return s - ply;
    if (s <= -kMateThreshold) return s + ply;
    return s;
  }

 private:
  struct Bucket {
    Entry entries[kBucketSize];
  };
  struct Free {
    void operator()(Bucket* p) const { std::free(p); }
  };
  std::unique_ptr<Bucket[], Free> buckets_;
  size_t mask_ = 0;
  uint8_t generation_ = 0;
};

}  // namespace ply

#endif  // PLY_ENGINE_SEARCH_TT_H_
