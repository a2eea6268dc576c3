// Combiner against its brute-force reference on random streams; its per-input counts; missed
// events of an input passed on with their count, inside their overflow interval.
#include <catch2/catch.hpp>

#include <memory>

#include "reference_check.hpp"
#include "tagflow/channels/combiner.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

ChannelUnderTest combiner(std::vector<channel_t> channels) {
  std::string label = "Combiner(";
  for (channel_t channel : channels) label += std::to_string(channel) + " ";
  return {label + ")",
          [=](const std::string& name) { return std::make_unique<Combiner>(name, channels); },
          [=](const std::vector<Tag>& stream, const std::vector<channel_t>& outputs) {
            return combinerReference(stream, channels, outputs.at(0));
          }};
}

}  // namespace

TEST_CASE("Combiner matches its brute-force reference", "[channels][combiner]") {
  for (std::uint64_t seed : {21, 22, 23}) {
    INFO("seed " << seed);
    const auto totals = checkAgainstReferences(
        randomStream(seed),
        {combiner({1, 2}), combiner({3}), combiner({4, 3, 2, 1}), combiner({2, 77})});
    CHECK(totals.time_tags > 3000);
    CHECK(totals.missed > 0);
  }
}

TEST_CASE("Combiner counts the tags each input contributed", "[channels][combiner]") {
  const TestStream stream = randomStream(24);
  ScriptedSource source(cutEvery(stream, 7));
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  auto& combined = graph.emplace<Combiner>("or", std::vector<channel_t>{3, 1, 9});
  Recorder recorder("recorder", {combined.getChannel()});
  graph.add(recorder);
  graph.run();
  std::vector<std::uint64_t> expected(3, 0);
  for (const Tag& tag : stream.tags) {
    if (tag.type != TagType::TimeTag) continue;
    if (tag.channel == 3) ++expected[0];
    if (tag.channel == 1) ++expected[1];
  }
  CHECK(combined.getChannelCounts() == expected);
  combined.clearChannelCounts();
  CHECK(combined.getChannelCounts() == std::vector<std::uint64_t>(3, 0));
}

TEST_CASE("Combiner: missed events passed on stay inside their overflow interval",
          "[channels][combiner][overflow]") {
  const TestStream stream{
      {Tag{TagType::OverflowBegin, 0, 0, 0, 1'000}, Tag{TagType::MissedEvents, 0, 6, 1, 1'500},
       Tag{TagType::MissedEvents, 0, 2, 2, 2'000}, Tag{TagType::MissedEvents, 0, 5, 3, 2'000},
       Tag{TagType::OverflowEnd, 0, 0, 0, 2'000}},
      0,
      5'000};
  const Recorded recorded = recordOne(oneBlock(stream), [](const std::string& name) {
    return std::make_unique<Combiner>(name, std::vector<channel_t>{1, 2});
  });
  const std::vector<Tag> expected{Tag{TagType::MissedEvents, 0, 6, 1000, 1'500},
                                  Tag{TagType::MissedEvents, 0, 2, 1000, 2'000}};
  CHECK(outputsOf(recorded) == expected);
  std::string outside;
  for (const Tag& tag : recorded.missed_outside_overflow) outside += describeTag(tag) + " ";
  CHECK(outside == "");
}
