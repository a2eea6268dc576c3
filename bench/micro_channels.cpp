// Google Benchmark micro-benchmarks of the virtual channels: VirtualChannel::process() over
// cache-sized blocks of the demo stream, called directly (no graph), so the figure is the
// channel's own work: its pass over the input into the output block. Compare
// with BM_PlainScan. Items per second = input tags per second on one core. The
// ConstantFractionDiscriminator reads the pulse stream (channel 1 with its falling edges).
// BM_InputDelaySource drains the demo stream through a source's input delays, which run
// before any channel: 1, 2 or 3 channels delayed by different amounts.
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <optional>

#include "bench_stream.hpp"
#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/constant_fraction_discriminator.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/event_generator.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"
#include "tagflow/channels/gated_channel.hpp"
#include "tagflow/io/sources/input_delay_source.hpp"
#include "tagflow/io/sources/memory_source.hpp"

namespace tagflow::bench {
namespace {

constexpr std::size_t kTags = 1 << 22;
constexpr std::size_t kPerBlock = 16384;

// A stream cut into consecutive blocks that tile time.
std::vector<TagBlock> cutIntoBlocks(const std::vector<Tag>& tags) {
  std::vector<TagBlock> cut;
  for (std::size_t first = 0; first + kPerBlock < tags.size(); first += kPerBlock) {
    const std::span<const Tag> span(tags.data() + first, kPerBlock);
    cut.push_back(
        TagBlock{span, {}, span.front().time, (span.data() + kPerBlock)->time, cut.size()});
  }
  return cut;
}

const std::vector<TagBlock>& demoBlocks() {
  static const auto tags = makeBenchStream(kTags);
  static const auto blocks = cutIntoBlocks(*tags);
  return blocks;
}

const std::vector<TagBlock>& pulseBlocks() {
  static const auto tags = makePulseStream(kTags);
  static const auto blocks = cutIntoBlocks(*tags);
  return blocks;
}

void runChannel(benchmark::State& state, VirtualChannel& channel,
                const std::vector<TagBlock>& (*stream)() = demoBlocks) {
  channel.assignChannels(1000);
  channel.streamStarting();
  BlockBuffer out;
  std::size_t index = 0;
  for (auto _ : state) {
    const auto& blocks = stream();
    if (index == blocks.size()) {  // time restarts at the stream's beginning
      index = 0;
      channel.streamStarting();
    }
    channel.process(blocks[index++], out);
    benchmark::DoNotOptimize(out.tags.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kPerBlock));
}

// The floor of every channel that generates tags: the block copied to an output buffer.
void BM_BlockCopy(benchmark::State& state) {
  std::vector<Tag> out(kPerBlock);
  std::size_t index = 0;
  for (auto _ : state) {
    const auto& blocks = demoBlocks();
    if (index == blocks.size()) index = 0;
    const std::span<const Tag> tags = blocks[index++].tags;
    Tag* to = out.data();
    for (const Tag& tag : tags) {
      prefetchAhead(&tag);
      *to++ = tag;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kPerBlock));
}
BENCHMARK(BM_BlockCopy);

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

void BM_Coincidences(benchmark::State& state) {
  Coincidences channel("coincidences", {{1, 2}, {1, 3}, {2, 3}}, 2000);
  runChannel(state, channel);
}
BENCHMARK(BM_Coincidences);

void BM_ConstantFractionDiscriminator(benchmark::State& state) {
  ConstantFractionDiscriminator channel("cfd", {1}, 10'000);
  runChannel(state, channel, pulseBlocks);
}
BENCHMARK(BM_ConstantFractionDiscriminator);

void BM_FrequencyMultiplier(benchmark::State& state) {
  FrequencyMultiplier channel("multiplied", 3, state.range(0));
  runChannel(state, channel);
}
BENCHMARK(BM_FrequencyMultiplier)->Arg(2)->Arg(4)->Arg(8)->Arg(32);

void BM_EventGenerator(benchmark::State& state) {
  EventGenerator channel("pattern", 3, {0, 1000, 2000}, 10);
  runChannel(state, channel);
}
BENCHMARK(BM_EventGenerator);

void BM_InputDelaySource(benchmark::State& state) {
  static const auto tags = makeBenchStream(kTags);
  const std::vector<InputDelay> all{{2, -1000}, {3, 5000}, {5, 250'000}};
  const std::vector<InputDelay> delays(all.begin(), all.begin() + state.range(0));
  auto make = [&] {
    return InputDelaySource(std::make_unique<MemorySource>(tags, kPerBlock), delays);
  };
  std::optional<InputDelaySource> source(make());
  BlockBuffer out;
  std::size_t drained = 0;
  for (auto _ : state) {
    if (!source->next(out)) {  // the stream restarts at its beginning
      state.PauseTiming();
      source.emplace(make());
      state.ResumeTiming();
      continue;
    }
    drained += out.tags.size();
    benchmark::DoNotOptimize(out.tags.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(drained));
}
BENCHMARK(BM_InputDelaySource)->Arg(1)->Arg(2)->Arg(3);

}  // namespace
}  // namespace tagflow::bench
