// Malformed datagrams: the decoder names what is wrong with each kind and never reads or
// writes outside the datagram; the receiver counts and drops them and the valid stream
// around them arrives unchanged.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <random>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "udp/udp_support.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

Datagram datagramOf(const wire::Header& header, const std::vector<std::uint32_t>& words) {
  std::vector<std::uint32_t> buffer(wire::kHeaderWords + words.size());
  wire::Header h = header;
  h.word_count = static_cast<std::uint16_t>(words.size());
  wire::writeHeader(buffer.data(), h);
  std::copy(words.begin(), words.end(), buffer.begin() + wire::kHeaderWords);
  const auto* bytes = reinterpret_cast<const std::byte*>(buffer.data());
  return Datagram(bytes, bytes + 4 * buffer.size());
}

wire::Status statusOf(const Datagram& datagram) {
  wire::Header header;
  const wire::Status status = wire::parseHeader(datagram, header);
  if (status != wire::Status::Ok) return status;
  std::vector<Tag> out(header.word_count);
  return wire::decodeWords(header, datagram.data() + wire::kHeaderBytes, out.data()).status;
}

std::uint32_t word(std::uint32_t code, std::uint32_t payload) {
  return code << wire::kDeltaBits | payload;
}

}  // namespace

TEST_CASE("The decoder names every kind of malformed datagram", "[udp][malformed]") {
  using wire::Status;
  const wire::Header base{0, 0, 7, 100, 1'000'000};
  const Datagram good = datagramOf(base, {word(0, 5), word(35, 0)});
  REQUIRE(statusOf(good) == Status::Ok);

  for (std::size_t size = 0; size < wire::kHeaderBytes; ++size) {
    CHECK(statusOf(Datagram(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size))) ==
          Status::TooShort);
  }
  Datagram bad = good;
  bad[0] = std::byte{'X'};
  CHECK(statusOf(bad) == Status::BadMagic);
  bad = good;
  bad[4] = std::byte{2};
  CHECK(statusOf(bad) == Status::BadVersion);
  bad = good;
  bad[5] = std::byte{4};
  CHECK(statusOf(bad) == Status::BadFlags);
  bad = good;
  bad.pop_back();
  CHECK(statusOf(bad) == Status::BadLength);
  bad = good;
  bad.insert(bad.end(), 4, std::byte{0});
  CHECK(statusOf(bad) == Status::BadLength);
  // A word count above what any datagram holds, with a length that matches it.
  bad = datagramOf(base, std::vector<std::uint32_t>(wire::kMaxWords + 1, word(0, 1)));
  CHECK(statusOf(bad) == Status::BadLength);
  CHECK(statusOf(datagramOf(base, std::vector<std::uint32_t>(wire::kMaxWords, word(0, 1)))) ==
        Status::Ok);

  for (std::uint32_t code = 36; code < 64; ++code) {
    if (code >= wire::kCodeMissedEvents && code <= wire::kCodeOverflowEnd) continue;
    if (code == wire::kCodeTimeExtend) continue;
    INFO("code " << code);
    CHECK(statusOf(datagramOf(base, {word(1, 0), word(code, 3)})) == Status::BadWord);
  }
  // Missed events: the second word missing, reserved bits, a channel code beyond 35 other than
  // 63 (channel 0).
  CHECK(statusOf(datagramOf(base, {word(wire::kCodeMissedEvents, 0)})) == Status::BadWord);
  CHECK(statusOf(datagramOf(base, {word(wire::kCodeMissedEvents, 0), word(2, 1 << 16)})) ==
        Status::BadWord);
  for (std::uint32_t code = 36; code < 63; ++code) {
    INFO("channel code " << code);
    CHECK(statusOf(datagramOf(base, {word(wire::kCodeMissedEvents, 0), word(code, 1)})) ==
          Status::BadWord);
  }
  CHECK(statusOf(datagramOf(base, {word(wire::kCodeMissedEvents, 0),
                                   word(wire::kMissedUnknownChannel, 1 << 16)})) ==
        Status::BadWord);
  CHECK(statusOf(datagramOf(base, {word(wire::kCodeMissedEvents, 0),
                                   word(wire::kMissedUnknownChannel, 0xFFFF)})) == Status::Ok);
  CHECK(statusOf(datagramOf(base, {word(wire::kCodeMissedEvents, 0), word(35, 0xFFFF)})) ==
        Status::Ok);
  // Extension words: zero, or not followed by an item.
  CHECK(statusOf(datagramOf(base, {word(wire::kCodeTimeExtend, 0), word(1, 0)})) ==
        Status::BadWord);
  CHECK(statusOf(datagramOf(base, {word(1, 0), word(wire::kCodeTimeExtend, 1)})) ==
        Status::BadWord);
  // Times beyond int64, by deltas and by extension words.
  wire::Header late = base;
  late.base_time = std::numeric_limits<timestamp_t>::max() - 10;
  CHECK(statusOf(datagramOf(late, {word(1, 10)})) == Status::Ok);
  CHECK(statusOf(datagramOf(late, {word(1, 11)})) == Status::TimeOverflow);
  CHECK(statusOf(datagramOf(late, {word(wire::kCodeTimeExtend, 1), word(1, 0)})) ==
        Status::TimeOverflow);
  // 2049 of the largest extension words pass 2^63 ps.
  std::vector<std::uint32_t> many(2049, word(wire::kCodeTimeExtend, wire::kDeltaMask));
  many.push_back(word(1, 0));
  wire::Header zero = base;
  zero.base_time = 0;
  CHECK(statusOf(datagramOf(zero, many)) == Status::TimeOverflow);
  // Overflow marks must alternate, starting from the header's flag.
  CHECK(statusOf(datagramOf(base, {word(wire::kCodeOverflowEnd, 0)})) == Status::OverflowOrder);
  CHECK(statusOf(datagramOf(base, {word(wire::kCodeOverflowBegin, 0),
                                   word(wire::kCodeOverflowBegin, 1)})) == Status::OverflowOrder);
  wire::Header open = base;
  open.flags = wire::kFlagInOverflow;
  CHECK(statusOf(datagramOf(open, {word(wire::kCodeOverflowEnd, 0)})) == Status::Ok);
  CHECK(statusOf(datagramOf(open, {word(wire::kCodeOverflowBegin, 0)})) == Status::OverflowOrder);
}

TEST_CASE("Random words never crash the decoder, and what it accepts is well formed",
          "[udp][malformed]") {
  std::mt19937_64 random(11);
  std::vector<Tag> out(wire::kMaxWords);
  std::size_t accepted = 0;
  for (int trial = 0; trial < 20'000; ++trial) {
    // Codes drawn mostly from the valid ones so that many datagrams get deep into decoding.
    std::vector<std::uint32_t> words(random() % 64);
    for (auto& w : words) {
      const std::uint32_t code = random() % 4 == 0 ? random() % 64 : random() % 36;
      w = word(code, static_cast<std::uint32_t>(random()) & wire::kDeltaMask);
    }
    wire::Header header{static_cast<std::uint8_t>(random() % 4), 0, 1, 0,
                        static_cast<timestamp_t>(random())};
    const Datagram datagram = datagramOf(header, words);
    wire::Header parsed;
    REQUIRE(wire::parseHeader(datagram, parsed) == wire::Status::Ok);
    const wire::Decoded decoded =
        wire::decodeWords(parsed, datagram.data() + wire::kHeaderBytes, out.data());
    if (decoded.status != wire::Status::Ok) continue;
    ++accepted;
    REQUIRE(decoded.tags <= words.size());
    for (std::size_t i = 0; i < decoded.tags; ++i) {
      REQUIRE(out[i].time >= parsed.base_time);
      if (i > 0) REQUIRE(out[i].time >= out[i - 1].time);
      REQUIRE(static_cast<int>(out[i].type) <= kMaxTagType);
    }
  }
  CHECK(accepted > 1000);
}

TEST_CASE("The receiver counts and drops malformed datagrams and keeps the stream",
          "[udp][malformed]") {
  std::vector<std::string> notices;
  UdpStreamSource receiver(loopbackReceiver(&notices));
  const std::vector<Tag> tags = randomTags(8, {1, 2, -4}, 0, 400'000'000, 20'000);
  MemorySink sink(wire::wordsPerDatagram(1500));
  wire::Encoder encoder(wire::wordsPerDatagram(1500));
  encoder.begin(0, sink);
  encoder.encode(tags, sink);
  encoder.finish(400'000'000, sink);
  REQUIRE(sink.datagrams.size() > 10);

  // Everything is sent before the receiver decodes anything, so the outcome does not depend
  // on timing; the socket buffer and the ring hold it all.
  RawSender sender(receiver.port());
  std::mt19937_64 random(2);
  const Datagram& valid = sink.datagrams[3];
  for (std::size_t i = 0; i < sink.datagrams.size(); ++i) {
    if (i == 2) {
      sender.send(valid.data(), 10);  // too short
      Datagram wrong = valid;
      wrong[0] = std::byte{'U'};
      sender.send(wrong);  // bad magic
      wrong = valid;
      wrong[4] = std::byte{9};
      sender.send(wrong);  // bad version
      wrong = valid;
      wrong.resize(wrong.size() - 4);
      sender.send(wrong);  // bad length
      wrong = valid;
      std::uint32_t reserved = word(40, 0);
      std::memcpy(wrong.data() + wire::kHeaderBytes + 8, &reserved, 4);
      sender.send(wrong);  // bad word
      Datagram huge(wire::kMaxDatagramBytes + 100, std::byte{0});
      sender.send(huge);              // truncated
      for (int r = 0; r < 20; ++r) {  // random bytes
        Datagram noise(24 + random() % 2000);
        for (auto& b : noise) b = static_cast<std::byte>(random());
        noise[0] = std::byte{0};
        sender.send(noise);
      }
    }
    if (i == 5) {
      // A valid datagram in the right place in the sequence but earlier in time.
      wire::Header header;
      REQUIRE(wire::parseHeader(sink.datagrams[5], header) == wire::Status::Ok);
      header.base_time = 0;
      sender.send(datagramOf(header, {word(1, 0)}));
    }
    sender.send(sink.datagrams[i]);
  }

  const DrainedStream received = drain(receiver);
  requireWellFormed(received);
  const bool same_tags = received.tags == tags;
  CHECK(same_tags);
  CHECK(received.begin() == 0);
  CHECK(received.end() == 400'000'000);
  const UdpReceiverStats stats = receiver.stats();
  using wire::Status;
  CHECK(stats.invalid[static_cast<std::size_t>(Status::TooShort)] == 1);
  CHECK(stats.invalid[static_cast<std::size_t>(Status::BadMagic)] == 21);
  CHECK(stats.invalid[static_cast<std::size_t>(Status::BadVersion)] == 1);
  CHECK(stats.invalid[static_cast<std::size_t>(Status::BadLength)] == 1);
  CHECK(stats.invalid[static_cast<std::size_t>(Status::BadWord)] == 1);
  CHECK(stats.truncated == 1);
  CHECK(stats.time_backwards == 1);
  CHECK(stats.malformed() == 27);
  CHECK(stats.datagrams_lost == 0);
  CHECK(stats.datagrams_accepted == sink.datagrams.size());
  CHECK(stats.datagrams_received == sink.datagrams.size() + 27);
  CHECK(stats.tags == tags.size());
}

TEST_CASE("A malformed datagram far ahead is checked before its sequence number is trusted",
          "[udp][malformed]") {
  // A stream of four datagrams and its end; among them one numbered 50, far beyond the reorder
  // window: malformed, its number must not declare the datagrams before it lost.
  const Datagram start = crafted(0, 0, 1000);
  const std::vector<Datagram> stream{crafted(1, 0, 1000, {risingWord(1, 0), risingWord(2, 5)}),
                                     crafted(2, 2, 2000, {risingWord(1, 0)}),
                                     crafted(3, 3, 3000, {risingWord(3, 0)}),
                                     crafted(4, 4, 4000, {}, wire::kFlagEndOfStream)};
  const std::vector<Tag> expected{{TagType::TimeTag, 0, 0, 1, 1000},
                                  {TagType::TimeTag, 0, 0, 2, 1005},
                                  {TagType::TimeTag, 0, 0, 1, 2000},
                                  {TagType::TimeTag, 0, 0, 3, 3000}};
  struct Case {
    const char* what;
    Datagram datagram;
    bool first;  // sent before the start
  };
  const std::vector<Case> cases{
      {"a reserved word", crafted(50, 0, 5000, {word(40, 0)}), false},
      {"a base time before the stream's", crafted(50, 0, 10, {risingWord(1, 0)}), false},
      {"a reserved word, before the start", crafted(50, 0, 5000, {word(40, 0)}), true},
      {"a time beyond int64, before the start",
       crafted(50, 0, std::numeric_limits<timestamp_t>::max(), {risingWord(1, 0)}), true}};
  for (const Case& c : cases) {
    INFO(c.what);
    UdpStreamSource receiver(loopbackReceiver(nullptr, 0));  // ends only at the stream's end
    RawSender sender(receiver.port());
    if (c.first) sender.send(c.datagram);
    sender.send(start);
    sender.send(stream[0]);
    if (!c.first) sender.send(c.datagram);
    for (std::size_t i = 1; i < stream.size(); ++i) sender.send(stream[i]);
    StopAfter watchdog(receiver, 5);
    const DrainedStream received = drain(receiver);
    const UdpReceiverStats stats = receiver.stats();
    CHECK_FALSE(watchdog.fired());
    requireWellFormed(received);
    CHECK((received.tags == expected));
    CHECK(received.begin() == 1000);
    CHECK(received.end() == 4000);
    CHECK(stats.malformed() == 1);
    CHECK(stats.datagrams_lost == 0);
    CHECK(stats.gaps == 0);
    CHECK(stats.late == 0);
    CHECK(stats.reordered == 0);
    CHECK(stats.datagrams_accepted == 5);
  }
}
