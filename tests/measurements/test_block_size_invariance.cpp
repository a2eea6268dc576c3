// Results do not depend on how the stream is cut into blocks nor on the thread count: the
// same synthetic stream through graphs with block sizes 1 .. 1<<20 tags and 1 or 2 threads
// gives bit-identical Counter and Countrate results, which also match the brute force.
#include <catch2/catch.hpp>

#include <vector>

#include "support/drain.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

const std::vector<channel_t> kChannels{1, 2, 3, -1};

struct Results {
  std::vector<std::int64_t> rolling, sweep;
  std::vector<double> normalized_rolling, normalized_sweep;
  std::vector<std::int8_t> mask;
  std::vector<std::uint64_t> totals;
  std::uint64_t bins = 0;
  std::vector<double> rates;
  std::vector<std::int64_t> counts;
  timestamp_t capture = 0;
};

SyntheticConfig streamConfig(timestamp_t duration_ps, std::size_t block_size) {
  SyntheticConfig config = mixedConfig(duration_ps, block_size, 1.7, 5);
  config.overflows = {{duration_ps / 3, duration_ps / 3 + duration_ps / 20}};
  return config;
}

Results runOnce(const SyntheticConfig& config, timestamp_t binwidth, int threads) {
  SyntheticSource source(config);
  Counter counter("counter", kChannels, binwidth, 64);
  Countrate countrate("countrate", kChannels);
  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 6, .threads = threads});
  graph.add(counter);
  graph.add(countrate);
  graph.run();
  return Results{counter.getData(true),           counter.getData(false),
                 counter.getDataNormalized(true), counter.getDataNormalized(false),
                 counter.getOverflowMask(),       counter.getDataTotalCounts(),
                 counter.getBinsCompleted(),      countrate.getData(),
                 countrate.getCountsTotal(),      countrate.getCaptureDuration()};
}

void requireIdentical(const Results& a, const Results& b) {
  CHECK(a.rolling == b.rolling);
  CHECK(a.sweep == b.sweep);
  CHECK(sameBits(a.normalized_rolling, b.normalized_rolling));
  CHECK(sameBits(a.normalized_sweep, b.normalized_sweep));
  CHECK(a.mask == b.mask);
  CHECK(a.totals == b.totals);
  CHECK(a.bins == b.bins);
  CHECK(sameBits(a.rates, b.rates));
  CHECK(a.counts == b.counts);
  CHECK(a.capture == b.capture);
}

void checkInvariance(timestamp_t duration_ps, timestamp_t binwidth,
                     const std::vector<std::size_t>& block_sizes) {
  const SyntheticConfig reference_config = streamConfig(duration_ps, 4096);
  const DrainedStream stream = drainSynthetic(reference_config);
  SyntheticConfig clean = reference_config;
  clean.overflows.clear();
  const DrainedStream full = drainSynthetic(clean);
  const auto ref = counterReference(
      stream.tags, kChannels, 0, stream.end(), binwidth, 64,
      {{reference_config.overflows[0].begin_ps, reference_config.overflows[0].end_ps}});

  const Results baseline = runOnce(reference_config, binwidth, 1);
  CHECK(baseline.rolling == ref.data(true));
  CHECK(baseline.mask == ref.mask(true));
  CHECK(baseline.totals == ref.totals);
  for (std::size_t c = 0; c < kChannels.size(); ++c) {
    CHECK(baseline.counts[c] ==
          static_cast<std::int64_t>(countTimeTags(full.tags, kChannels[c], 0, full.end())));
  }
  for (std::size_t block_size : block_sizes) {
    for (int threads : {1, 2}) {
      INFO("block_size " << block_size << ", threads " << threads);
      requireIdentical(runOnce(streamConfig(duration_ps, block_size), binwidth, threads), baseline);
    }
  }
}

}  // namespace

TEST_CASE("Results are bit-identical for large block sizes and 1 or 2 threads", "[invariance]") {
  // ~20 ms at ~14 MHz: about 290k tags.
  checkInvariance(20'000'000'000, 333'333'333, {2048, 65536, std::size_t{1} << 20});
}

TEST_CASE("Results are bit-identical for tiny block sizes and 1 or 2 threads", "[invariance]") {
  // ~1.5 ms: about 21k tags, so block size 1 stays quick.
  checkInvariance(1'500'000'000, 23'456'789, {1, 7});
}
