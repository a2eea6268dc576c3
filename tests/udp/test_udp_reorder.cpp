// Duplicated and reordered datagrams, sent raw in a chosen order: within the reorder window
// they are put back in order and the stream arrives unchanged; duplicates are dropped; a
// datagram that comes after the window gave up on it is counted late and its data stay lost.
#include <catch2/catch.hpp>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "udp/udp_support.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

struct Sent {
  std::vector<Tag> tags;
  MemorySink sink{wire::wordsPerDatagram(1500)};
};

Sent encoded() {
  Sent sent;
  sent.tags = randomTags(23, {1, 5, -2}, 0, 300'000'000, 3000);
  wire::Encoder encoder(wire::wordsPerDatagram(1500));
  encoder.begin(0, sent.sink);
  encoder.encode(sent.tags, sent.sink);
  encoder.finish(300'000'000, sent.sink);
  return sent;
}

// Sends everything before the receiver decodes anything: the order of arrival is the order
// given, whatever the timing.
DrainedStream receiveInOrder(const Sent& sent, const std::vector<std::size_t>& order,
                             UdpReceiverStats& stats, std::size_t window = 8) {
  UdpSourceConfig config = loopbackReceiver();
  config.reorder_window = window;
  UdpStreamSource receiver(config);
  RawSender sender(receiver.port());
  for (std::size_t i : order) sender.send(sent.sink.datagrams[i]);
  DrainedStream received = drain(receiver);
  stats = receiver.stats();
  return received;
}

}  // namespace

TEST_CASE("Reordered datagrams within the window and duplicates change nothing", "[udp][reorder]") {
  const Sent sent = encoded();
  const std::size_t n = sent.sink.datagrams.size();
  REQUIRE(n > 60);
  // 2 before 1; 10 after 11..18; a duplicate of 25 after 29; 45 early, after 39, and again
  // in its place.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 1 || i == 10) continue;
    order.push_back(i);
    if (i == 2) order.push_back(1);
    if (i == 18) order.push_back(10);
    if (i == 29) order.push_back(25);
    if (i == 39) order.push_back(45);
  }
  UdpReceiverStats stats;
  const DrainedStream received = receiveInOrder(sent, order, stats);
  requireWellFormed(received);
  CHECK((received.tags == sent.tags));
  CHECK(stats.datagrams_lost == 0);
  CHECK(stats.duplicates == 2);
  CHECK(stats.reordered == 7);  // arrived after a later one: 1, 10, 40..44
  CHECK(stats.late == 0);
  CHECK(stats.datagrams_accepted == n);
}

TEST_CASE("A datagram beyond the reorder window is declared lost, then counted late",
          "[udp][reorder]") {
  const Sent sent = encoded();
  const std::size_t n = sent.sink.datagrams.size();
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i) {
    if (i != 20) order.push_back(i);
    if (i == 40) order.push_back(20);  // 20 places late: the window of 8 gave up on it
  }
  UdpReceiverStats stats;
  const DrainedStream received = receiveInOrder(sent, order, stats);
  requireWellFormed(received);
  CHECK(stats.datagrams_lost == 1);
  CHECK(stats.gaps == 1);
  CHECK(stats.late == 1);
  CHECK(stats.events_lost == sent.sink.event_counts[20]);
  const std::vector<Tag> lost = decodeAll({sent.sink.datagrams[20]});
  std::vector<Tag> time_tags;
  for (const Tag& tag : received.tags) {
    if (tag.type == TagType::TimeTag) time_tags.push_back(tag);
  }
  CHECK(time_tags.size() == sent.tags.size() - lost.size());

  // Without a window every early datagram is a loss at once.
  std::vector<std::size_t> swapped;
  for (std::size_t i = 0; i < n; ++i) swapped.push_back(i);
  std::swap(swapped[5], swapped[6]);
  UdpReceiverStats strict;
  receiveInOrder(sent, swapped, strict, 0);
  CHECK(strict.datagrams_lost == 1);
  CHECK(strict.late == 1);
}
