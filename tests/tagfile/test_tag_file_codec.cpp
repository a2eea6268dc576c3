#include <catch2/catch.hpp>

#include <limits>
#include <random>

#include "tagfile/tagfile_streams.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/codec.hpp"

using namespace tagflow;
using namespace tagflow::tagfile;

namespace {

// Encodes and decodes one block; checks every field of every tag and the special index list.
std::size_t roundTrip(TagBlockEncoder& encoder, TagBlockDecoder& decoder,
                      const std::vector<Tag>& tags, timestamp_t begin, timestamp_t end) {
  std::vector<std::uint8_t> payload;
  encoder.encode(tags, begin, payload);
  std::vector<Tag> decoded(tags.size());
  std::vector<std::uint32_t> specials;
  decoder.decode(payload, static_cast<std::uint32_t>(tags.size()), begin, end, decoded.data(),
                 specials);
  REQUIRE(decoded == tags);
  std::vector<std::uint32_t> expected;
  for (std::size_t i = 0; i < tags.size(); ++i) {
    if (tags[i].type != TagType::TimeTag) expected.push_back(static_cast<std::uint32_t>(i));
  }
  REQUIRE(specials == expected);
  return payload.size();
}

}  // namespace

TEST_CASE("codec: random streams with every feature round-trip exactly", "[tagfile]") {
  TagBlockEncoder encoder;
  TagBlockDecoder decoder;
  const std::vector<std::vector<channel_t>> channel_sets = {{1},
                                                            {1, 2, 3, 4, 5, 6, 7, 8},
                                                            {-3, -2, -1, 1, 2, 3},
                                                            {0, 5000, -7000000, 2147483647},
                                                            {1, 64, 65}};
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    for (const auto& channels : channel_sets) {
      const auto tags = test::featureStream(seed, 20000, channels, -123456789);
      for (const auto& block : test::randomBlocks(seed, tags, 5000)) {
        roundTrip(encoder, decoder, block.tags, block.begin, block.end);
      }
    }
  }
}

TEST_CASE("codec: extreme times, channels and many distinct channels", "[tagfile]") {
  TagBlockEncoder encoder;
  TagBlockDecoder decoder;
  constexpr timestamp_t kMin = std::numeric_limits<timestamp_t>::min();
  constexpr timestamp_t kMax = std::numeric_limits<timestamp_t>::max();
  constexpr channel_t kLow = std::numeric_limits<channel_t>::min();
  constexpr channel_t kHigh = std::numeric_limits<channel_t>::max();

  SECTION("the whole int64 time range in one block") {
    const std::vector<Tag> tags = {makeTimeTag(kLow, kMin), makeTimeTag(kHigh, kMin),
                                   makeTimeTag(0, -1), makeTimeTag(7, 0),
                                   makeTimeTag(-7, kMax - 1)};
    roundTrip(encoder, decoder, tags, kMin, kMax);
  }
  SECTION("thousands of channels, in and out of the direct table") {
    std::mt19937_64 random(7);
    std::vector<Tag> tags;
    for (int i = 0; i < 30000; ++i) {
      const auto channel =
          static_cast<channel_t>(random() % 3000) - 1500 + (i % 3 == 0 ? 1'000'000 : 0);
      tags.push_back(makeTimeTag(channel, i * 1000));
    }
    roundTrip(encoder, decoder, tags, 0, 30000 * 1000);
  }
  SECTION("an empty block, and one of a single tag") {
    CHECK(roundTrip(encoder, decoder, {}, 5, 10) < 32);
    roundTrip(encoder, decoder, {makeTimeTag(3, 9)}, 5, 10);
  }
}

TEST_CASE("codec: a clock costs almost nothing, Poisson about two and a half bytes", "[tagfile]") {
  TagBlockEncoder encoder;
  TagBlockDecoder decoder;
  std::vector<Tag> clock;
  for (int i = 0; i < 16384; ++i) clock.push_back(makeTimeTag(3, 1000 + i * 100000));
  const std::size_t clock_bytes = roundTrip(encoder, decoder, clock, 0, 1000 + 16384 * 100000);
  CHECK(clock_bytes < 40);  // table, widths, smallest delta, counts: no per-tag bytes

  // Exponential gaps of mean 14 ns over 8 channels: 2 delta bytes, a 4-bit code, about 1 %
  // exceptions.
  const auto poisson =
      test::randomTags(3, {1, 2, 3, 4, 5, 6, 7, 8}, 0, 16384 * 14000 / 8 * 8, 8 * 14000.0);
  const std::size_t bytes = roundTrip(encoder, decoder, poisson, 0, poisson.back().time + 1);
  const double per_tag = static_cast<double>(bytes) / static_cast<double>(poisson.size());
  CHECK(per_tag > 2.4);
  CHECK(per_tag < 2.7);
}

TEST_CASE("codec: damaged payloads are refused, never misread", "[tagfile]") {
  TagBlockEncoder encoder;
  TagBlockDecoder decoder;
  const auto tags = test::featureStream(11, 3000, {1, 2, 3, 4, 5});
  std::vector<std::uint8_t> payload;
  encoder.encode(tags, tags.front().time, payload);
  const timestamp_t end = tags.back().time + 1;
  std::vector<Tag> out(tags.size());
  std::vector<std::uint32_t> specials;

  SECTION("cut short or too long") {
    for (std::size_t cut :
         {std::size_t{0}, std::size_t{1}, payload.size() / 2, payload.size() - 1}) {
      const std::vector<std::uint8_t> part(payload.begin(),
                                           payload.begin() + static_cast<std::ptrdiff_t>(cut));
      CHECK_THROWS_AS(decoder.decode(part, 3000, tags.front().time, end, out.data(), specials),
                      DataError);
    }
    auto longer = payload;
    longer.push_back(0);
    CHECK_THROWS_AS(decoder.decode(longer, 3000, tags.front().time, end, out.data(), specials),
                    DataError);
  }
  SECTION("any single changed byte decodes to a valid block or throws DataError") {
    std::mt19937_64 random(5);
    for (int trial = 0; trial < 2000; ++trial) {
      auto damaged = payload;
      damaged[random() % damaged.size()] ^= static_cast<std::uint8_t>(1 + random() % 255);
      try {
        decoder.decode(damaged, 3000, tags.front().time, end, out.data(), specials);
        for (std::size_t i = 0; i < out.size(); ++i) {
          REQUIRE(out[i].time >= tags.front().time);
          REQUIRE(out[i].time < end);
          if (i > 0) REQUIRE(out[i].time >= out[i - 1].time);
          REQUIRE(static_cast<int>(out[i].type) <= 4);
        }
      } catch (const DataError&) {
      }
    }
  }
  SECTION("a block whose tags leave its interval") {
    CHECK_THROWS_AS(
        decoder.decode(payload, 3000, tags.front().time, tags.back().time, out.data(), specials),
        DataError);
  }
}

TEST_CASE("packer: a block the readers would refuse is not packed", "[tagfile]") {
  BlockPacker packer(Compression::None);
  EncodedBlock out;
  const std::vector<Tag> tags = {makeTimeTag(1, 5), makeTimeTag(1, 15)};
  CHECK_THROWS_WITH(packer.pack(tags, 10, 20, out),
                    Catch::Contains("[10, 20) ps does not hold its tags (from 5 to 15 ps)"));
  CHECK_THROWS_WITH(packer.pack(tags, 0, 15, out), Catch::Contains("does not hold its tags"));
  CHECK_THROWS_WITH(packer.pack({}, 20, 10, out),
                    Catch::Contains("[20, 10) ps is invalid (valid: -2^62 <= begin <= end"));
  CHECK_THROWS_AS(packer.pack({}, 0, kStreamTimeLimit + 2, out), DataError);
  packer.pack(tags, 5, 16, out);
  CHECK(out.header.tag_count == 2);
}
