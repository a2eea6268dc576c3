// Google Benchmark micro-benchmarks of the hot loops: each measurement's processBlock() over
// cache-sized blocks of the demo stream, called directly (no graph), beside a plain scan of
// the same blocks. Items per second = tags per second on one core.
#include <benchmark/benchmark.h>

#include "bench_stream.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"
#include "tagflow/measurements/phase_noise.hpp"

namespace tagflow::bench {
namespace {

constexpr std::size_t kStreamTags = 1 << 22;
constexpr std::size_t kBlockTags = 16384;

const std::vector<Tag>& stream() {
  static const auto tags = makeBenchStream(kStreamTags);
  return *tags;
}

TagBlock blockAt(std::size_t index) {
  const auto& tags = stream();
  const std::size_t blocks = tags.size() / kBlockTags;
  const std::size_t first = (index % blocks) * kBlockTags;
  const std::span<const Tag> span(tags.data() + first, kBlockTags);
  return TagBlock{span, {}, span.front().time, span.back().time + 1, index};
}

void runBlocks(benchmark::State& state, Measurement& measurement) {
  const std::size_t blocks = stream().size() / kBlockTags;
  std::size_t index = 0;
  for (auto _ : state) {
    if (index % blocks == 0) measurement.clear();  // time restarts at the stream's beginning
    measurement.processBlock(blockAt(index++));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBlockTags));
}

void BM_PlainScan(benchmark::State& state) {
  std::size_t index = 0;
  for (auto _ : state) benchmark::DoNotOptimize(plainScan(blockAt(index++).tags));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBlockTags));
}
BENCHMARK(BM_PlainScan);

void BM_Counter(benchmark::State& state) {
  Counter counter("counter", {1, 2, 3, 4, 5, 6, 7, 8}, state.range(0), 1000);
  runBlocks(state, counter);
}
// The binwidth swept from 1 ms to 1 ns: the cost follows the tags, not the bins passed; 100 us
// and 10 us bracket where the bulk count overtakes the tag-by-tag loop.
BENCHMARK(BM_Counter)
    ->Arg(1'000'000'000)
    ->Arg(100'000'000)
    ->Arg(10'000'000)
    ->Arg(1'000'000)
    ->Arg(100'000)
    ->Arg(10'000)
    ->Arg(1'000);

void BM_Countrate(benchmark::State& state) {
  Countrate countrate("countrate", {1, 2, 3, 4, 5, 6, 7, 8});
  runBlocks(state, countrate);
}
BENCHMARK(BM_Countrate);

// Channel 2 echoes channel 1 after 1 ns: one partner inside a 10 ns window.
void BM_Correlation(benchmark::State& state) {
  Correlation correlation("correlation", 2, 1, state.range(0) / 1000, 1000);
  runBlocks(state, correlation);
}
BENCHMARK(BM_Correlation)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Arg(1'000'000);

// 1 ps bins: the window grows with the bins (1 ns, 100 ns, 1 us) and the histogram past the
// caches (8 KB, 800 KB, 8 MB).
void BM_CorrelationFineBins(benchmark::State& state) {
  Correlation correlation("correlation", 2, 1, 1, state.range(0));
  runBlocks(state, correlation);
}
BENCHMARK(BM_CorrelationFineBins)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

void BM_HistogramLogBins(benchmark::State& state) {
  HistogramLogBins histogram("histogram", 2, 1, -12, -6, state.range(0));
  runBlocks(state, histogram);
}
BENCHMARK(BM_HistogramLogBins)->Arg(100)->Arg(1000);

// Channel 3 is the 10 MHz clock, 1/7 of the stream.
void BM_FrequencyStability(benchmark::State& state) {
  const std::vector<std::int64_t> steps = {1,  2,   3,   5,   7,   10,  14,  20,   30,   50,
                                           70, 100, 140, 200, 300, 500, 700, 1000, 1400, 2000};
  FrequencyStability stability("stability", 3, steps, state.range(0), 1000);
  runBlocks(state, stability);
}
BENCHMARK(BM_FrequencyStability)->Arg(1)->Arg(1000);

void BM_PhaseNoise(benchmark::State& state) {
  PhaseNoise noise("noise", {3}, state.range(0));
  runBlocks(state, noise);
}
BENCHMARK(BM_PhaseNoise)->Arg(64)->Arg(512);

// Four 10 MHz clocks among 30 MHz of Poisson events: one PhaseNoise over all four clocks
// (one pass over each block) against four single-clock measurements (four passes).
const std::vector<std::vector<Tag>>& fourClockBlocks() {
  static const auto blocks = [] {
    SyntheticConfig config;
    config.channels = {SyntheticChannel::poisson(1, 30e6)};
    for (channel_t clock = 2; clock <= 5; ++clock) {
      config.channels.push_back(SyntheticChannel::clock(clock, 10e6 + 1e3 * clock, 10));
    }
    config.block_size = kBlockTags;
    SyntheticSource source(config);
    std::vector<std::vector<Tag>> result;
    BlockBuffer block;
    while (result.size() < 256 && source.next(block)) {
      result.emplace_back(block.tags.begin(), block.tags.end());
    }
    return result;
  }();
  return blocks;
}

void BM_PhaseNoiseFourClocks(benchmark::State& state) {
  std::vector<std::unique_ptr<PhaseNoise>> measurements;
  if (state.range(0) == 1) {
    measurements.push_back(
        std::make_unique<PhaseNoise>("shared", std::vector<channel_t>{2, 3, 4, 5}));
  } else {
    for (channel_t clock = 2; clock <= 5; ++clock) {
      measurements.push_back(std::make_unique<PhaseNoise>("single", std::vector<channel_t>{clock}));
    }
  }
  const auto& blocks = fourClockBlocks();
  std::size_t index = 0, tags = 0;
  for (auto _ : state) {
    const auto& block = blocks[index % blocks.size()];
    if (index % blocks.size() == 0) {
      for (auto& measurement : measurements) measurement->clear();
    }
    const std::span<const Tag> span(block);
    const TagBlock view{span, {}, span.front().time, span.back().time + 1, index++};
    for (auto& measurement : measurements) measurement->processBlock(view);
    tags += span.size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(tags));
}
BENCHMARK(BM_PhaseNoiseFourClocks)->ArgName("shared")->Arg(1)->Arg(0);

}  // namespace
}  // namespace tagflow::bench

BENCHMARK_MAIN();
