// End to end on the loopback interface: a synthetic stream sent by UdpStreamSender and
// received by UdpStreamSource gives the same blocks' stream and the same Counter and
// Countrate results as the same source read directly, exactly, when nothing is lost.
#include <catch2/catch.hpp>

#include <algorithm>
#include <future>
#include <memory>

#include "support/drain.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "udp/udp_support.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// Four channels (a falling edge among them) and one overflow of the source itself.
SyntheticConfig linkConfig() {
  SyntheticConfig config = mixedConfig(200'000'000'000, 5000, 1.0, 21);
  config.overflows = {OverflowInterval{50'000'000'000, 51'000'000'000}};
  return config;
}

struct Results {
  std::vector<std::int64_t> counts;
  std::vector<std::uint64_t> totals;
  std::vector<std::int8_t> mask;
  std::vector<double> rates;
  timestamp_t stream_ps = 0;
};

Results measure(Source& source) {
  const std::vector<channel_t> channels{1, 2, 3, -1};
  MeasurementGraph graph(source);
  auto& counter = graph.emplace<Counter>("counter", channels, 1'000'000'000, 200);
  auto& rate = graph.emplace<Countrate>("rate", channels);
  const Profile profile = graph.run();
  return {counter.getData(), counter.getDataTotalCounts(), counter.getOverflowMask(),
          rate.getData(), profile.stream_duration_ps};
}

}  // namespace

TEST_CASE("A stream sent over the loopback arrives exactly as it was sent", "[udp][loopback]") {
  const int mtu = GENERATE(1500, 9000);
  INFO("MTU " << mtu);
  UdpStreamSource receiver(loopbackReceiver());
  UdpSenderConfig sender_config = loopbackSender(receiver.port());
  sender_config.mtu = mtu;
  UdpStreamSender sender(sender_config);
  auto sending = std::async(std::launch::async, [&] {
    SyntheticSource source(linkConfig());
    return sender.send(source);
  });
  const DrainedStream received = drain(receiver);
  const UdpSenderStats sent = sending.get();
  const DrainedStream direct = drainSynthetic(linkConfig());

  requireWellFormed(received);
  CHECK((received.tags == direct.tags));  // parenthesised: no printing of huge vectors
  CHECK(received.begin() == direct.begin());
  CHECK(received.end() == direct.end());
  const UdpReceiverStats stats = receiver.stats();
  CHECK(stats.datagrams_lost == 0);
  CHECK(stats.malformed() == 0);
  CHECK(stats.tags == direct.tags.size());
  CHECK(stats.events == sent.events_sent);
  // Two copies of the start dropped as such, two of the end not read.
  CHECK(stats.datagrams_accepted + 4 == sent.datagrams_sent);
  CHECK(stats.duplicates == 0);
  CHECK(stats.largest_datagram <= static_cast<std::uint64_t>(mtu - 28));
}

TEST_CASE("Measurements on the received stream equal those on the source read directly",
          "[udp][loopback][graph]") {
  UdpSourceConfig receiver_config = loopbackReceiver();
  receiver_config.receive_cpu = 0;  // pinning changes nothing in the data
  UdpStreamSource receiver(receiver_config);
  UdpStreamSender sender(loopbackSender(receiver.port()));
  auto sending = std::async(std::launch::async, [&] {
    SyntheticSource source(linkConfig());
    return sender.send(source);
  });
  const Results over_link = measure(receiver);
  sending.get();
  SyntheticSource direct_source(linkConfig());
  const Results direct = measure(direct_source);

  REQUIRE(receiver.stats().datagrams_lost == 0);
  CHECK(over_link.stream_ps == direct.stream_ps);
  CHECK(over_link.counts == direct.counts);
  CHECK(over_link.totals == direct.totals);
  CHECK(over_link.mask == direct.mask);
  CHECK(std::count(direct.mask.begin(), direct.mask.end(), 1) > 0);
  CHECK(sameBits(over_link.rates, direct.rates));
}

TEST_CASE("A run can end at a stream duration before the sender is done",
          "[udp][loopback][graph]") {
  UdpStreamSource receiver(loopbackReceiver());
  UdpStreamSender sender(loopbackSender(receiver.port()));
  auto sending = std::async(std::launch::async, [&] {
    SyntheticSource source(linkConfig());
    return sender.send(source);
  });
  MeasurementGraph graph(receiver);
  auto& counter = graph.emplace<Counter>("counter", std::vector<channel_t>{1}, 1'000'000'000, 10);
  const Profile profile = graph.run(20'000'000'000);
  CHECK(profile.stream_duration_ps == 20'000'000'000);
  CHECK(counter.getBinsCompleted() == 20);
  sending.get();
}

TEST_CASE("Stopping the graph ends a run whose receiver waits for datagrams",
          "[udp][loopback][graph]") {
  UdpStreamSource receiver(loopbackReceiver());  // nobody sends
  MeasurementGraph graph(receiver);
  auto& rate = graph.emplace<Countrate>("rate", std::vector<channel_t>{1});
  auto running = graph.runAsync();
  CHECK(running.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
  graph.requestStop();
  REQUIRE(running.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(running.get().tags == 0);
  CHECK(rate.getCountsTotal() == std::vector<std::int64_t>{0});
}

TEST_CASE("A sender that fails during the stream sends what it encoded and the end",
          "[udp][loopback]") {
  // 325 tags the wire carries, then one of channel 40, which it cannot: the sender fails, but
  // the receiver still gets the stream up to there, and its end.
  auto tags = std::make_shared<std::vector<Tag>>();
  for (int i = 0; i < 400; ++i) {
    tags->push_back(Tag{TagType::TimeTag, 0, 0, 1 + i % 3, 1000 + 1000 * timestamp_t{i}});
  }
  (*tags)[325].channel = 40;
  UdpStreamSource receiver(loopbackReceiver(nullptr, 0));  // ends only at the stream's end
  UdpStreamSender sender(loopbackSender(receiver.port()));
  auto sending = std::async(std::launch::async, [&] {
    MemorySource source(tags, 50, 0, 1'000'000);
    sender.send(source);
  });
  StopAfter watchdog(receiver, 5);
  const DrainedStream received = drain(receiver);
  CHECK_THROWS_AS(sending.get(), DataError);
  CHECK_FALSE(watchdog.fired());
  requireWellFormed(received);
  CHECK((received.tags == std::vector<Tag>(tags->begin(), tags->begin() + 325)));
  CHECK(received.begin() == 0);
  CHECK(received.end() == (*tags)[324].time + 1);
  CHECK(receiver.stats().datagrams_lost == 0);
}

TEST_CASE("A replay stopped inside an overflow interval ends inside it", "[udp][loopback]") {
  // The first datagram opens an overflow that a later one closes; the replay stops after the
  // first, and its end datagram must say that the stream is inside the overflow.
  std::vector<Tag> tags{Tag{TagType::OverflowBegin, 0, 0, 0, 10}};
  for (int i = 0; i < 300; ++i) {
    tags.push_back(Tag{TagType::TimeTag, 0, 0, 1, 100 + 10 * timestamp_t{i}});
  }
  tags.push_back(Tag{TagType::OverflowEnd, 0, 0, 0, 5000});
  tags.push_back(Tag{TagType::TimeTag, 0, 0, 2, 6000});
  const EncodedStream stream(tags, 0, 10'000, 576);
  REQUIRE(stream.datagrams() > 2);
  REQUIRE((stream.header(1).flags & wire::kFlagInOverflow) != 0);

  UdpStreamSource receiver(loopbackReceiver(nullptr, 0));  // ends only at the stream's end
  UdpSenderConfig config = loopbackSender(receiver.port());
  config.mtu = 576;
  config.batch = 1;
  UdpStreamSender sender(config);
  sender.requestStop();  // stops after the first datagram
  sender.replay(stream, 10);
  StopAfter watchdog(receiver, 5);
  const DrainedStream received = drain(receiver);
  CHECK_FALSE(watchdog.fired());
  requireWellFormed(received);
  const UdpReceiverStats stats = receiver.stats();
  CHECK(stats.malformed() == 0);
  CHECK(stats.datagrams_accepted == 3);  // the start, the first datagram of tags, the end
  CHECK(received.end() == 10'000);
  REQUIRE_FALSE(received.tags.empty());
  CHECK(received.tags.front().type == TagType::OverflowBegin);
}
