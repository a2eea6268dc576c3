// Google Benchmark micro-benchmarks of the hot loops: each measurement's processBlock() over
// cache-sized blocks of the demo stream, called directly (no graph), beside a plain scan of
// the same blocks. Items per second = tags per second on one core.
#include <benchmark/benchmark.h>

#include "bench_stream.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

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
BENCHMARK(BM_Counter)->Arg(1'000'000)->Arg(1'000'000'000);

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

void BM_HistogramLogBins(benchmark::State& state) {
  HistogramLogBins histogram("histogram", 2, 1, -12, -6, state.range(0));
  runBlocks(state, histogram);
}
BENCHMARK(BM_HistogramLogBins)->Arg(100)->Arg(1000);

}  // namespace
}  // namespace tagflow::bench

BENCHMARK_MAIN();
