// Synthetic streams for measurement tests: a config and the full stream it produces, drained
// from an identical source, for brute-force references.
#pragma once

#include "support/drain.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

namespace tagflow::test {

inline DrainedStream drainSynthetic(const SyntheticConfig& config) {
  SyntheticSource source(config);
  return drain(source);
}

// A mixed stream: Poisson, a jittered clock, a partner of the Poisson channel, and a falling
// edge channel; about `rate_scale` * 8.5 MHz in total.
inline SyntheticConfig mixedConfig(timestamp_t duration_ps, std::size_t block_size,
                                   double rate_scale = 1.0, std::uint64_t seed = 7) {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 5e6 * rate_scale),
                     SyntheticChannel::clock(2, 1e6 * rate_scale, 30),
                     SyntheticChannel::partner(3, 1, 2000, 50, 0.3),
                     SyntheticChannel::poisson(-1, 1e6 * rate_scale)};
  config.seed = seed;
  config.block_size = block_size;
  config.duration_ps = duration_ps;
  return config;
}

}  // namespace tagflow::test
