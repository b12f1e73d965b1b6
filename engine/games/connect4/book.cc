#include "engine/games/connect4/book.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "engine/games/connect4/solver.h"

// The shipped book's text, compiled from book_7x6.txt (see engine/CMakeLists.txt).
extern const char kConnect4BookText[];

namespace ply::connect4 {
namespace {

constexpr int kWidth = 7;
constexpr int kHeight = 6;
constexpr int kStride = kHeight + 1;
constexpr uint64_t kColumn = (uint64_t{1} << kHeight) - 1;
// Columns in the solver's order of preference: the centre first.
constexpr int kCentreFirst[kWidth] = {3, 2, 4, 1, 5, 0, 6};

uint64_t ColumnMask(int c) { return kColumn << (c * kStride); }

bool HasFour(uint64_t p) {
  for (int s : {1, kStride, kStride - 1, kStride + 1}) {
    const uint64_t pairs = p & (p >> s);
    if (pairs & (pairs >> 2 * s)) return true;
  }
  return false;
}

uint64_t Pack(uint64_t key, int column, int score) {
  return key << 12 | static_cast<uint64_t>(column) << 6 | static_cast<uint64_t>(score + 32);
}

struct Position {
  uint64_t current = 0;  // stones of the side to move
  uint64_t mask = 0;
  int moves = 0;

  // The cell a stone dropped in `c` lands on; 0 when the column is full.
  uint64_t Cell(int c) const { return (mask + (uint64_t{1} << (c * kStride))) & ColumnMask(c); }
  bool Wins(int c) const { return HasFour(current | Cell(c)); }
  Position After(int c) const { return {current ^ mask, mask | Cell(c), moves + 1}; }
  // The key of the smaller orientation, and whether that is the mirror image.
  uint64_t Canonical(bool& mirrored) const {
    const uint64_t key = OpeningBook::Key(current, mask);
    const uint64_t mirror = OpeningBook::Mirror(key);
    mirrored = mirror < key;
    return mirrored ? mirror : key;
  }
};

}  // namespace

uint64_t OpeningBook::Mirror(uint64_t b) {
  uint64_t out = 0;
  for (int c = 0; c < kWidth; ++c) {
    out |= ((b >> (c * kStride)) & ((uint64_t{1} << kStride) - 1)) << ((kWidth - 1 - c) * kStride);
  }
  return out;
}

void OpeningBook::Decode(uint64_t key, uint64_t& current, uint64_t& mask) {
  current = mask = 0;
  for (int c = 0; c < kWidth; ++c) {
    // current + mask + 1 in one column (never carrying into the next): its highest bit is the
    // one above the column's stones.
    const uint64_t column = ((key >> (c * kStride)) & ((uint64_t{1} << kStride) - 1)) + 1;
    const uint64_t top = std::bit_floor(column);
    mask |= (top - 1) << (c * kStride);
    current |= (column - top) << (c * kStride);
  }
}

absl::StatusOr<OpeningBook> OpeningBook::Parse(std::string_view text) {
  OpeningBook book;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint64_t key = 0;
    int column = 0, score = 0;
    if (fields.size() != 3 || !absl::SimpleHexAtoi(fields[0], &key) ||
        !absl::SimpleAtoi(fields[1], &column) || !absl::SimpleAtoi(fields[2], &score) ||
        column < 1 || column > kWidth || score < -21 || score > 21 || key >> 49 != 0) {
      return absl::InvalidArgumentError(absl::StrCat("book line ", line_number, " is malformed"));
    }
    book.packed_.push_back(Pack(key, column - 1, score));
    uint64_t current, mask;
    Decode(key, current, mask);
    book.max_ply_ = std::max(book.max_ply_, std::popcount(mask));
  }
  std::sort(book.packed_.begin(), book.packed_.end());
  return book;
}

const OpeningBook& OpeningBook::Standard() {
  static const OpeningBook* book = [] {
    absl::StatusOr<OpeningBook> parsed = Parse(kConnect4BookText);
    if (!parsed.ok()) {
      std::fprintf(stderr, "connect4: the compiled opening book is malformed: %s\n",
                   std::string(parsed.status().message()).c_str());
      std::abort();
    }
    return new OpeningBook(*std::move(parsed));
  }();
  return *book;
}

std::optional<BookEntry> OpeningBook::Find(uint64_t current, uint64_t mask) const {
  bool mirrored = false;
  const uint64_t key = Position{current, mask, 0}.Canonical(mirrored);
  auto it = std::lower_bound(packed_.begin(), packed_.end(), key << 12);
  if (it == packed_.end() || *it >> 12 != key) return std::nullopt;
  const int column = static_cast<int>((*it >> 6) & 63);
  return BookEntry{.column = mirrored ? kWidth - 1 - column : column,
                   .score = static_cast<int>(*it & 63) - 32};
}

std::vector<OpeningBook::Stored> OpeningBook::Entries() const {
  std::vector<Stored> out;
  out.reserve(packed_.size());
  for (uint64_t p : packed_) {
    out.push_back({p >> 12, static_cast<int>((p >> 6) & 63), static_cast<int>(p & 63) - 32});
  }
  return out;
}

absl::StatusOr<std::string> BuildBook(
    const BookPlan& plan,
    const std::function<void(std::string_view part, int ply, int positions, double seconds,
                             const std::string& text)>& progress) {
  const int max_ply = plan.max_ply;
  if (max_ply < 0 || max_ply > 20) {
    return absl::InvalidArgumentError("the book's last ply must be 0..20");
  }
  if (plan.every_position_to_ply > 12) {
    return absl::InvalidArgumentError(
        "every position to a ply beyond 12 is millions of positions: the solver answers there");
  }
  if (plan.threads < 1 || plan.threads > 256) {
    return absl::InvalidArgumentError("the book's threads must be 1..256");
  }
  std::vector<std::unique_ptr<Solver>> solvers;
  for (int t = 0; t < plan.threads; ++t) {
    solvers.push_back(std::make_unique<Solver>(kWidth, kHeight, plan.tt_megabytes));
  }
  // Canonical key -> column (in the canonical orientation) and score.
  std::map<uint64_t, std::pair<int, int>> book;
  if (plan.start != nullptr) {
    for (const OpeningBook::Stored& e : plan.start->Entries()) book[e.key] = {e.column, e.score};
  }
  auto store = [&](const Position& p, int column, int score) {
    bool mirrored = false;
    const uint64_t key = p.Canonical(mirrored);
    book[key] = {mirrored ? kWidth - 1 - column : column, score};
  };
  auto lookup = [&](const Position& p) -> const std::pair<int, int>* {
    bool mirrored = false;
    auto it = book.find(p.Canonical(mirrored));
    return it == book.end() ? nullptr : &it->second;
  };
  auto column_of = [&](const Position& p) {
    bool mirrored = false;
    const int c = book.at(p.Canonical(mirrored)).first;
    return mirrored ? kWidth - 1 - c : c;
  };
  // Stores the solver's answer for `p`.
  auto record = [&](const Position& p, const SolveResult& r) -> absl::Status {
    if (!r.solved || r.best_column < 0) {
      return absl::InternalError(absl::StrCat("the solver gave no move after ", p.moves, " plies"));
    }
    store(p, r.best_column, r.score);
    return absl::OkStatus();
  };
  auto solve = [&](const Position& p) {
    return record(p, solvers[0]->Solve(p.current, p.mask, p.moves));
  };
  // Solves the positions of `todo` not yet in the book, the solvers at work at once, each on a
  // thread of its own. This thread records what they finished and, every
  // plan.checkpoint_seconds, hands the book so far to `checkpoint` (the positions added and how
  // many are left), so that a ply of hours can be stopped and taken up again from its file.
  auto solve_all = [&](const std::vector<Position>& todo,
                       const std::function<void(int added, int left)>& checkpoint) -> absl::Status {
    std::vector<Position> open;
    for (const Position& p : todo) {
      if (lookup(p) == nullptr) open.push_back(p);
    }
    // Runs of kRun positions, taken in order by whichever solver is free: some parts of a ply
    // take the solver far longer than others (a fixed share each left one core idle for half
    // of a ply), and siblings still meet in one solver's table.
    constexpr size_t kRun = 8;
    std::atomic<size_t> next_run{0};
    std::atomic<size_t> finished{0};
    std::atomic<bool> abandon{false};
    std::vector<SolveResult> results(open.size());
    std::unique_ptr<std::atomic<bool>[]> done(new std::atomic<bool>[open.size()]);
    for (size_t i = 0; i < open.size(); ++i) done[i].store(false, std::memory_order_relaxed);
    std::mutex mu;
    std::condition_variable changed;
    auto work = [&](Solver& solver) {
      for (size_t begin; !abandon && (begin = next_run.fetch_add(kRun)) < open.size();) {
        for (size_t i = begin; i < std::min(open.size(), begin + kRun) && !abandon; ++i) {
          results[i] = solver.Solve(open[i].current, open[i].mask, open[i].moves);
          done[i].store(true, std::memory_order_release);
          finished.fetch_add(1);
          std::lock_guard<std::mutex> lock(mu);
          changed.notify_one();
        }
      }
    };
    // However this ends (an error, an exception), the workers stop after the position each is
    // on and are joined.
    struct Joiner {
      std::vector<std::thread>& workers;
      std::atomic<bool>& abandon;
      ~Joiner() {
        abandon = true;
        for (std::thread& w : workers) {
          if (w.joinable()) w.join();
        }
      }
    };
    std::vector<std::thread> workers;
    Joiner joiner{workers, abandon};
    for (auto& solver : solvers) workers.emplace_back(work, std::ref(*solver));
    absl::Status status = absl::OkStatus();
    std::vector<bool> recorded(open.size(), false);
    size_t added = 0;
    auto record_done = [&] {
      for (size_t i = 0; i < open.size() && status.ok(); ++i) {
        if (recorded[i] || !done[i].load(std::memory_order_acquire)) continue;
        recorded[i] = true;
        ++added;
        status = record(open[i], results[i]);
      }
    };
    // A period of 0 or less reports at every position finished.
    const bool timed = plan.checkpoint_seconds > 0;
    const auto period = std::chrono::duration<double>(std::max(plan.checkpoint_seconds, 0.0));
    auto last = std::chrono::steady_clock::now();
    size_t reported = 0;
    for (size_t seen = 0; seen < open.size() && status.ok();) {
      {
        std::unique_lock<std::mutex> lock(mu);
        auto moved = [&] { return finished.load() != seen; };
        if (timed) {
          changed.wait_for(lock,
                           std::min<std::chrono::duration<double>>(period, std::chrono::seconds(1)),
                           moved);
        } else {
          changed.wait(lock, moved);
        }
      }
      seen = finished.load();
      if (checkpoint && std::chrono::steady_clock::now() - last >= period) {
        record_done();
        // Only a ply still unfinished is reported, and only with something new in it.
        if (status.ok() && added > reported && added < open.size()) {
          checkpoint(static_cast<int>(added), static_cast<int>(open.size() - added));
          reported = added;
        }
        last = std::chrono::steady_clock::now();
      }
    }
    if (!status.ok()) abandon = true;
    for (std::thread& w : workers) w.join();
    record_done();
    return status;
  };
  // The empty board takes the solver far longer than its seven children together (most of
  // which the book needs anyway): its value is the best of theirs.
  auto solve_by_children = [&](const Position& p) -> absl::Status {
    int best_column = -1, best = -100;
    for (int c : kCentreFirst) {
      if (p.Cell(c) == 0) continue;
      int v;
      if (p.Wins(c)) {
        v = WinScore(kWidth, kHeight, p.moves);
      } else {
        const Position child = p.After(c);
        if (lookup(child) == nullptr) {
          if (absl::Status s = solve(child); !s.ok()) return s;
        }
        v = -lookup(child)->second;
      }
      if (v > best) best = v, best_column = c;
    }
    store(p, best_column, best);
    return absl::OkStatus();
  };
  // Ply 0 is the empty board alone, solved through its children.
  auto solve_ply = [&](int ply, const std::vector<Position>& positions,
                       const std::function<void(int, int)>& checkpoint) -> absl::Status {
    if (ply > 0) return solve_all(positions, checkpoint);
    return lookup(positions[0]) != nullptr ? absl::OkStatus() : solve_by_children(positions[0]);
  };
  auto text = [&] {
    std::string out = absl::StrCat(
        "# ply Connect Four opening book for the perfect level, 7x6 (format: book.h)\n"
        "# generated by: ply-engine book connect4 --max-ply ",
        max_ply,
        plan.every_position_to_ply >= 0
            ? absl::StrCat(" --every-position-to-ply ", plan.every_position_to_ply)
            : std::string(),
        "\n# entries: ", book.size(), "\n");
    for (const auto& [key, entry] : book) {
      absl::StrAppendFormat(&out, "%013x %d %d\n", key, entry.first + 1, entry.second);
    }
    return out;
  };

  // What a long ply reports on its way: the book so far, as `progress` gets it after a ply.
  auto checkpoint = [&](std::string_view part, int ply,
                        std::chrono::steady_clock::time_point start) {
    return [&progress, &text, part, ply, start](int added, int left) {
      if (!progress) return;
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress(absl::StrCat(std::string(part), " so far (", left, " to go)"), ply, added, seconds,
               text());
    };
  };

  // The level's decision positions at the current ply, one per canonical key.
  std::vector<Position> frontier[2];
  frontier[0].push_back({});
  for (int c = 0; c < kWidth; ++c) frontier[1].push_back(Position{}.After(c));
  for (int ply = 0; ply <= max_ply; ++ply) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Position>& positions = frontier[ply % 2];
    std::unordered_set<uint64_t> seen;
    std::vector<Position> unique;
    for (const Position& p : positions) {
      bool mirrored = false;
      if (seen.insert(p.Canonical(mirrored)).second) unique.push_back(p);
    }
    const size_t before = book.size();
    if (absl::Status s = solve_ply(ply, unique, checkpoint("own lines", ply, start)); !s.ok()) {
      return s;
    }
    // The level's move, then every reply that leaves the game open.
    std::vector<Position> next;
    for (const Position& p : unique) {
      const int c = column_of(p);
      if (p.Wins(c)) continue;
      const Position q = p.After(c);
      if (q.moves == kWidth * kHeight) continue;
      for (int r = 0; r < kWidth; ++r) {
        if (q.Cell(r) == 0 || q.Wins(r)) continue;
        const Position child = q.After(r);
        if (child.moves < kWidth * kHeight) next.push_back(child);
      }
    }
    positions = std::move(next);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (progress) {
      progress("own lines", ply, static_cast<int>(book.size() - before), seconds, text());
    }
  }

  // Every open position up to every_position_to_ply, whoever made its moves: one per canonical
  // key, children after their parents (siblings one after another, whose trees the solver's
  // table shares).
  std::vector<Position> all = {Position{}};
  for (int ply = 0; ply <= plan.every_position_to_ply; ++ply) {
    const auto start = std::chrono::steady_clock::now();
    const size_t before = book.size();
    if (absl::Status s = solve_ply(ply, all, checkpoint("every position", ply, start)); !s.ok()) {
      return s;
    }
    std::vector<Position> next;
    std::unordered_set<uint64_t> seen;
    for (const Position& p : all) {
      for (int c : kCentreFirst) {
        if (p.Cell(c) == 0 || p.Wins(c)) continue;
        const Position child = p.After(c);
        bool mirrored = false;
        if (child.moves < kWidth * kHeight && seen.insert(child.Canonical(mirrored)).second) {
          next.push_back(child);
        }
      }
    }
    all = std::move(next);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (progress) {
      progress("every position", ply, static_cast<int>(book.size() - before), seconds, text());
    }
  }
  return text();
}

}  // namespace ply::connect4
