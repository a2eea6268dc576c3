#include "channel_bench.hpp"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <vector>

#include "bench_stream.hpp"
#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/constant_fraction_discriminator.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/event_generator.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"
#include "tagflow/channels/gated_channel.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"

namespace tagflow::bench {

namespace {

using Stream = std::shared_ptr<const std::vector<Tag>>;

struct ChannelCase {
  std::string name;
  std::string setup;
  bool with_falling_edges = false;  // runs on the stream whose channel 1 has falling edges
  std::function<std::unique_ptr<VirtualChannel>()> make;
};

std::vector<ChannelCase> channelCases() {
  return {
      {"DelayedChannel", "channel 2 (10 MHz) delayed by 1 ns", false,
       [] { return std::make_unique<DelayedChannel>("delayed", 2, 1000); }},
      {"GatedChannel", "channel 1 (20 MHz) gated open by 3, closed by 5", false,
       [] { return std::make_unique<GatedChannel>("gated", 1, 3, 5); }},
      {"Combiner", "channels 4 and 5 (1 + 2 MHz)", false,
       [] {
         return std::make_unique<Combiner>("combined", std::vector<channel_t>{4, 5});
       }},
      {"Coincidence", "channels 1 and 2, window 2 ns", false,
       [] {
         return std::make_unique<Coincidence>("coincidence", std::vector<channel_t>{1, 2}, 2000);
       }},
      {"Coincidences", "groups {1,2} {1,3} {2,3}, window 2 ns", false,
       [] {
         return std::make_unique<Coincidences>(
             "coincidences", std::vector<std::vector<channel_t>>{{1, 2}, {1, 3}, {2, 3}}, 2000);
       }},
      {"FrequencyMultiplier", "channel 3 (10 MHz clock) x 4", false,
       [] { return std::make_unique<FrequencyMultiplier>("multiplied", 3, 4); }},
      {"EventGenerator", "every 10th tick of channel 3, pattern of 3 tags", false,
       [] {
         return std::make_unique<EventGenerator>("pattern", 3,
                                                 std::vector<timestamp_t>{0, 1000, 2000}, 10);
       }},
      {"ConstantFractionDiscriminator", "channel 1 (20 MHz pulses of 3 ns), search 10 ns", true,
       [] {
         return std::make_unique<ConstantFractionDiscriminator>("cfd", std::vector<channel_t>{1},
                                                                10'000);
       }},
  };
}

// Capacity of the first node after the source in one graph run: the virtual channel, or the
// scan when there is none. On one thread, so the node has the core to itself. With the graph
// on two threads the other one (source, reader, a waiting worker) competes for the core where
// the machine's two CPUs are one core's hardware threads, and that costs a channel, bound by
// instructions, more than the scan, which waits on memory (measured on the 2-CPU reference
// machine: FrequencyMultiplier x4 at 0.32-0.36 of the scan on two threads, 0.40-0.41 on one).
double capacityOnce(const Stream& stream, const ChannelBenchOptions& options,
                    const std::function<std::unique_ptr<VirtualChannel>()>& make_channel) {
  MemorySource source(stream, options.block_size);
  GraphOptions graph_options;
  graph_options.threads = 1;
  MeasurementGraph graph(source, graph_options);
  std::unique_ptr<VirtualChannel> channel;
  if (make_channel) {
    channel = make_channel();
    graph.add(*channel);
    graph.emplace<NullMeasurement>("reader");
  } else {
    graph.emplace<ScanMeasurement>("scan");
  }
  return graph.run().nodes[1].capacityMTagsPerSecond();
}

// The runs of one channel, each after a scan of the same stream.
struct PairedRuns {
  std::vector<double> rates;   // capacity of the virtual channel
  std::vector<double> scans;   // capacity of the scan just before it
  std::vector<double> ratios;  // of each run to its scan

  void add(double rate, double scan) {
    rates.push_back(rate);
    scans.push_back(scan);
    ratios.push_back(rate / scan);
  }
};

// Three virtual channels and four measurements reading them: a heralded-pair analysis.
double composedGraphWall(const Stream& stream, const ChannelBenchOptions& options, int threads) {
  std::vector<double> walls;
  for (int run = 0; run < options.runs; ++run) {
    MemorySource source(stream, options.block_size);
    GraphOptions graph_options;
    graph_options.threads = threads;
    MeasurementGraph graph(source, graph_options);
    auto& herald = graph.emplace<DelayedChannel>("herald", 1, 1000);
    auto& pairs =
        graph.emplace<Coincidence>("pairs", std::vector<channel_t>{herald.getChannel(), 2}, 500);
    auto& gated = graph.emplace<GatedChannel>("gated", 4, 3, 5);
    graph.emplace<Countrate>(
        "rates",
        std::vector<channel_t>{1, 2, herald.getChannel(), pairs.getChannel(), gated.getChannel()});
    graph.emplace<Counter>("trace", std::vector<channel_t>{pairs.getChannel(), gated.getChannel()},
                           1'000'000'000, 100);
    graph.emplace<Correlation>("g2", 2, herald.getChannel(), 10, 1000);
    graph.emplace<Correlation>("pairs_vs_clock", pairs.getChannel(), 3, 100, 1000);
    walls.push_back(graph.run().wallMTagsPerSecond());
  }
  return median(walls);
}

}  // namespace

int runChannelBench(const ChannelBenchOptions& options) {
  std::vector<ChannelCase> cases;
  for (auto& channel_case : channelCases()) {
    if (channel_case.name.starts_with(options.only)) cases.push_back(channel_case);
  }
  std::cout << "generating " << options.tags << " tags of the demo stream (and of the pulse "
            << "stream)..." << std::flush;
  const Stream stream = makeBenchStream(options.tags);
  const Stream pulses = makePulseStream(options.tags);
  std::cout << " done\n";
  // Untimed: the first pass over freshly generated memory runs slow.
  capacityOnce(stream, options, nullptr);
  capacityOnce(pulses, options, nullptr);

  std::cout << std::fixed << "\n"
            << options.tags << " tags, block " << options.block_size << " tags, medians of "
            << options.runs << " runs; capacity = tags / busy time of the virtual channel's "
            << "node (one core, the graph on one thread); each run follows a scan of the same "
               "stream, ratio = median of capacity / that scan's capacity; the channels take "
               "turns, run by run\n\n"
            << std::left << std::setw(32) << "virtual channel" << std::right << std::setw(10)
            << "MTags/s" << std::setw(8) << "ratio" << std::setw(10) << "scan"
            << "  setup\n";
  // Each run of a channel follows a scan of the same stream, and the ratio is taken within
  // that pair: the load of this shared machine drifts over seconds, and a scan measured
  // minutes earlier would carry the drift into the ratio. The channels take turns, run by run,
  // so that a disturbance of some seconds spoils one run of several channels, which the median
  // discards, rather than every run of one channel.
  std::vector<PairedRuns> runs(cases.size());
  for (int run = 0; run < options.runs; ++run) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Stream& input = cases[i].with_falling_edges ? pulses : stream;
      const double scan = capacityOnce(input, options, nullptr);
      runs[i].add(capacityOnce(input, options, cases[i].make), scan);
    }
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::cout << std::left << std::setw(32) << cases[i].name << std::right << std::setw(10)
              << std::setprecision(1) << median(runs[i].rates) << std::setw(8)
              << std::setprecision(2) << median(runs[i].ratios) << std::setw(10)
              << std::setprecision(1) << median(runs[i].scans) << "  " << cases[i].setup << "\n";
  }
  if (options.only.empty()) {
    const double one = composedGraphWall(stream, options, 1);
    const double many = composedGraphWall(stream, options, options.threads);
    std::cout << std::setprecision(1)
              << "\n3 virtual channels + 4 measurements (herald delay, pair coincidence, gate; "
                 "Countrate, Counter, 2 Correlations): "
              << one << " MTags/s wall on 1 thread, " << many << " MTags/s on " << options.threads
              << " threads (x" << std::setprecision(2) << many / one << ")\n";
  }
  return 0;
}

}  // namespace tagflow::bench
