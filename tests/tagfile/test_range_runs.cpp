// A graph over a time range of a recording: three graphs, each running its range of an
// indexed tag file (seeking to the range less the margins), give partial states that merge
// in order into exactly the results of one graph over the whole recording, also through
// virtual channels whose output depends on a bounded stretch of the past (they start that
// much earlier); a graph with a measurement that cannot split, or a virtual channel whose
// state depends on the whole past, refuses a range.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>

#include "support/drain.hpp"
#include "support/synthetic.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/constant_fraction_discriminator.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/event_generator.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"
#include "tagflow/channels/gated_channel.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;

namespace {

std::vector<std::unique_ptr<Measurement>> measurementsOfOneGraph() {
  std::vector<std::unique_ptr<Measurement>> all;
  all.push_back(std::make_unique<Countrate>("rate", std::vector<channel_t>{1, 2, 3}));
  all.push_back(std::make_unique<Correlation>("g2", 3, 1, 1000, 2000));
  all.push_back(std::make_unique<HistogramLogBins>("hlb", 3, 1, -10.0, -6.0, 100));
  return all;
}

std::string recordSynthetic(const test::TempDir& dir) {
  SyntheticConfig config = test::mixedConfig(30'000'000'000, 4096, 1.0, 4);
  config.overflows = {{9'000'000'000, 9'200'000'000}};
  SyntheticSource source(config);
  MeasurementGraph graph(source);
  const std::string path = dir.file("rec.tags");
  FileWriter writer("writer", path, {1, 2, 3, -1}, 300'000);  // several parts
  graph.add(writer);
  graph.run();
  return path;
}

// The nodes of one graph: virtual channels first, then the measurements reading them.
struct Nodes {
  std::vector<std::unique_ptr<VirtualChannel>> channels;
  std::vector<std::unique_ptr<Measurement>> measurements;
};
using NodesOfOneGraph = std::function<Nodes(MeasurementGraph&)>;

Nodes plainNodes(MeasurementGraph& graph) {
  Nodes nodes{{}, measurementsOfOneGraph()};
  for (auto& measurement : nodes.measurements) graph.add(*measurement);
  return nodes;
}

// Each virtual channel kind with a bounded look-back (one reading another's output), in a
// graph of its own with a Countrate, which counts from the range's start on: a channel started
// too late would miss output there. The look-backs are longer than a record of the file (about
// 2 ms), where the seek lands, so that a channel started too late would begin too late.
NodesOfOneGraph channelNodes(int setup) {
  return [setup](MeasurementGraph& graph) {
    Nodes nodes;
    const auto add = [&](std::unique_ptr<VirtualChannel> channel) {
      graph.add(*channel);
      const channel_t output = channel->getChannel();
      nodes.channels.push_back(std::move(channel));
      return output;
    };
    const auto measure = [&](std::unique_ptr<Measurement> measurement) {
      graph.add(*measurement);
      nodes.measurements.push_back(std::move(measurement));
    };
    std::vector<channel_t> outputs;
    if (setup == 0) {
      outputs.push_back(add(std::make_unique<DelayedChannel>("delayed", 1, 6'000'000'000)));
      measure(std::make_unique<Correlation>("g2", 3, outputs.back(), 1000, 2000));
    } else if (setup == 1) {
      const channel_t delayed = add(std::make_unique<DelayedChannel>("delayed", 1, 5'000'000'000));
      outputs.push_back(add(std::make_unique<Coincidence>(
          "coincidence", std::vector<channel_t>{delayed, 3}, 45'000)));
      outputs.push_back(
          add(std::make_unique<Combiner>("combined", std::vector<channel_t>{2, outputs.back()})));
    } else if (setup == 2) {
      outputs.push_back(add(std::make_unique<ConstantFractionDiscriminator>(
          "cfd", std::vector<channel_t>{1}, 9'000'000'000)));
    } else {
      outputs.push_back(add(std::make_unique<EventGenerator>(
          "pattern", 2, std::vector<timestamp_t>{0, 150, 7'000'000'000})));
      measure(std::make_unique<HistogramLogBins>("hlb", outputs.back(), 1, -10.0, -5.0, 100));
    }
    measure(std::make_unique<Countrate>("rates", outputs));
    return nodes;
  };
}

}  // namespace

TEST_CASE("Range runs of a recording merge into the results of one run", "[graph][tagfile]") {
  const int setup = GENERATE(-1, 0, 1, 2, 3);
  INFO((setup < 0 ? "physical channels" : "virtual channels, setup " + std::to_string(setup)));
  const NodesOfOneGraph nodesOfOneGraph = setup < 0 ? plainNodes : channelNodes(setup);
  test::TempDir dir;
  const std::string path = recordSynthetic(dir);

  Nodes whole;
  {
    FileReader source(path);
    MeasurementGraph graph(source);
    whole = nodesOfOneGraph(graph);
    graph.run();
  }
  // Every channel's output reaches a measurement.
  for (const auto& measurement : whole.measurements) {
    if (const auto* rates = dynamic_cast<const Countrate*>(measurement.get())) {
      for (const double rate : rates->getData()) CHECK(rate > 0);
    }
  }

  FileReader probe(path);
  const std::optional<StreamSpan> span = probe.timeSpan();
  REQUIRE(span.has_value());
  const timestamp_t length = span->end - span->begin;
  const std::vector<timestamp_t> bounds{span->begin, span->begin + length / 3 + 777,
                                        span->begin + 2 * length / 3, span->end};
  std::vector<Nodes> parts;
  for (std::size_t r = 0; r + 1 < bounds.size(); ++r) {
    FileReader source(path);
    MeasurementGraph graph(source);
    parts.push_back(nodesOfOneGraph(graph));
    const Profile profile = graph.runRange(bounds[r], bounds[r + 1]);
    // Seeking: each range reads little more than its share and its channels' look-back and
    // look-ahead.
    timestamp_t look_around = 0;
    for (const auto& channel : parts.back().channels) {
      look_around += *channel->lookBack() + channel->lookAhead();
    }
    CHECK(profile.stream_duration_ps < length / 3 + look_around + length / 20);
    if (r == 0) continue;
    for (std::size_t m = 0; m < whole.measurements.size(); ++m) {
      parts.front().measurements[m]->mergePartialState(
          parts.back().measurements[m]->getPartialState());
    }
  }
  for (std::size_t m = 0; m < whole.measurements.size(); ++m) {
    const ResultSet expected = whole.measurements[m]->getResults();
    const ResultSet actual = parts.front().measurements[m]->getResults();
    INFO(expected.name);
    REQUIRE(expected.arrays.size() == actual.arrays.size());
    for (std::size_t a = 0; a < expected.arrays.size(); ++a) {
      INFO(expected.arrays[a].name);
      CHECK(expected.arrays[a].data == actual.arrays[a].data);
    }
    CHECK(expected.facts.getInt("capture_duration_ps") ==
          actual.facts.getInt("capture_duration_ps"));
    CHECK(expected.facts.getInt("overflow_count") == actual.facts.getInt("overflow_count"));
  }
}

TEST_CASE("A graph with a measurement that cannot split refuses a time range", "[graph][tagfile]") {
  test::TempDir dir;
  SyntheticSource source(test::mixedConfig(1'000'000'000, 4096));
  MeasurementGraph graph(source);
  FileWriter writer("writer", dir.file("x.tags"), {1, 2});
  graph.add(writer);
  CHECK_THROWS_WITH(graph.runRange(0, 1'000'000),
                    Catch::Matchers::Contains("FileWriter 'writer' cannot be split by time"));
  CHECK_THROWS_WITH(graph.runRange(10, 10), Catch::Matchers::Contains("[10, 10) ps is empty"));
}

TEST_CASE(
    "A graph through a virtual channel whose state depends on the whole past refuses a "
    "time range",
    "[graph][tagfile]") {
  const auto refuses = [](std::unique_ptr<VirtualChannel> channel, const std::string& label) {
    SyntheticSource source(test::mixedConfig(1'000'000'000, 4096));
    MeasurementGraph graph(source);
    graph.add(*channel);
    Countrate rate("rate", {channel->getChannel()});
    graph.add(rate);
    CHECK_THROWS_WITH(graph.runRange(0, 1'000'000),
                      Catch::Matchers::Contains(label + ": a time range cannot be run through it"));
  };
  refuses(std::make_unique<GatedChannel>("gate", 1, 2, 3), "GatedChannel 'gate'");
  refuses(std::make_unique<FrequencyMultiplier>("times4", 2, 4), "FrequencyMultiplier 'times4'");
  refuses(std::make_unique<EventGenerator>("every2nd", 2, std::vector<timestamp_t>{0, 10}, 2),
          "EventGenerator 'every2nd'");
}
