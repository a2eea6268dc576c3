// Google Benchmark micro-benchmarks of the virtual channels: VirtualChannel::process() over
// cache-sized blocks of the demo stream, called directly (no graph), so the figure is the
// channel's own work: its loop over the input plus the merge into the output block. Compare
// with BM_PlainScan. Items per second = input tags per second on one core.
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>

#include "bench_stream.hpp"
#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/event_generator.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"
#include "tagflow/channels/gated_channel.hpp"

namespace tagflow::bench {
namespace {

constexpr std::size_t kTags = 1 << 22;
constexpr std::size_t kPerBlock = 16384;

// The demo stream cut into consecutive blocks that tile time.
const std::vector<TagBlock>& demoBlocks() {
  static const auto tags = makeBenchStream(kTags);
  static const auto blocks = [] {
    std::vector<TagBlock> cut;
    for (std::size_t first = 0; first + kPerBlock < tags->size(); first += kPerBlock) {
      const std::span<const Tag> span(tags->data() + first, kPerBlock);
      cut.push_back(
          TagBlock{span, {}, span.front().time, (span.data() + kPerBlock)->time, cut.size()});
    }
    return cut;
  }();
  return blocks;
}

void runChannel(benchmark::State& state, VirtualChannel& channel) {
  channel.assignChannels(1000);
  channel.streamStarting();
  BlockBuffer out;
  std::size_t index = 0;
  for (auto _ : state) {
    const auto& blocks = demoBlocks();
    if (index == blocks.size()) {  // time restarts at the stream's beginning
      index = 0;
      channel.streamStarting();
    }
    channel.process(blocks[index++], out);
    benchmark::DoNotOptimize(out.tags.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kPerBlock));
}

void BM_DelayedChannel(benchmark::State& state) {
  DelayedChannel channel("delayed", 2, 1000);
  runChannel(state, channel);
}
BENCHMARK(BM_DelayedChannel);

void BM_GatedChannel(benchmark::State& state) {
  GatedChannel channel("gated", 1, 3, 5);
  runChannel(state, channel);
}
BENCHMARK(BM_GatedChannel);

void BM_Combiner(benchmark::State& state) {
  Combiner channel("combined", {4, 5});
  runChannel(state, channel);
}
BENCHMARK(BM_Combiner);

void BM_Coincidence(benchmark::State& state) {
  Coincidence channel("coincidence", {1, 2}, 2000);
  runChannel(state, channel);
}
BENCHMARK(BM_Coincidence);

void BM_FrequencyMultiplier(benchmark::State& state) {
  FrequencyMultiplier channel("multiplied", 3, state.range(0));
  runChannel(state, channel);
}
BENCHMARK(BM_FrequencyMultiplier)->Arg(2)->Arg(4);

void BM_EventGenerator(benchmark::State& state) {
  EventGenerator channel("pattern", 3, {0, 1000, 2000}, 10);
  runChannel(state, channel);
}
BENCHMARK(BM_EventGenerator);

}  // namespace
}  // namespace tagflow::bench
