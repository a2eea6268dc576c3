// End to end on the loopback interface: a synthetic stream sent by UdpStreamSender and
// received by UdpStreamSource gives the same blocks' stream and the same Counter and
// Countrate results as the same source read directly, exactly, when nothing is lost.
#include <catch2/catch.hpp>

#include <algorithm>
#include <future>

#include "support/drain.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/core/measurement_graph.hpp"
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
