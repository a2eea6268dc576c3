// Injected loss: the sender drops chosen datagrams. The receiver reports exactly those, each
// run of lost datagrams becomes one overflow interval from just after the last tag before
// it to the first tag after it, with the lost count as MissedEvents, and a Counter on the
// received stream flags exactly the bins those intervals touch. The first datagrams are loss
// like any other (the sender counts from 0); the start datagram, or else the first one of
// tags, keeps the stream's start, and losing the last data datagram keeps the stream's end.
// A lost end-of-stream datagram leaves the stream to the idle timeout. A stream received with
// losses is sent on unchanged, its loss marks included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <numeric>
#include <thread>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/reference.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/measurements/counter.hpp"
#include "udp/udp_support.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

constexpr int kMtu = 1500;
constexpr timestamp_t kEnd = 1'000'000'000;

std::shared_ptr<const std::vector<Tag>> lossStream() {
  return std::make_shared<const std::vector<Tag>>(randomTags(17, {1, 2, -3}, 0, kEnd, 20'000));
}

// The datagrams the sender makes of the stream (it fills every datagram: no timed flushes).
MemorySink packing(const std::vector<Tag>& tags) {
  MemorySink sink(wire::wordsPerDatagram(kMtu));
  wire::Encoder encoder(wire::wordsPerDatagram(kMtu));
  encoder.begin(0, sink);
  encoder.encode(tags, sink);
  encoder.finish(kEnd, sink);
  return sink;
}

DrainedStream sendAndReceive(const std::shared_ptr<const std::vector<Tag>>& tags,
                             std::vector<std::uint32_t> drop, UdpSenderStats& sent,
                             UdpReceiverStats& stats, std::vector<std::string>& notices,
                             double idle_s = 2.0, double rate = 20e6) {
  UdpStreamSource receiver(loopbackReceiver(&notices, idle_s));
  UdpSenderConfig config = loopbackSender(receiver.port());
  config.mtu = kMtu;
  config.drop = std::move(drop);
  config.rate = rate;  // by default well below what the loopback carries: no loss but the injected
  UdpStreamSender sender(config);
  auto sending = std::async(std::launch::async, [&] {
    MemorySource source(tags, 4096, 0, kEnd);
    return sender.send(source);
  });
  DrainedStream received = drain(receiver);
  sent = sending.get();
  stats = receiver.stats();
  return received;
}

struct Gap {
  timestamp_t begin = 0;
  timestamp_t end = 0;
  std::uint64_t missed = 0;
};

std::vector<Gap> gapsOf(const std::vector<Tag>& tags) {
  std::vector<Gap> gaps;
  for (const Tag& tag : tags) {
    if (tag.type == TagType::OverflowBegin) gaps.push_back(Gap{tag.time, tag.time, 0});
    if (tag.type == TagType::MissedEvents) {
      CHECK(tag.channel == 0);
      gaps.back().missed += tag.missed_events;
    }
    if (tag.type == TagType::OverflowEnd) gaps.back().end = tag.time;
  }
  return gaps;
}

}  // namespace

TEST_CASE("Dropped datagrams become overflow intervals with their lost counts",
          "[udp][loss][graph]") {
  const auto tags = lossStream();
  const MemorySink sink = packing(*tags);
  REQUIRE(sink.datagrams.size() > 250);
  const std::vector<std::uint32_t> drop{3, 4, 10, 200};

  UdpSenderStats sent;
  UdpReceiverStats stats;
  std::vector<std::string> notices;
  const DrainedStream received = sendAndReceive(tags, drop, sent, stats, notices);
  requireWellFormed(received);

  CHECK(sent.datagrams_dropped == 4);
  CHECK(stats.datagrams_lost == 4);
  CHECK(stats.gaps == 3);
  CHECK(stats.events_lost == sent.events_dropped);
  CHECK(stats.malformed() == 0);
  CHECK(received.begin() == 0);
  CHECK(received.end() == kEnd);

  // Where the gaps must be: after the last tag of the datagram before each run of drops, up
  // to the first tag of the datagram after it.
  const auto recordsOf = [&](std::size_t i) { return decodeAll({sink.datagrams[i]}); };
  const std::vector<std::pair<std::size_t, std::size_t>> runs{{3, 4}, {10, 10}, {200, 200}};
  const std::vector<Gap> gaps = gapsOf(received.tags);
  REQUIRE(gaps.size() == runs.size());
  std::vector<Interval> intervals;
  for (std::size_t g = 0; g < runs.size(); ++g) {
    const auto [first, last] = runs[g];
    INFO("gap " << g);
    CHECK(gaps[g].begin == recordsOf(first - 1).back().time + 1);
    CHECK(gaps[g].end == recordsOf(last + 1).front().time);
    std::uint64_t dropped_tags = 0;
    for (std::size_t i = first; i <= last; ++i) dropped_tags += recordsOf(i).size();
    CHECK(gaps[g].missed == dropped_tags);
    intervals.push_back(Interval{gaps[g].begin, gaps[g].end});
  }

  // Independently of the packing: the received time tags are the sent ones outside the
  // intervals, and each interval's count is what the sent stream held inside it.
  std::vector<Tag> expected;
  for (const Tag& tag : *tags) {
    const bool inside = std::any_of(intervals.begin(), intervals.end(), [&](const Interval& i) {
      return tag.time >= i.begin && tag.time < i.end;
    });
    if (!inside) expected.push_back(tag);
  }
  std::vector<Tag> received_time_tags;
  std::copy_if(received.tags.begin(), received.tags.end(), std::back_inserter(received_time_tags),
               [](const Tag& tag) { return tag.type == TagType::TimeTag; });
  CHECK((received_time_tags == expected));
  for (std::size_t g = 0; g < gaps.size(); ++g) {
    std::uint64_t inside = 0;
    for (channel_t channel : {1, 2, -3}) {
      inside += countTimeTags(*tags, channel, gaps[g].begin, gaps[g].end);
    }
    CHECK(gaps[g].missed == inside);
  }

  // A Counter on the received stream flags exactly the bins the intervals touch.
  const std::vector<channel_t> channels{1, 2, -3};
  const timestamp_t binwidth = 1'000'000;
  const std::size_t bins = static_cast<std::size_t>(kEnd / binwidth);
  MemorySource replay(std::make_shared<const std::vector<Tag>>(received.tags), 4096,
                      received.begin(), received.end());
  MeasurementGraph graph(replay);
  auto& counter = graph.emplace<Counter>("counter", channels, binwidth, bins);
  graph.run();
  const CounterReference reference =
      counterReference(received.tags, channels, 0, kEnd, binwidth, bins, intervals);
  CHECK(counter.getOverflowMask() == reference.mask(true));
  CHECK(counter.getData() == reference.data(true));
  CHECK(std::count(reference.overflow.begin(), reference.overflow.end(), true) >= 3);
}

TEST_CASE("A stream received with losses is sent on with its loss marks", "[udp][loss]") {
  const auto tags = lossStream();
  UdpSenderStats sent;
  UdpReceiverStats stats;
  std::vector<std::string> notices;
  const DrainedStream first_hop = sendAndReceive(tags, {3, 4, 10}, sent, stats, notices);
  REQUIRE(stats.datagrams_lost == 3);
  const auto missed_marks =
      std::count_if(first_hop.tags.begin(), first_hop.tags.end(), [](const Tag& tag) {
        return tag.type == TagType::MissedEvents && tag.channel == 0 && tag.missed_events > 0;
      });
  REQUIRE(missed_marks == 2);

  // The second hop loses nothing and hands on exactly what the first one received.
  const DrainedStream second_hop = sendAndReceive(
      std::make_shared<const std::vector<Tag>>(first_hop.tags), {}, sent, stats, notices);
  CHECK(stats.datagrams_lost == 0);
  CHECK(stats.malformed() == 0);
  CHECK((second_hop.tags == first_hop.tags));
  CHECK(second_hop.begin() == first_hop.begin());
  CHECK(second_hop.end() == first_hop.end());
}

TEST_CASE("A lost end-of-stream datagram leaves the end to the idle timeout", "[udp][loss]") {
  const auto tags = lossStream();
  const MemorySink sink = packing(*tags);
  const auto end_sequence = static_cast<std::uint32_t>(sink.datagrams.size() - 1);

  UdpSenderStats sent;
  UdpReceiverStats stats;
  std::vector<std::string> notices;
  const DrainedStream received = sendAndReceive(tags, {end_sequence}, sent, stats, notices, 0.3);
  requireWellFormed(received);
  CHECK((received.tags == *tags));
  CHECK(received.end() == tags->back().time + 1);  // the stream ends after its last tag
  CHECK(stats.datagrams_lost == 0);
  REQUIRE_FALSE(notices.empty());
  CHECK_THAT(notices.back(), Contains("ending the stream (idle_timeout_s)"));
}

TEST_CASE("The start datagram keeps the stream's start when the first ones of tags are lost",
          "[udp][loss]") {
  const auto tags = lossStream();
  const MemorySink sink = packing(*tags);
  const auto recordsOf = [&](std::size_t i) { return decodeAll({sink.datagrams[i]}); };
  REQUIRE(recordsOf(0).empty());  // the start datagram
  // One lost datagram is waited for within the reorder window (8); twelve are declared lost
  // when the thirteenth after the start arrives.
  for (const std::uint32_t lost : {1u, 2u, 12u}) {
    std::vector<std::uint32_t> drop(lost);
    std::iota(drop.begin(), drop.end(), 1u);
    UdpSenderStats sent;
    UdpReceiverStats stats;
    std::vector<std::string> notices;
    const DrainedStream received = sendAndReceive(tags, drop, sent, stats, notices);
    requireWellFormed(received);
    INFO(lost << " first datagrams of tags lost");
    CHECK(stats.datagrams_lost == lost);
    CHECK(stats.events_lost == sent.events_dropped);
    CHECK(stats.gaps == 1);
    CHECK(stats.first_sequence == 0);
    // The stream begins where the sender's did; the interval of the loss runs from there to
    // the first tag that came and holds every lost tag's count.
    const timestamp_t first_time = recordsOf(lost + 1).front().time;
    CHECK(received.begin() == 0);
    CHECK(received.end() == kEnd);
    const std::vector<Gap> gaps = gapsOf(received.tags);
    REQUIRE(gaps.size() == 1);
    CHECK(gaps[0].begin == 0);
    CHECK(gaps[0].end == first_time);
    std::uint64_t dropped_tags = 0;
    for (std::size_t i = 1; i <= lost; ++i) dropped_tags += recordsOf(i).size();
    CHECK(gaps[0].missed == dropped_tags);
    CHECK(countTimeTags(*tags, 1, 0, first_time) + countTimeTags(*tags, 2, 0, first_time) +
              countTimeTags(*tags, -3, 0, first_time) ==
          dropped_tags);
  }
}

TEST_CASE(
    "A lost start is told by the first datagram of tags, and without both the stream begins "
    "at the first that came",
    "[udp][loss]") {
  const auto tags = lossStream();
  const MemorySink sink = packing(*tags);
  const auto recordsOf = [&](std::size_t i) { return decodeAll({sink.datagrams[i]}); };
  UdpSenderStats sent;
  UdpReceiverStats stats;
  std::vector<std::string> notices;

  DrainedStream received = sendAndReceive(tags, {0}, sent, stats, notices);
  requireWellFormed(received);
  CHECK(stats.datagrams_lost == 1);
  CHECK(stats.events_lost == 0);
  CHECK(received.begin() == 0);
  CHECK(received.end() == kEnd);
  std::vector<Tag> time_tags;
  std::copy_if(received.tags.begin(), received.tags.end(), std::back_inserter(time_tags),
               [](const Tag& tag) { return tag.type == TagType::TimeTag; });
  CHECK((time_tags == *tags));

  // The start and twelve after it: a receiver started late, declared lost at once.
  std::vector<std::uint32_t> drop(13);
  std::iota(drop.begin(), drop.end(), 0u);
  received = sendAndReceive(tags, drop, sent, stats, notices);
  requireWellFormed(received);
  CHECK(stats.datagrams_lost == 13);
  CHECK(stats.first_sequence == 13);
  const timestamp_t first_time = recordsOf(13).front().time;
  CHECK(received.begin() == first_time);
  const std::vector<Gap> gaps = gapsOf(received.tags);
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0].begin == first_time);
  CHECK(gaps[0].end == first_time);
  std::uint64_t dropped_tags = 0;
  for (std::size_t i = 1; i <= 12; ++i) dropped_tags += recordsOf(i).size();
  CHECK(gaps[0].missed == dropped_tags);
}

TEST_CASE("A lost last data datagram keeps the stream's end", "[udp][loss]") {
  const auto tags = lossStream();
  const MemorySink sink = packing(*tags);
  const auto last_data = static_cast<std::uint32_t>(sink.datagrams.size() - 2);
  const std::vector<Tag> lost_records = decodeAll({sink.datagrams[last_data]});
  const std::vector<Tag> before = decodeAll({sink.datagrams[last_data - 1]});

  UdpSenderStats sent;
  UdpReceiverStats stats;
  std::vector<std::string> notices;
  const DrainedStream received = sendAndReceive(tags, {last_data}, sent, stats, notices);
  requireWellFormed(received);
  CHECK(stats.datagrams_lost == 1);
  CHECK(stats.events_lost == lost_records.size());
  CHECK(received.begin() == 0);
  CHECK(received.end() == kEnd);  // not a picosecond longer than the stream sent
  const std::vector<Gap> gaps = gapsOf(received.tags);
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0].begin == before.back().time + 1);
  CHECK(gaps[0].end == kEnd - 1);  // closed on the stream's last picosecond
  CHECK(gaps[0].missed == lost_records.size());
}

TEST_CASE("The sender names drops past the stream's end and times even one call", "[udp][loss]") {
  const auto tags = lossStream();
  const MemorySink sink = packing(*tags);
  const auto end_sequence = static_cast<std::uint32_t>(sink.datagrams.size() - 1);

  UdpSenderStats sent;
  UdpReceiverStats stats;
  std::vector<std::string> notices;
  // As fast as possible, the end dropped: the whole stream may leave in one sendmmsg call.
  const DrainedStream received =
      sendAndReceive(tags, {end_sequence, end_sequence + 5}, sent, stats, notices, 0.3, kUnpaced);
  requireWellFormed(received);
  CHECK(sent.datagrams_dropped == 1);
  CHECK(sent.datagrams_numbered == end_sequence + 1);
  CHECK((sent.drops_not_reached == std::vector<std::uint32_t>{end_sequence + 5}));
  REQUIRE(sent.seconds > 0);
  // No sender puts 20 000 tags through a socket in less than a microsecond.
  CHECK(static_cast<double>(sent.events_sent) / sent.seconds < 2e10);
}

TEST_CASE("A loss that no datagram used follows is marked at the end of the stream",
          "[udp][loss]") {
  // Datagram 2 is lost; 3 comes and is held, and so is 4, whose base time is after the last
  // tag when it comes but before 3's tag: used after 3, it goes back in time and is lost too.
  // Nothing follows: the stream ends at the idle timeout, and the second loss must still be
  // an overflow interval, at the stream's end.
  std::vector<std::string> notices;
  UdpStreamSource receiver(loopbackReceiver(&notices, 0.3));
  RawSender sender(receiver.port());
  sender.send(crafted(0, 0, 1000));
  sender.send(crafted(1, 0, 1000, {risingWord(1, 0)}));
  sender.send(crafted(3, 2, 1500, {risingWord(1, 0)}));
  sender.send(crafted(4, 3, 1200, {risingWord(2, 0)}));
  const DrainedStream received = drain(receiver);
  requireWellFormed(received);
  const UdpReceiverStats stats = receiver.stats();
  const std::vector<Tag> expected{
      {TagType::TimeTag, 0, 0, 1, 1000},      {TagType::OverflowBegin, 0, 0, 0, 1001},
      {TagType::MissedEvents, 0, 1, 0, 1500}, {TagType::OverflowEnd, 0, 0, 0, 1500},
      {TagType::TimeTag, 0, 0, 1, 1500},      {TagType::OverflowBegin, 0, 0, 0, 1501},
      {TagType::OverflowEnd, 0, 0, 0, 1501}};
  CHECK((received.tags == expected));
  CHECK(received.begin() == 1000);
  CHECK(received.end() == 1502);
  CHECK(stats.datagrams_lost == 2);
  CHECK(stats.gaps == 2);
  CHECK(stats.events_lost == 1);  // what the second loss held is not known
  CHECK(stats.time_backwards == 1);
  REQUIRE_FALSE(notices.empty());
  CHECK_THAT(notices.back(), Contains("ending the stream (idle_timeout_s)"));
}

TEST_CASE("Datagrams that are dropped do not hold off the idle timeout", "[udp][loss]") {
  // The sender stops without its end; the same address then keeps sending copies of a
  // datagram already used, and malformed ones. Neither is data: the stream ends after the idle
  // timeout all the same.
  std::vector<std::string> notices;
  UdpStreamSource receiver(loopbackReceiver(&notices, 0.5));
  RawSender sender(receiver.port());
  const Datagram used = crafted(1, 0, 1000, {risingWord(1, 0)});
  sender.send(crafted(0, 0, 1000));
  sender.send(used);
  sender.send(crafted(2, 1, 2000, {risingWord(1, 0)}));
  std::atomic<bool> ended{false};
  std::size_t repeats = 0;
  auto repeating = std::async(std::launch::async, [&] {
    Datagram malformed = used;
    malformed[5] = std::byte{0x80};  // an unknown flag
    std::vector<Datagram> copies{used, malformed};
    for (; repeats < 40 && !ended.load(); ++repeats) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      sender.sendBatch(copies);
    }
  });
  const auto begin = std::chrono::steady_clock::now();
  const DrainedStream received = drain(receiver);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ended = true;
  repeating.get();
  requireWellFormed(received);
  const UdpReceiverStats stats = receiver.stats();
  CHECK(seconds < 2.0);  // the idle timeout is 0.5 s; the copies went on for 4 s
  CHECK(repeats < 40);
  CHECK(stats.duplicates >= 2);
  CHECK(stats.malformed() >= 2);
  CHECK(received.tags.size() == 2);
  REQUIRE_FALSE(notices.empty());
  CHECK_THAT(notices.back(), Contains("ending the stream (idle_timeout_s)"));
  // The timeout in tenths of a second, not rounded to a whole one.
  CHECK_THAT(notices.back(), Contains("no datagrams for 0.5 s"));
}

namespace {

// A stream of `data` datagrams of one tag each on `channel`, from `start`, numbered from 0 as
// a sender numbers them, its start first; `events_per` events are counted per datagram.
std::vector<Datagram> numbered(timestamp_t start, int channel, std::uint32_t data,
                               std::uint32_t events_per = 1) {
  std::vector<Datagram> stream{crafted(0, 0, start)};
  for (std::uint32_t i = 1; i <= data; ++i) {
    std::vector<std::uint32_t> words(events_per, risingWord(channel, 0));
    stream.push_back(crafted(i, (i - 1) * events_per, start + 1000 * timestamp_t{i}, words));
  }
  return stream;
}

}  // namespace

TEST_CASE("A sender that restarts its numbering is a discontinuity and never a silent gap",
          "[udp][loss]") {
  // A first sender's stream of three datagrams of tags, then a second one from the same
  // address numbered from 0 again, later in time, with its end.
  const std::vector<Datagram> first = numbered(1000, 1, 3);
  SECTION("its start datagram resynchronises after an overflow interval") {
    std::vector<Datagram> second = numbered(100'000, 2, 6);
    second.push_back(crafted(7, 6, 200'000, {}, wire::kFlagEndOfStream));
    UdpStreamSource receiver(loopbackReceiver(nullptr, 0));  // ends only at the stream's end
    RawSender sender(receiver.port());
    for (const Datagram& datagram : first) sender.send(datagram);
    for (const Datagram& datagram : second) sender.send(datagram);
    StopAfter watchdog(receiver, 5);
    const DrainedStream received = drain(receiver);
    CHECK_FALSE(watchdog.fired());
    requireWellFormed(received);
    std::vector<Tag> expected{{TagType::TimeTag, 0, 0, 1, 2000},
                              {TagType::TimeTag, 0, 0, 1, 3000},
                              {TagType::TimeTag, 0, 0, 1, 4000},
                              {TagType::OverflowBegin, 0, 0, 0, 4001},
                              {TagType::OverflowEnd, 0, 0, 0, 99'999}};
    for (timestamp_t i = 1; i <= 6; ++i) {
      expected.push_back(Tag{TagType::TimeTag, 0, 0, 2, 100'000 + 1000 * i});
    }
    CHECK((received.tags == expected));
    CHECK(received.end() == 200'000);
    const UdpReceiverStats stats = receiver.stats();
    CHECK(stats.restarts == 1);
    CHECK(stats.gaps == 1);
    CHECK(stats.datagrams_lost == 0);
    CHECK(stats.late == 0);
    CHECK(stats.duplicates == 0);
    CHECK(stats.datagrams_accepted == 12);
  }
  SECTION("without its start, the event count that does not follow tells it") {
    std::vector<Datagram> second = numbered(100'000, 2, 6, 2);
    second.push_back(crafted(7, 12, 200'000, {}, wire::kFlagEndOfStream));
    UdpStreamSource receiver(loopbackReceiver(nullptr, 0));
    RawSender sender(receiver.port());
    for (const Datagram& datagram : first) sender.send(datagram);
    for (std::size_t i = 1; i < second.size(); ++i) sender.send(second[i]);
    StopAfter watchdog(receiver, 5);
    const DrainedStream received = drain(receiver);
    CHECK_FALSE(watchdog.fired());
    requireWellFormed(received);
    const UdpReceiverStats stats = receiver.stats();
    CHECK(stats.restarts == 1);
    CHECK(stats.gaps == 1);
    // The second sender's datagrams 1..3 carry numbers already used; from 4 on they follow
    // an interval that holds the times of those.
    const std::vector<Gap> gaps = gapsOf(received.tags);
    REQUIRE(gaps.size() == 1);
    CHECK(gaps[0].begin == 4001);
    CHECK(gaps[0].end == 104'000);
    CHECK(received.tags.back().time == 106'000);
    CHECK(received.end() == 200'000);
  }
  SECTION("a new stream earlier in time ends the stream received with an error") {
    const std::vector<Datagram> second = numbered(0, 2, 2);
    UdpStreamSource receiver(loopbackReceiver(nullptr, 0));
    RawSender sender(receiver.port());
    for (const Datagram& datagram : first) sender.send(datagram);
    for (const Datagram& datagram : second) sender.send(datagram);
    StopAfter watchdog(receiver, 5);
    std::vector<Tag> tags;
    timestamp_t end = 0;
    BlockBuffer block;
    block.storage.reserve(receiver.maxBlockTags());
    std::string error;
    try {
      while (receiver.next(block)) {
        tags.insert(tags.end(), block.tags.begin(), block.tags.end());
        end = block.end_time;
      }
    } catch (const DataError& e) {
      error = e.what();
    }
    CHECK_FALSE(watchdog.fired());
    CHECK_THAT(error, Contains("started a new stream") && Contains("4000 ps"));
    const std::vector<Tag> expected{{TagType::TimeTag, 0, 0, 1, 2000},
                                    {TagType::TimeTag, 0, 0, 1, 3000},
                                    {TagType::TimeTag, 0, 0, 1, 4000}};
    CHECK((tags == expected));
    CHECK(end == 4001);
    CHECK(receiver.stats().restarts == 1);
  }
}
