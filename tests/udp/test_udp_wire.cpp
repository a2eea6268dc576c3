// The wire format on its own: random streams survive encode then decode unchanged (special
// marks come back on channel 0), at every MTU; every range edge of channels, deltas and
// extension words; items of one time never split between datagrams; streams the format
// cannot carry are refused with messages that name the tag and the range.
#include <catch2/catch.hpp>

#include <limits>
#include <random>

#include "support/generators.hpp"
#include "tagflow/core/error.hpp"
#include "udp/udp_support.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

// What the receiver sees: error and overflow marks lose their channel.
std::vector<Tag> asSent(std::vector<Tag> tags) {
  for (Tag& tag : tags) {
    if (tag.type != TagType::TimeTag && tag.type != TagType::MissedEvents) tag.channel = 0;
  }
  return tags;
}

std::vector<Tag> roundTrip(const std::vector<Tag>& tags, int mtu, std::size_t chunk,
                           MemorySink* keep = nullptr) {
  MemorySink sink(wire::wordsPerDatagram(mtu));
  wire::Encoder encoder(wire::wordsPerDatagram(mtu));
  for (std::size_t i = 0; i < tags.size(); i += chunk) {
    encoder.encode(std::span<const Tag>(tags).subspan(i, std::min(chunk, tags.size() - i)), sink);
  }
  encoder.flush(sink);
  if (keep != nullptr) *keep = sink;
  return decodeAll(sink.datagrams);
}

// All channels, gaps from 0 to beyond the 26-bit delta, runs of equal times, special tags.
std::vector<Tag> randomWireStream(std::uint64_t seed, std::size_t count) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> input(1, wire::kMaxInput);
  std::uniform_int_distribution<int> kind(0, 99);
  std::vector<Tag> tags;
  timestamp_t time = -5'000'000;
  bool in_overflow = false;
  for (std::size_t i = 0; i < count; ++i) {
    const int k = kind(random);
    if (k < 20) {
      time += 0;  // equal times
    } else if (k < 85) {
      time += std::uniform_int_distribution<timestamp_t>(1, 5000)(random);
    } else if (k < 95) {
      time += std::uniform_int_distribution<timestamp_t>(wire::kMaxDelta - 2,
                                                         wire::kMaxDelta + 2)(random);
    } else {
      time += std::uniform_int_distribution<timestamp_t>(1, timestamp_t{1} << 42)(random);
    }
    Tag tag = makeTimeTag(input(random) * (random() % 2 ? 1 : -1), time);
    const int special = kind(random);
    if (special < 2) {
      tag = Tag{in_overflow ? TagType::OverflowEnd : TagType::OverflowBegin, 0, 0, 0, time};
      in_overflow = !in_overflow;
    } else if (special < 4) {
      tag.type = TagType::MissedEvents;
      tag.missed_events = static_cast<std::uint16_t>(random() % 3 == 0 ? 0xFFFF : random() % 500);
    } else if (special < 5) {
      tag = Tag{TagType::Error, 0, 0, 0, time};
    }
    tags.push_back(tag);
  }
  return tags;
}

}  // namespace

TEST_CASE("Random streams survive encoding and decoding at every MTU", "[udp][wire]") {
  for (std::uint64_t seed : {1, 2, 3}) {
    const std::vector<Tag> tags = randomWireStream(seed, 60'000);
    for (int mtu : {wire::kMinMtu, 1500, 4000, 9000, wire::kMaxMtu}) {
      for (std::size_t chunk : {std::size_t{1}, std::size_t{777}, tags.size()}) {
        INFO("seed " << seed << " mtu " << mtu << " chunk " << chunk);
        MemorySink sink(0);
        const std::vector<Tag> decoded = roundTrip(tags, mtu, chunk, &sink);
        REQUIRE((decoded == asSent(tags)));
        // The sequence numbers count up; the running count adds each datagram's events.
        std::uint64_t events = 0;
        for (std::size_t i = 0; i < sink.datagrams.size(); ++i) {
          wire::Header header;
          REQUIRE(wire::parseHeader(sink.datagrams[i], header) == wire::Status::Ok);
          CHECK(header.sequence == i);
          CHECK(header.events_before == static_cast<std::uint32_t>(events));
          CHECK(sink.datagrams[i].size() <= static_cast<std::size_t>(mtu - 28));
          events += sink.event_counts[i];
        }
        std::uint64_t expected_events = 0;
        for (const Tag& tag : tags) {
          if (tag.type == TagType::TimeTag) ++expected_events;
          if (tag.type == TagType::MissedEvents) expected_events += tag.missed_events;
        }
        CHECK(events == expected_events);
      }
    }
  }
}

TEST_CASE("A datagram never splits the items of one time from the next datagram", "[udp][wire]") {
  // Runs of 1..40 equal times; every datagram boundary must fall between two times.
  std::mt19937_64 random(5);
  std::vector<Tag> tags;
  timestamp_t time = 0;
  while (tags.size() < 50'000) {
    time += 1 + static_cast<timestamp_t>(random() % 100);
    const auto run = 1 + random() % 40;
    for (std::uint64_t i = 0; i < run; ++i) {
      tags.push_back(makeTimeTag(static_cast<channel_t>(1 + i % 18), time));
    }
  }
  MemorySink sink(0);
  REQUIRE((roundTrip(tags, wire::kMinMtu, 1000, &sink) == tags));
  timestamp_t previous_last = std::numeric_limits<timestamp_t>::min();
  for (const Datagram& datagram : sink.datagrams) {
    const std::vector<Tag> records = decodeAll({datagram});
    REQUIRE_FALSE(records.empty());
    CHECK(records.front().time > previous_last);
    previous_last = records.back().time;
  }
}

TEST_CASE("Range edges of channels, deltas and extension words", "[udp][wire]") {
  const timestamp_t d = wire::kMaxDelta;
  std::vector<Tag> tags;
  timestamp_t time = std::numeric_limits<timestamp_t>::min() + 1;
  for (channel_t channel = 1; channel <= wire::kMaxInput; ++channel) {
    tags.push_back(makeTimeTag(channel, time));
    tags.push_back(makeTimeTag(-channel, time));
  }
  // 0, the largest plain delta, one more (one extension word), an exact multiple of 2^26,
  // the largest single extension, more than one extension word.
  for (timestamp_t gap : {timestamp_t{0}, d, d + 1, timestamp_t{1} << 26, d << 26,
                          (d << 26) + (timestamp_t{1} << 26), timestamp_t{1} << 60}) {
    time += gap;
    tags.push_back(makeTimeTag(18, time));
  }
  tags.push_back(Tag{TagType::MissedEvents, 0, 0, -18, time});
  tags.push_back(Tag{TagType::MissedEvents, 0, 0xFFFF, 1, time});
  // Events of no known channel, as a receiver reports a lost datagram's: sent on again.
  tags.push_back(Tag{TagType::MissedEvents, 0, 0xFFFF, 0, time});
  tags.push_back(Tag{TagType::MissedEvents, 0, 7, 0, time + 1});
  // Up to the very last picosecond of int64.
  tags.push_back(makeTimeTag(-1, std::numeric_limits<timestamp_t>::max()));
  for (int mtu : {wire::kMinMtu, 9000}) {
    CHECK(roundTrip(tags, mtu, 3) == tags);
  }
  CHECK(wire::wordsPerDatagram(wire::kMinMtu) == 131);
  CHECK(wire::wordsPerDatagram(9000) == 2237);
  CHECK(wire::wordsPerDatagram(wire::kMaxMtu) == 2362);
  CHECK(wire::channelCode(0) == -1);
  CHECK(wire::channelCode(19) == -1);
  CHECK(wire::channelCode(-19) == -1);
  CHECK(wire::channelCode(std::numeric_limits<channel_t>::min()) == -1);
  for (channel_t channel = -18; channel <= 18; ++channel) {
    if (channel == 0) continue;
    const int code = wire::channelCode(channel);
    REQUIRE(code >= 0);
    CHECK(wire::codeChannel(static_cast<std::uint32_t>(code)) == channel);
  }
}

TEST_CASE("A declared start travels in a start datagram and the first one of tags", "[udp][wire]") {
  MemorySink sink(wire::wordsPerDatagram(1500));
  wire::Encoder encoder(wire::wordsPerDatagram(1500));
  encoder.begin(1000, sink);
  const std::vector<Tag> tags = {makeTimeTag(1, 1000 + (timestamp_t{1} << 40)),
                                 makeTimeTag(2, 1000 + (timestamp_t{1} << 40) + 5)};
  encoder.encode(tags, sink);
  encoder.finish(timestamp_t{1} << 41, sink);
  REQUIRE(sink.datagrams.size() == 3);
  wire::Header start, first, last;
  REQUIRE(wire::parseHeader(sink.datagrams[0], start) == wire::Status::Ok);
  REQUIRE(wire::parseHeader(sink.datagrams[1], first) == wire::Status::Ok);
  REQUIRE(wire::parseHeader(sink.datagrams[2], last) == wire::Status::Ok);
  CHECK(start.sequence == 0);
  CHECK(start.word_count == 0);
  CHECK(start.flags == 0);
  CHECK(start.base_time == 1000);
  CHECK(first.base_time == 1000);
  CHECK(first.events_before == 0);
  CHECK(last.base_time == timestamp_t{1} << 41);
  CHECK(last.flags == wire::kFlagEndOfStream);
  CHECK(last.word_count == 0);
  CHECK(last.events_before == 2);
  CHECK(decodeAll({sink.datagrams[1]}) == tags);
}

TEST_CASE("A stream without tags is its start and its end", "[udp][wire]") {
  MemorySink sink(wire::wordsPerDatagram(1500));
  wire::Encoder encoder(wire::wordsPerDatagram(1500));
  encoder.begin(1000, sink);
  encoder.finish(5000, sink);
  REQUIRE(sink.datagrams.size() == 2);
  wire::Header start, last;
  REQUIRE(wire::parseHeader(sink.datagrams[0], start) == wire::Status::Ok);
  REQUIRE(wire::parseHeader(sink.datagrams[1], last) == wire::Status::Ok);
  CHECK(start.base_time == 1000);
  CHECK(start.word_count == 0);
  CHECK(last.base_time == 5000);
  CHECK(last.flags == wire::kFlagEndOfStream);
}

TEST_CASE("Overflow state travels in the header flags", "[udp][wire]") {
  std::vector<Tag> tags = randomTags(3, {1, 2, -3}, 0, 2'000'000'000, 20'000);
  tags = withOverflow(tags, 100'000'000, 1'500'000'000);
  MemorySink sink(0);
  REQUIRE((roundTrip(tags, 1500, 4096, &sink) == asSent(tags)));
  // Each datagram's flag says whether the stream is inside the overflow at its start.
  bool open = false;
  for (const Datagram& datagram : sink.datagrams) {
    wire::Header header;
    REQUIRE(wire::parseHeader(datagram, header) == wire::Status::Ok);
    CHECK(((header.flags & wire::kFlagInOverflow) != 0) == open);
    for (const Tag& tag : decodeAll({datagram})) {
      if (tag.type == TagType::OverflowBegin) open = true;
      if (tag.type == TagType::OverflowEnd) open = false;
    }
  }
}

TEST_CASE("Streams the format cannot carry are refused with clear messages", "[udp][wire]") {
  MemorySink sink(wire::wordsPerDatagram(1500));
  const auto encodeOnly = [&](std::vector<Tag> tags, int mtu = 1500) {
    wire::Encoder encoder(wire::wordsPerDatagram(mtu));
    encoder.encode(tags, sink);
    encoder.flush(sink);
  };
  CHECK_THROWS_MATCHES(
      encodeOnly({makeTimeTag(1, 5), makeTimeTag(19, 6)}), DataError,
      Catch::Matchers::Message("tag 1 (TimeTag, channel 19, 6 ps): channel 19 cannot be sent (the "
                               "wire format carries channels 1..18 and -1..-18)"));
  CHECK_THROWS_WITH(encodeOnly({makeTimeTag(0, 5)}), Contains("channel 0 cannot be sent"));
  CHECK_THROWS_WITH(encodeOnly({Tag{TagType::MissedEvents, 0, 1, 19, 5}}),
                    Contains("channel 19 cannot be sent") && Contains("and 0 for missed events)"));
  CHECK_THROWS_WITH(encodeOnly({makeTimeTag(1, 5), makeTimeTag(2, 4)}),
                    Contains("tag 1") && Contains("earlier than the tag before it at 5 ps"));
  CHECK_THROWS_WITH(encodeOnly({Tag{TagType::OverflowEnd, 0, 0, 0, 3}}),
                    Contains("ends an overflow that was not open"));
  CHECK_THROWS_WITH(encodeOnly({Tag{TagType::OverflowBegin, 0, 0, 0, 3},
                                Tag{TagType::OverflowBegin, 0, 0, 0, 4}}),
                    Contains("begins an overflow inside an open one"));
  CHECK_THROWS_WITH(encodeOnly({Tag{static_cast<TagType>(7), 0, 0, 1, 3}}),
                    Contains("has type 7 (valid: 0..4)"));
  // More items at one time than a datagram of the smallest MTU holds (131 words).
  std::vector<Tag> crowd;
  for (int i = 0; i < 140; ++i) crowd.push_back(makeTimeTag(1 + i % 18, 77));
  CHECK_THROWS_WITH(encodeOnly(crowd, wire::kMinMtu),
                    Contains("more than 131 wire words of tags at 77 ps"));
  CHECK_THROWS_MATCHES(wire::wordsPerDatagram(575), InvalidArgument,
                       Catch::Matchers::Message("MTU 575 is invalid (valid: 576..9500)"));
  CHECK_THROWS_WITH(wire::wordsPerDatagram(9501), Contains("MTU 9501 is invalid"));
  wire::Encoder encoder(10);
  encoder.encode(std::vector<Tag>{makeTimeTag(1, 10)}, sink);
  CHECK_THROWS_WITH(encoder.finish(10, sink), Contains("not later than the last tag at 10 ps"));
}
