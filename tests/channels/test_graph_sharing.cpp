// How the graph runs virtual channels: each channel's output is computed once per block and
// shared by all its readers; measurements read physical and virtual channels alike; two
// independent channels form branches that run at the same time, and a node reading both
// branches still sees exact streams.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <thread>

#include "reference_check.hpp"
#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/delayed_channel.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;

namespace {

const NodeProfile& nodeNamed(const Profile& profile, const std::string& name) {
  const NodeProfile* found = nullptr;
  for (const NodeProfile& node : profile.nodes) {
    if (node.name == name) {
      REQUIRE(found == nullptr);
      found = &node;
    }
  }
  REQUIRE(found != nullptr);
  return *found;
}

// A DelayedChannel that takes a millisecond per block, so that two of them on independent
// branches are visibly busy at the same time. It declines the one-pass path, so that every
// block goes through emitOwed().
class SlowDelayedChannel : public DelayedChannel {
 public:
  using DelayedChannel::DelayedChannel;

 protected:
  std::size_t transcribeRoom(const TagBlock& /*block*/) const override { return 0; }
  void emitOwed(timestamp_t until, std::vector<Tag>& emitted) override {
    std::this_thread::sleep_for(1ms);
    DelayedChannel::emitOwed(until, emitted);
  }
};

std::size_t overlappingSpans(const NodeProfile& a, const NodeProfile& b) {
  std::size_t overlaps = 0;
  for (const TraceSpan& x : a.trace) {
    for (const TraceSpan& y : b.trace) {
      const bool overlap =
          x.begin_us < y.begin_us + y.duration_us && y.begin_us < x.begin_us + x.duration_us;
      overlaps += overlap ? 1 : 0;
    }
  }
  return overlaps;
}

std::vector<Tag> onChannel(const std::vector<Tag>& tags, channel_t channel) {
  std::vector<Tag> out;
  for (const Tag& tag : tags) {
    if (tag.channel == channel && tag.type != TagType::OverflowBegin &&
        tag.type != TagType::OverflowEnd && tag.type != TagType::Error) {
      out.push_back(tag);
    }
  }
  return canonicalOutput(std::move(out));
}

std::vector<Tag> withoutChannels(const std::vector<Tag>& tags, std::vector<channel_t> channels) {
  std::vector<Tag> out;
  for (const Tag& tag : tags) {
    if (!isOutput(tag, channels)) out.push_back(tag);
  }
  return out;
}

}  // namespace

TEST_CASE("A virtual channel's output is computed once per block for all its readers",
          "[channels][graph][sharing]") {
  const TestStream stream = randomStream(71);
  const auto blocks = cutEvery(stream, 7);
  ScriptedSource source(blocks);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  auto& delayed = graph.emplace<DelayedChannel>("delayed", 1, 2'000);
  const channel_t output = delayed.getChannel();
  Recorder first("first", {output});
  Recorder second("second", {output, 2});
  Recorder third("third", {3, output});
  Recorder physical("physical", {1, 2});
  for (Recorder* recorder : {&first, &second, &third, &physical}) {
    recorder->checkGeneratedAfterInput({output});
    graph.add(*recorder);
  }
  const Profile profile = graph.run();

  REQUIRE(profile.blocks == blocks.size());
  const NodeProfile& node = nodeNamed(profile, "delayed");
  CHECK(node.kind == "DelayedChannel");
  CHECK(node.blocks == profile.blocks);
  CHECK(node.tags == profile.tags);

  const auto expected = canonicalOutput(
      realize(delayedReference(stream.tags, 1, 2'000, output), stream.tags, blocks));
  REQUIRE_FALSE(expected.empty());
  for (Recorder* recorder : {&first, &second, &third}) {
    INFO(recorder->name());
    const Recorded recorded{{output}, recorder->tags(), {}, recorder->orderError()};
    CHECK(firstDifference(outputsOf(recorded), expected) == "");
    CHECK(firstDifference(passedThrough(recorded), stream.tags) == "");
    CHECK(recorded.order_error == "");
  }
  // A reader of physical channels only reads the source's stream.
  CHECK(firstDifference(physical.tags(), stream.tags) == "");
}

TEST_CASE("Independent virtual channels run as parallel branches, and a node reading both works",
          "[channels][graph][sharing]") {
  const TestStream stream = randomStream(72, StreamShape{.time_tags = 800});
  const auto blocks = cutEvery(stream, 20);
  const auto expected_a =
      canonicalOutput(realize(delayedReference(stream.tags, 1, 100, 1000), stream.tags, blocks));
  const auto expected_b =
      canonicalOutput(realize(delayedReference(stream.tags, 2, 300, 1001), stream.tags, blocks));

  SECTION("two branches") {
    // The branches must be able to run at the same time; on a machine whose cores are all
    // taken, one run may still get one thread at a time, so up to three runs are tried for an
    // overlap. The output is checked on every run.
    std::size_t overlaps = 0;
    for (int attempt = 0; attempt < 3 && overlaps == 0; ++attempt) {
      ScriptedSource source(blocks);
      MeasurementGraph graph(source, GraphOptions{.threads = 2, .max_trace_spans = 4096});
      auto& a = graph.emplace<SlowDelayedChannel>("a", 1, 100);
      auto& b = graph.emplace<SlowDelayedChannel>("b", 2, 300);
      REQUIRE(a.getChannel() == 1000);
      REQUIRE(b.getChannel() == 1001);
      Recorder reads_a("reads a", {1000});
      Recorder reads_b("reads b", {1001});
      graph.add(reads_a);
      graph.add(reads_b);
      const Profile profile = graph.run();
      overlaps = overlappingSpans(nodeNamed(profile, "a"), nodeNamed(profile, "b"));
      // Each reader sees its branch only.
      CHECK(onChannel(reads_a.tags(), 1001).empty());
      CHECK(onChannel(reads_b.tags(), 1000).empty());
      CHECK(firstDifference(onChannel(reads_a.tags(), 1000), expected_a) == "");
      CHECK(firstDifference(onChannel(reads_b.tags(), 1001), expected_b) == "");
      CHECK(firstDifference(withoutChannels(reads_a.tags(), {1000}), stream.tags) == "");
      CHECK(firstDifference(withoutChannels(reads_b.tags(), {1001}), stream.tags) == "");
    }
    CHECK(overlaps > 0);
  }

  SECTION("a coincidence of both branches") {
    ScriptedSource source(blocks);
    MeasurementGraph graph(source, GraphOptions{.threads = 2});
    graph.emplace<DelayedChannel>("a", 1, 100);
    graph.emplace<DelayedChannel>("b", 2, 300);
    auto& both = graph.emplace<Coincidence>("both", std::vector<channel_t>{1000, 1001}, 500);
    Recorder reads_a("reads a", {1000});
    Recorder reads_b("reads b", {1001});
    Recorder reads_both("reads both", {both.getChannel()});
    for (Recorder* recorder : {&reads_a, &reads_b, &reads_both}) graph.add(*recorder);
    graph.run();
    CHECK(firstDifference(onChannel(reads_a.tags(), 1000), expected_a) == "");
    CHECK(firstDifference(onChannel(reads_b.tags(), 1001), expected_b) == "");
    // The coincidence node read the source's tags and both delayed copies, exactly.
    const std::vector<Tag> input = withoutChannels(reads_both.tags(), {both.getChannel()});
    CHECK(firstDifference(withoutChannels(input, {1000, 1001}), stream.tags) == "");
    CHECK(firstDifference(onChannel(input, 1000), expected_a) == "");
    CHECK(firstDifference(onChannel(input, 1001), expected_b) == "");
    const auto expected = canonicalOutput(
        realize(coincidencesReference(input, {{1000, 1001}}, 500, CoincidenceTimestamp::Last,
                                      both.getChannel()),
                input, blocks));
    CHECK(expected.size() > 10);
    CHECK(firstDifference(onChannel(reads_both.tags(), both.getChannel()), expected) == "");
  }
}
