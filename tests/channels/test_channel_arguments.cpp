// Bad parameters of every virtual channel: each is refused at construction with an
// InvalidArgument whose message names the node, the offending value and the valid range.
#include <catch2/catch.hpp>

#include <vector>

#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/constant_fraction_discriminator.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/event_generator.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"
#include "tagflow/channels/gated_channel.hpp"
#include "tagflow/core/error.hpp"

using namespace tagflow;
using Catch::Contains;

TEST_CASE("DelayedChannel refuses a negative delay and an unused input", "[channels][arguments]") {
  CHECK_THROWS_AS(DelayedChannel("late", 1, -1), InvalidArgument);
  CHECK_THROWS_WITH(DelayedChannel("late", 1, -1), Contains("DelayedChannel 'late'") &&
                                                       Contains("delay -1") &&
                                                       Contains("(valid: 0..4611686018427387904)"));
  CHECK_THROWS_AS(DelayedChannel("late", CHANNEL_UNUSED, 10), InvalidArgument);
  CHECK_THROWS_WITH(DelayedChannel("late", CHANNEL_UNUSED, 10),
                    Contains("'late'") && Contains("input_channel"));
  CHECK_NOTHROW(DelayedChannel("late", 1, 0));
}

TEST_CASE("GatedChannel refuses equal gate channels and unused channels", "[channels][arguments]") {
  CHECK_THROWS_AS(GatedChannel("window", 1, 3, 3), InvalidArgument);
  CHECK_THROWS_WITH(GatedChannel("window", 1, 3, 3),
                    Contains("GatedChannel 'window'") && Contains("gate_start_channel 3") &&
                        Contains("gate_stop_channel") && Contains("different"));
  CHECK_THROWS_AS(GatedChannel("window", 1, CHANNEL_UNUSED, 3), InvalidArgument);
  CHECK_THROWS_WITH(GatedChannel("window", 1, CHANNEL_UNUSED, 3),
                    Contains("'window'") && Contains("gate_start"));
  CHECK_THROWS_AS(GatedChannel("window", CHANNEL_UNUSED, 2, 3), InvalidArgument);
  CHECK_THROWS_WITH(GatedChannel("window", CHANNEL_UNUSED, 2, 3),
                    Contains("'window'") && Contains("input"));
  CHECK_NOTHROW(GatedChannel("window", 1, 1, 3));
}

TEST_CASE("Combiner refuses an empty or repeated channel list", "[channels][arguments]") {
  CHECK_THROWS_AS(Combiner("or", {}), InvalidArgument);
  CHECK_THROWS_WITH(Combiner("or", {}), Contains("Combiner 'or'") &&
                                            Contains("channels holds 0 value(s)") &&
                                            Contains("at least 1"));
  CHECK_THROWS_AS(Combiner("or", {1, 2, 1}), InvalidArgument);
  CHECK_THROWS_WITH(Combiner("or", {1, 2, 1}), Contains("'or'") && Contains("1"));
}

TEST_CASE("Coincidence refuses a window <= 0 and bad groups", "[channels][arguments]") {
  for (timestamp_t window : {0, -5}) {
    CHECK_THROWS_AS(Coincidence("pairs", {1, 2}, window), InvalidArgument);
    CHECK_THROWS_WITH(Coincidence("pairs", {1, 2}, window),
                      Contains("Coincidence 'pairs'") &&
                          Contains("coincidence_window " + std::to_string(window)) &&
                          Contains("(valid: 1..4611686018427387904)"));
    CHECK_THROWS_AS(Coincidences("many", {{1, 2}}, window), InvalidArgument);
    CHECK_THROWS_WITH(Coincidences("many", {{1, 2}}, window),
                      Contains("Coincidences 'many'") &&
                          Contains("coincidence_window " + std::to_string(window)));
  }
  CHECK_THROWS_AS(Coincidence("pairs", {1}), InvalidArgument);
  CHECK_THROWS_WITH(Coincidence("pairs", {1}), Contains("'pairs'") &&
                                                   Contains("channels holds 1 value(s)") &&
                                                   Contains("2..64"));
  CHECK_THROWS_AS(Coincidences("many", {}), InvalidArgument);
  CHECK_THROWS_WITH(Coincidences("many", {}),
                    Contains("'many'") && Contains("no groups") && Contains("one or more"));
  CHECK_THROWS_AS(Coincidences("many", {{1, 2}, {3}}), InvalidArgument);
  CHECK_THROWS_WITH(Coincidences("many", {{1, 2}, {3}}),
                    Contains("group_1 holds 1 value(s)") && Contains("2..64"));
  std::vector<channel_t> too_many;
  for (channel_t channel = 1; channel <= 65; ++channel) too_many.push_back(channel);
  CHECK_THROWS_AS(Coincidence("pairs", too_many), InvalidArgument);
  CHECK_THROWS_WITH(Coincidence("pairs", too_many),
                    Contains("channels holds 65 value(s)") && Contains("2..64"));
  too_many.pop_back();
  CHECK_NOTHROW(Coincidence("pairs", too_many));
  CHECK_THROWS_AS(coincidenceTimestampFrom("Median"), InvalidArgument);
  CHECK_THROWS_WITH(coincidenceTimestampFrom("Median"),
                    Contains("Median") && Contains("Last") && Contains("ListedFirst"));
  CHECK(coincidenceTimestampFrom("Average") == CoincidenceTimestamp::Average);
}

TEST_CASE("A channel listed twice in a coincidence group or a discriminator is named",
          "[channels][arguments]") {
  CHECK_THROWS_AS(Coincidence("pairs", {4, 7, 4}), InvalidArgument);
  CHECK_THROWS_WITH(Coincidence("pairs", {4, 7, 4}),
                    Contains("Coincidence 'pairs': channels lists channel 4 twice"));
  CHECK_THROWS_WITH(Coincidences("groups", {{1, 2}, {3, 5, 3}}),
                    Contains("Coincidences 'groups': group 1 lists channel 3 twice"));
  CHECK_THROWS_WITH(Coincidence("pairs", {2, CHANNEL_UNUSED}),
                    Contains("channels[1] is CHANNEL_UNUSED (-134217728)"));
  CHECK_THROWS_AS(ConstantFractionDiscriminator("cfd", {3, 5, 3}, 100), InvalidArgument);
  CHECK_THROWS_WITH(ConstantFractionDiscriminator("cfd", {3, 5, 3}, 100),
                    Contains("'cfd'") && Contains("3"));
}

TEST_CASE("FrequencyMultiplier refuses a multiplier outside 1..1000000", "[channels][arguments]") {
  for (std::int64_t factor : {0, -3, 1'000'001}) {
    CHECK_THROWS_AS(FrequencyMultiplier("times", 1, factor), InvalidArgument);
    CHECK_THROWS_WITH(FrequencyMultiplier("times", 1, factor),
                      Contains("FrequencyMultiplier 'times'") &&
                          Contains("multiplier " + std::to_string(factor)) &&
                          Contains("1..1000000"));
  }
  CHECK_THROWS_AS(FrequencyMultiplier("times", CHANNEL_UNUSED, 2), InvalidArgument);
  CHECK_THROWS_WITH(FrequencyMultiplier("times", CHANNEL_UNUSED, 2), Contains("input_channel"));
  CHECK_NOTHROW(FrequencyMultiplier("times", 1, 1'000'000));
}

TEST_CASE("ConstantFractionDiscriminator refuses bad channels and a search window <= 0",
          "[channels][arguments]") {
  CHECK_THROWS_AS(ConstantFractionDiscriminator("cfd", {}, 100), InvalidArgument);
  CHECK_THROWS_WITH(
      ConstantFractionDiscriminator("cfd", {}, 100),
      Contains("ConstantFractionDiscriminator 'cfd'") && Contains("channels holds 0 value(s)"));
  for (channel_t channel : {0, -2}) {
    CHECK_THROWS_AS(ConstantFractionDiscriminator("cfd", {1, channel}, 100), InvalidArgument);
    CHECK_THROWS_WITH(ConstantFractionDiscriminator("cfd", {1, channel}, 100),
                      Contains("channels " + std::to_string(channel)) && Contains(">= 1"));
  }
  for (timestamp_t window : {0, -1}) {
    CHECK_THROWS_AS(ConstantFractionDiscriminator("cfd", {1}, window), InvalidArgument);
    CHECK_THROWS_WITH(ConstantFractionDiscriminator("cfd", {1}, window),
                      Contains("search_window " + std::to_string(window)) && Contains(">= 1"));
  }
}

TEST_CASE("EventGenerator refuses bad patterns, dividers and offsets", "[channels][arguments]") {
  const std::vector<timestamp_t> pattern{0, 100};
  CHECK_THROWS_AS(EventGenerator("gen", CHANNEL_UNUSED, pattern), InvalidArgument);
  CHECK_THROWS_WITH(EventGenerator("gen", CHANNEL_UNUSED, pattern),
                    Contains("EventGenerator 'gen'") && Contains("trigger_channel"));
  CHECK_THROWS_AS(EventGenerator("gen", 1, {}), InvalidArgument);
  CHECK_THROWS_WITH(EventGenerator("gen", 1, {}),
                    Contains("pattern holds 0 value(s)") && Contains("at least 1"));
  CHECK_THROWS_AS(EventGenerator("gen", 1, {10, -5}), InvalidArgument);
  CHECK_THROWS_WITH(EventGenerator("gen", 1, {10, -5}),
                    Contains("pattern -5 ps is invalid") && Contains(">= 0"));
  CHECK_THROWS_AS(EventGenerator("gen", 1, pattern, 0), InvalidArgument);
  CHECK_THROWS_WITH(EventGenerator("gen", 1, pattern, 0),
                    Contains("trigger_divider 0") && Contains(">= 1"));
  CHECK_THROWS_AS(EventGenerator("gen", 1, pattern, 3, 3), InvalidArgument);
  CHECK_THROWS_WITH(EventGenerator("gen", 1, pattern, 3, 3),
                    Contains("divider_offset 3") && Contains("0..2"));
  CHECK_THROWS_AS(EventGenerator("gen", 1, pattern, 3, -1), InvalidArgument);
  CHECK_THROWS_WITH(EventGenerator("gen", 1, pattern, 3, -1),
                    Contains("divider_offset -1") && Contains("0..2"));
  CHECK_NOTHROW(EventGenerator("gen", 1, pattern, 3, 2, 1));
}

TEST_CASE("A virtual channel needs a name and has no channel before it joins a graph",
          "[channels][arguments]") {
  CHECK_THROWS_AS(DelayedChannel("", 1, 10), InvalidArgument);
  const DelayedChannel late("late", 1, 10);
  CHECK_FALSE(late.hasChannels());
  CHECK_THROWS_AS(late.getChannel(), InvalidArgument);
  CHECK_THROWS_WITH(late.getChannel(), Contains("'late'") && Contains("add it to a graph"));
}
