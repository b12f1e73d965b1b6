// The Connect Four solver's transposition table (solver.cc): a lower and an upper bound per
// position, packed in buckets, growing within each generation. Internal to the solver; in a
// header of its own so that solver.cc keeps to the search.
#ifndef PLY_ENGINE_GAMES_CONNECT4_SOLVER_TABLE_H_
#define PLY_ENGINE_GAMES_CONNECT4_SOLVER_TABLE_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ply::connect4::solver_internal {

// A transposition table entry holds a lower and an upper bound on a position's score. Keys are
// current + mask, unique per position (the lowest empty cell of each column takes a carry), and
// are mixed by a multiplication that is a bijection on key_bits-bit numbers, so the bucket index
// (the top bits of the mix) and the low bits kept in the entry pin a key down exactly: a hit is
// never a collision.
//
// Two entry formats share the table logic. Boards of up to 49 key bits (7x6 included) pack an
// entry in 8 bytes, which halves the memory a search touches; larger boards keep the whole key.
// Entries carry a generation, so that clearing the table takes constant time, and the log2 of
// the nodes their result cost, so that a full bucket keeps its most expensive positions.
struct CompactSlot {
  // [check: 40 | lower + 32: 6 | upper + 32: 6 | work: 6 | generation: 6]
  static constexpr int kCheckBits = 40;
  static constexpr uint32_t kMaxGeneration = 63;

  uint64_t Tag(uint64_t check, uint32_t generation) const { return check << 24 | generation; }
  bool Holds(uint64_t check, uint32_t generation) const {
    return (bits & ~uint64_t{0xFFFFC0}) == Tag(check, generation);
  }
  uint64_t check() const { return bits >> 24; }
  uint32_t generation() const { return bits & 63; }
  int work() const { return (bits >> 6) & 63; }
  int upper() const { return static_cast<int>((bits >> 12) & 63) - 32; }
  int lower() const { return static_cast<int>((bits >> 18) & 63) - 32; }
  void Set(uint64_t check, int lo, int up, int w, uint32_t generation) {
    bits = check << 24 | static_cast<uint64_t>(lo + 32) << 18 |
           static_cast<uint64_t>(up + 32) << 12 | static_cast<uint64_t>(w) << 6 | generation;
  }

  uint64_t bits;
};

struct WideSlot {
  static constexpr int kCheckBits = 64;
  static constexpr uint32_t kMaxGeneration = UINT32_MAX;

  bool Holds(uint64_t c, uint32_t generation) const { return key == c && gen == generation; }
  uint64_t check() const { return key; }
  uint32_t generation() const { return gen; }
  int work() const { return work_; }
  int upper() const { return upper_; }
  int lower() const { return lower_; }
  void Set(uint64_t c, int lo, int up, int w, uint32_t generation) {
    key = c;
    gen = generation;
    lower_ = static_cast<int8_t>(lo);
    upper_ = static_cast<int8_t>(up);
    work_ = static_cast<uint8_t>(w);
  }

  uint64_t key;
  uint32_t gen;
  int8_t lower_;
  int8_t upper_;
  uint8_t work_;
};

// The table starts each generation small and doubles as it fills, up to its full size: a
// search of a few thousand nodes then probes a cache-sized region instead of missing all over
// a large one, which costs far more time than the extra collisions.
template <class Slot>
class TranspositionTable {
 public:
  // Index bits of the smallest active region; the entry keeps the key bits above them.
  static constexpr int kMinIndexBits = 9;
  // The region doubles once this many new keys per slot have been stored into it. Measured: a
  // fuller region costs more re-searches, an emptier one more cache misses.
  static constexpr int kGrowLoad = 2;
  static constexpr int kMaxKeyBits = Slot::kCheckBits + kMinIndexBits;

  TranspositionTable(size_t megabytes, int key_bits) : key_bits_(key_bits) {
    const size_t bytes = std::max<size_t>(megabytes, 1) << 20;
    // More buckets than keys would be wasted (and leave no bits below the index).
    size_ = std::min(std::bit_floor(bytes / sizeof(Bucket)), size_t{1} << std::min(key_bits, 40));
    bytes_ = size_ * sizeof(Bucket);
    key_mask_ = key_bits_ == 64 ? ~uint64_t{0} : (uint64_t{1} << key_bits_) - 1;
    check_mask_ = Slot::kCheckBits == 64 ? ~uint64_t{0} : (uint64_t{1} << Slot::kCheckBits) - 1;
#if defined(__linux__)
    // Anonymous pages come zeroed and are only faulted in once the active region reaches them;
    // huge pages spare TLB misses on random probes.
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "connect4 solver: cannot map %zu bytes\n", bytes_);
      std::abort();
    }
    madvise(p, bytes_, MADV_HUGEPAGE);
    buckets_ = static_cast<Bucket*>(p);
#else
    buckets_ = new Bucket[size_]();
#endif
    SetActive(MinActive());
  }

  ~TranspositionTable() {
#if defined(__linux__)
    munmap(buckets_, bytes_);
#else
    delete[] buckets_;
#endif
  }

  TranspositionTable(const TranspositionTable&) = delete;
  TranspositionTable& operator=(const TranspositionTable&) = delete;

  void Clear() {
    if (++generation_ > Slot::kMaxGeneration) {
      // Generations wrap: wipe every bucket any of them may have used.
      std::memset(static_cast<void*>(buckets_), 0, high_water_ * sizeof(Bucket));
      generation_ = 1;
      high_water_ = 0;
    }
    SetActive(MinActive());
  }

  void Prefetch(uint64_t key) const { __builtin_prefetch(&buckets_[Index(Mix(key))]); }

  bool Find(uint64_t key, int& lower, int& upper) const {
    const uint64_t h = Mix(key);
    const uint64_t check = h & check_mask_;
    for (const Slot& s : buckets_[Index(h)].slot) {
      if (s.Holds(check, generation_)) {
        lower = s.lower();
        upper = s.upper();
        return true;
      }
    }
    return false;
  }

  void Store(uint64_t key, int lower, int upper, int work) {
    const uint64_t h = Mix(key);
    const uint64_t check = h & check_mask_;
    Bucket& b = buckets_[Index(h)];
    Slot* victim = nullptr;
    for (Slot& s : b.slot) {
      if (s.Holds(check, generation_)) {
        s.Set(check, lower, upper, work, generation_);
        return;
      }
      // An empty or old slot first, else the cheapest result.
      if (victim == nullptr || (victim->generation() == generation_ &&
                                (s.generation() != generation_ || s.work() < victim->work()))) {
        victim = &s;
      }
    }
    if (++new_keys_ > grow_at_ && active_ < size_) {
      Grow();
      Store(key, lower, upper, work);
      return;
    }
    victim->Set(check, lower, upper, work, generation_);
  }

 private:
  static constexpr int kSlots = 32 / sizeof(Slot);
  struct alignas(32) Bucket {
    Slot slot[kSlots];
  };

  size_t MinActive() const { return std::min(size_, size_t{1} << kMinIndexBits); }

  uint64_t Mix(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) & key_mask_; }
  size_t Index(uint64_t h) const { return h >> index_shift_; }

  void SetActive(size_t buckets) {
    active_ = buckets;
    high_water_ = std::max(high_water_, active_);
    index_shift_ = key_bits_ - std::countr_zero(active_);
    new_keys_ = 0;
    grow_at_ = static_cast<int64_t>(active_ * kSlots * kGrowLoad);
  }

  // Doubles the active region. The index is the top bits of the mix, so bucket i splits into
  // 2i and 2i + 1; going downwards, both have been emptied before they are refilled.
  void Grow() {
    const size_t old = active_;
    const int low_bits = index_shift_;  // the mix bits below the index
    SetActive(old * 2);
    for (size_t i = old; i-- > 0;) {
      const Bucket from = buckets_[i];
      buckets_[2 * i] = Bucket{};
      buckets_[2 * i + 1] = Bucket{};
      for (const Slot& s : from.slot) {
        if (s.generation() != generation_) continue;
        const uint64_t h = uint64_t{i} << low_bits | (s.check() & ((uint64_t{1} << low_bits) - 1));
        Bucket& to = buckets_[Index(h)];
        for (Slot& t : to.slot) {
          if (t.generation() != generation_) {
            t = s;
            break;
          }
        }
        ++new_keys_;
      }
    }
  }

  const int key_bits_;
  uint64_t key_mask_ = 0;
  uint64_t check_mask_ = 0;
  Bucket* buckets_ = nullptr;
  size_t size_ = 0;
  size_t bytes_ = 0;
  size_t active_ = 0;
  size_t high_water_ = 0;
  int index_shift_ = 0;
  uint32_t generation_ = 1;
  // Keys stored into this generation's active region since it last grew.
  int64_t new_keys_ = 0;
  int64_t grow_at_ = 0;
};

using CompactTable = TranspositionTable<CompactSlot>;
using WideTable = TranspositionTable<WideSlot>;

}  // namespace ply::connect4::solver_internal

#endif  // PLY_ENGINE_GAMES_CONNECT4_SOLVER_TABLE_H_
