// ConstantFractionDiscriminator against its brute-force reference on random streams of rising
// and falling edges; by hand: pulses longer than the search window and pulses interrupted by a
// second rising edge are skipped, an open pulse is dropped at an overflow and at an Error, and a
// mean time before the start of the block where the pulse ends is placed at that block's start.
#include <catch2/catch.hpp>

#include <memory>

#include "reference_check.hpp"
#include "tagflow/channels/constant_fraction_discriminator.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

ChannelUnderTest cfd(std::vector<channel_t> channels, timestamp_t search_window) {
  std::string label = "ConstantFractionDiscriminator(";
  for (channel_t channel : channels) label += std::to_string(channel) + " ";
  return {label + ", " + std::to_string(search_window) + ")",
          [=](const std::string& name) {
            return std::make_unique<ConstantFractionDiscriminator>(name, channels, search_window);
          },
          [=](const std::vector<Tag>& stream, const std::vector<channel_t>& outputs) {
            REQUIRE(outputs.size() == channels.size());
            return cfdReference(stream, channels, search_window, outputs.at(0));
          }};
}

StreamShape bothEdges() {
  StreamShape shape;
  shape.channels = {1, -1, 2, -2, 3, -3, 4, -4};
  return shape;
}

std::vector<Tag> cfdOutput(const std::vector<DrainedBlock>& blocks) {
  return outputsOf(recordOne(blocks, [](const std::string& name) {
    return std::make_unique<ConstantFractionDiscriminator>(name, std::vector<channel_t>{1, 2},
                                                           1'000);
  }));
}

}  // namespace

TEST_CASE("ConstantFractionDiscriminator matches its brute-force reference", "[channels][cfd]") {
  for (std::uint64_t seed : {41, 42, 43}) {
    INFO("seed " << seed);
    const auto totals = checkAgainstReferences(
        randomStream(seed, bothEdges()),
        {cfd({1}, 500), cfd({1, 2, 3}, 200), cfd({4, 2}, 1'000'000), cfd({3}, 1)});
    CHECK(totals.time_tags > 500);
  }
}

// Without overflows or errors every block takes the one-pass path, long blocks too (the streams
// above put a special tag into most blocks of 1000, which then take the general path).
TEST_CASE("ConstantFractionDiscriminator matches its reference on long blocks of time tags",
          "[channels][cfd]") {
  StreamShape shape = bothEdges();
  shape.channels = {1, -1, 1, -1, 2, -2, 5};
  shape.time_tags = 6000;
  shape.overflow_probability = 0;
  shape.error_probability = 0;
  for (std::uint64_t seed : {51, 52}) {
    INFO("seed " << seed);
    const auto totals = checkAgainstReferences(randomStream(seed, shape),
                                               {cfd({1}, 800), cfd({1, 2}, 800), cfd({2}, 1)});
    CHECK(totals.time_tags > 2000);
  }
}

TEST_CASE(
    "ConstantFractionDiscriminator pairs edges, skips long or interrupted pulses and "
    "drops open pulses at an overflow and at an Error",
    "[channels][cfd][overflow]") {
  const TestStream stream{
      {makeTimeTag(1, 100), makeTimeTag(-1, 301),     // 200
       makeTimeTag(1, 400), makeTimeTag(-1, 1'500),   // too long
       makeTimeTag(2, 1'600), makeTimeTag(2, 1'700),  // second rising
       makeTimeTag(-2, 1'900),                        // 1800
       makeTimeTag(1, 2'000), Tag{TagType::OverflowBegin, 0, 0, 0, 2'100},
       Tag{TagType::OverflowEnd, 0, 0, 0, 2'200}, makeTimeTag(-1, 2'300),  // open pulse dropped
       makeTimeTag(2, 2'400), Tag{TagType::Error, 0, 0, 0, 2'500},
       makeTimeTag(-2, 2'600),                          // dropped
       makeTimeTag(-1, 2'700),                          // no rising edge
       makeTimeTag(2, 3'000), makeTimeTag(-2, 3'000)},  // 3000
      0,
      4'000};
  const std::vector<Tag> expected{makeTimeTag(1000, 200), makeTimeTag(1001, 1'800),
                                  makeTimeTag(1001, 3'000)};
  CHECK(cfdOutput(oneBlock(stream)) == expected);
  CHECK(cfdOutput(cutAt(stream, {350, 1'550, 2'050, 2'550})) == expected);
  // A boundary inside the first pulse: its mean time 200 lies before the block of its falling
  // edge, which starts at 250.
  const std::vector<Tag> clamped{makeTimeTag(1000, 250), makeTimeTag(1001, 1'800),
                                 makeTimeTag(1001, 3'000)};
  CHECK(cfdOutput(cutAt(stream, {250})) == clamped);
}
