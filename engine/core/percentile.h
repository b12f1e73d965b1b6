// Nearest-rank percentiles, for the benchmarks' and services' latency reports.
#ifndef PLY_ENGINE_CORE_PERCENTILE_H_
#define PLY_ENGINE_CORE_PERCENTILE_H_

#include <algorithm>
#include <cmath>
#include <vector>

namespace ply {

// The p-th percentile (p in [0, 100]) of `samples` by nearest rank; 0 when empty. p = 0 gives
// the minimum and p = 100 the maximum.
inline double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t rank =
      static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
  return samples[std::clamp<size_t>(rank, 1, samples.size()) - 1];
}

}  // namespace ply

#endif  // PLY_ENGINE_CORE_PERCENTILE_H_
