// Wiring checks of the graph API: virtual channel numbers come from above the source's
// channels and are queried from the node; a channel nobody produces and a cycle are refused by
// validate() and run(), naming the node and the channel; names are unique; a node belongs to
// one graph; virtual channels cannot be added to a running graph.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>

#include "channel_streams.hpp"
#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/gated_channel.hpp"
#include "tagflow/core/error.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;
using Catch::Contains;

namespace {

// A scripted source that knows which physical channels its stream can hold.
class ListedSource : public ScriptedSource {
 public:
  ListedSource(std::vector<DrainedBlock> blocks, std::vector<channel_t> channels)
      : ScriptedSource(std::move(blocks)), channels_(std::move(channels)) {}
  std::vector<channel_t> channels() const override { return channels_; }

 private:
  std::vector<channel_t> channels_;
};

std::vector<DrainedBlock> smallStream() {
  return cutEvery(randomStream(81, StreamShape{.time_tags = 200}), 16);
}

}  // namespace

TEST_CASE("Virtual channels get consecutive numbers above every channel of the source",
          "[channels][graph][wiring]") {
  SECTION("a source that does not list its channels: from 1000 up") {
    ScriptedSource source(smallStream());
    MeasurementGraph graph(source);
    CHECK(graph.nextVirtualChannel() == MeasurementGraph::kFirstVirtualChannel);
    auto& delayed = graph.emplace<DelayedChannel>("delayed", 1, 10);
    auto& groups = graph.emplace<Coincidences>(
        "groups", std::vector<std::vector<channel_t>>{{1, 2}, {2, 3}, {3, 4}}, 100);
    auto& combined = graph.emplace<Combiner>(
        "combined", std::vector<channel_t>{delayed.getChannel(), groups.getChannels()[2]});
    CHECK(delayed.getChannels() == std::vector<channel_t>{1000});
    CHECK(groups.getChannels() == std::vector<channel_t>{1001, 1002, 1003});
    CHECK(combined.getChannel() == 1004);
    CHECK(graph.nextVirtualChannel() == 1005);
    CHECK_NOTHROW(graph.validate());
  }
  SECTION("a source whose channels reach above 1000") {
    ListedSource source(smallStream(), {1, 2, 3, 4, 1500});
    MeasurementGraph graph(source);
    CHECK(graph.nextVirtualChannel() == 1501);
    CHECK(graph.emplace<DelayedChannel>("delayed", 1500, 10).getChannel() == 1501);
  }
}

TEST_CASE("A channel that nothing produces is named with the node that reads it",
          "[channels][graph][wiring]") {
  SECTION("a measurement reading an unallocated virtual channel") {
    ScriptedSource source(smallStream());
    MeasurementGraph graph(source);
    graph.emplace<DelayedChannel>("delayed", 1, 10);  // 1000
    Recorder reader("reader", {1, 1001});
    graph.add(reader);
    CHECK_THROWS_AS(graph.validate(), InvalidArgument);
    CHECK_THROWS_WITH(graph.validate(), Contains("Recorder 'reader'") && Contains("channel 1001") &&
                                            Contains("1000"));
    CHECK_THROWS_AS(graph.run(), InvalidArgument);
    CHECK_THROWS_WITH(graph.run(), Contains("Recorder 'reader'") && Contains("1001"));
    CHECK(reader.tags().empty());
  }
  SECTION("a virtual channel reading an unallocated virtual channel") {
    ScriptedSource source(smallStream());
    MeasurementGraph graph(source);
    graph.emplace<GatedChannel>("gate", 1, 2, 1003);
    Recorder reader("reader", {1});
    graph.add(reader);
    CHECK_THROWS_AS(graph.validate(), InvalidArgument);
    CHECK_THROWS_WITH(graph.validate(),
                      Contains("GatedChannel 'gate'") && Contains("channel 1003"));
  }
  SECTION("a physical channel the source does not list is legal, like an unconnected input") {
    ListedSource source(smallStream(), {1, 2, 3, 4});
    MeasurementGraph graph(source);
    auto& delayed = graph.emplace<DelayedChannel>("delayed", 7, 10);
    Recorder reader("reader", {delayed.getChannel(), 7});
    graph.add(reader);
    CHECK_NOTHROW(graph.validate());
    graph.run();
    for (const Tag& tag : reader.tags()) {
      CHECK(tag.channel != 7);
      CHECK(tag.channel != delayed.getChannel());
    }
  }
}

TEST_CASE("A cycle of virtual channels is refused, naming its nodes", "[channels][graph][wiring]") {
  SECTION("two channels reading each other") {
    ScriptedSource source(smallStream());
    MeasurementGraph graph(source);
    const channel_t first = graph.nextVirtualChannel();
    auto& a = graph.emplace<DelayedChannel>("a", first + 1, 10);
    auto& b = graph.emplace<DelayedChannel>("b", first, 10);
    REQUIRE(a.getChannel() == first);
    REQUIRE(b.getChannel() == first + 1);
    Recorder reader("reader", {a.getChannel()});
    graph.add(reader);
    CHECK_THROWS_AS(graph.validate(), InvalidArgument);
    CHECK_THROWS_WITH(graph.validate(), Contains("cycle") && Contains("DelayedChannel 'a'") &&
                                            Contains("DelayedChannel 'b'"));
    CHECK_THROWS_AS(graph.run(), InvalidArgument);
    CHECK_THROWS_WITH(graph.run(), Contains("cycle"));
  }
  SECTION("a channel reading itself") {
    ScriptedSource source(smallStream());
    MeasurementGraph graph(source);
    graph.emplace<Combiner>("loop", std::vector<channel_t>{1, graph.nextVirtualChannel()});
    Recorder reader("reader", {1});
    graph.add(reader);
    CHECK_THROWS_AS(graph.validate(), InvalidArgument);
    CHECK_THROWS_WITH(graph.validate(), Contains("cycle") && Contains("Combiner 'loop'"));
  }
  SECTION("three channels in a ring, with a measurement outside it") {
    ScriptedSource source(smallStream());
    MeasurementGraph graph(source);
    const channel_t first = graph.nextVirtualChannel();
    graph.emplace<DelayedChannel>("x", first + 2, 10);
    graph.emplace<GatedChannel>("y", first, 1, 2);
    graph.emplace<Coincidence>("z", std::vector<channel_t>{first + 1, 3}, 100);
    Recorder reader("reader", {4});
    graph.add(reader);
    CHECK_THROWS_AS(graph.validate(), InvalidArgument);
    CHECK_THROWS_WITH(graph.validate(),
                      Contains("cycle") && Contains("'x'") && Contains("'y'") && Contains("'z'"));
  }
}

TEST_CASE("Node names are unique and a node belongs to one graph", "[channels][graph][wiring]") {
  ScriptedSource source(smallStream());
  MeasurementGraph graph(source);
  DelayedChannel delayed("delayed", 1, 10);
  graph.add(delayed);
  CHECK_THROWS_AS(graph.add(delayed), InvalidArgument);
  CHECK_THROWS_WITH(graph.add(delayed), Contains("'delayed'"));
  CHECK_THROWS_AS(graph.emplace<DelayedChannel>("delayed", 2, 10), InvalidArgument);
  CHECK_THROWS_WITH(graph.emplace<DelayedChannel>("delayed", 2, 10),
                    Contains("duplicate") && Contains("'delayed'"));

  ScriptedSource other_source(smallStream());
  MeasurementGraph other(other_source);
  other.emplace<Combiner>("first", std::vector<channel_t>{1});  // takes 1000
  CHECK_THROWS_AS(other.add(delayed), InvalidArgument);
  CHECK_THROWS_WITH(other.add(delayed), Contains("'delayed'") && Contains("1000"));
}

TEST_CASE("Virtual channels cannot be added while the graph runs", "[channels][graph][wiring]") {
  ScriptedSource inner(smallStream());
  GatedSource source(inner, 2);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  auto& delayed = graph.emplace<DelayedChannel>("delayed", 1, 10);
  auto& gate = graph.emplace<GatedChannel>("gate", 2, 3, 4);
  Recorder reader("reader", {delayed.getChannel()});
  Recorder gated_reader("gated reader", {gate.getChannel()});
  graph.add(reader);
  graph.add(gated_reader);
  auto run = graph.runAsync();
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (reader.captureStarts().empty()) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(1ms);
  }
  CHECK_THROWS_AS(graph.emplace<Combiner>("late", std::vector<channel_t>{1}), InvalidArgument);
  CHECK_THROWS_WITH(graph.emplace<Combiner>("late", std::vector<channel_t>{1}),
                    Contains("'late'") && Contains("runs"));
  // Its branches are fixed while it runs: a reader of both is refused, naming it.
  Recorder both("both", {delayed.getChannel(), gate.getChannel()});
  CHECK_THROWS_AS(graph.add(both), InvalidArgument);
  CHECK_THROWS_WITH(graph.add(both), Contains("Recorder 'both'") && Contains("branches"));
  source.allowAll();
  CHECK_NOTHROW(run.get());
}

TEST_CASE(
    "A source tag on a virtual channel's number stops the run; first_virtual_channel "
    "makes room",
    "[channels][graph][wiring]") {
  // A source that lists no channels (a raw or tag file) may carry channel 1000, where the
  // virtual channels begin: its tags would be mixed into the delayed channel's.
  const StreamShape shape{
      .time_tags = 400, .channels = {1, 1000}, .overflow_probability = 0, .error_probability = 0};
  const TestStream stream = randomStream(83, shape);
  std::size_t on_1 = 0, on_1000 = 0;
  for (const Tag& tag : stream.tags) {
    on_1 += tag.channel == 1;
    on_1000 += tag.channel == 1000;
  }
  REQUIRE(on_1000 > 0);
  SECTION("numbered from 1000: refused, naming the channel and the remedy") {
    ScriptedSource source(cutEvery(stream, 16));
    MeasurementGraph graph(source);
    auto& delayed = graph.emplace<DelayedChannel>("delayed", 1, 10);
    REQUIRE(delayed.getChannel() == 1000);
    Recorder reader("reader", {1, delayed.getChannel()});
    graph.add(reader);
    CHECK_THROWS_AS(graph.run(), InvalidArgument);
    CHECK_THROWS_WITH(graph.run(), Contains("channel 1000") && Contains("first_virtual_channel"));
  }
  SECTION("numbered from 2000: the source's channel 1000 is read as itself") {
    ScriptedSource source(cutEvery(stream, 16));
    MeasurementGraph graph(source, GraphOptions{.first_virtual_channel = 2000});
    auto& delayed = graph.emplace<DelayedChannel>("delayed", 1, 10);
    REQUIRE(delayed.getChannel() == 2000);
    Recorder reader("reader", {1, 1000, delayed.getChannel()});
    graph.add(reader);
    graph.run();
    std::size_t seen_1000 = 0, seen_delayed = 0;
    for (const Tag& tag : reader.tags()) {
      seen_1000 += tag.channel == 1000;
      seen_delayed += tag.channel == 2000;
    }
    CHECK(seen_1000 == on_1000);
    CHECK(seen_delayed == on_1);
  }
  SECTION("a source channel above every virtual channel's number collides with none") {
    ScriptedSource source(cutEvery(stream, 16));
    MeasurementGraph graph(source, GraphOptions{.first_virtual_channel = 900});
    REQUIRE(graph.emplace<DelayedChannel>("delayed", 1, 10).getChannel() == 900);
    Recorder reader("reader", {1, 900});
    graph.add(reader);
    CHECK_NOTHROW(graph.run());
  }
  SECTION("a negative first number is refused") {
    ScriptedSource source(cutEvery(stream, 16));
    CHECK_THROWS_WITH(MeasurementGraph(source, GraphOptions{.first_virtual_channel = -5}),
                      Contains("first_virtual_channel -5") && Contains("valid"));
  }
}
