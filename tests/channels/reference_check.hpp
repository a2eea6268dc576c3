// The comparison every virtual-channel test runs: a stream cut into blocks of each size in
// blockSizesToTest() goes through one graph holding several channels, each with its own
// Recorder below it; what each recorder sees on the channel's outputs must equal the
// channel's brute-force reference exactly, and the rest of its stream must be the input,
// unchanged and in order.
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "channel_references.hpp"
#include "channel_streams.hpp"

namespace Catch {
template <>
struct StringMaker<tagflow::Tag> {
  static std::string convert(const tagflow::Tag& tag) { return tagflow::test::describeTag(tag); }
};
}  // namespace Catch

namespace tagflow::test {

struct ChannelUnderTest {
  std::string label;
  ChannelFactory make;
  // The tags owed over the whole stream, given the output channels the node reports.
  std::function<std::vector<Owed>(const std::vector<Tag>& stream,
                                  const std::vector<channel_t>& outputs)>
      reference;
};

struct ReferenceTotals {
  std::size_t time_tags = 0;  // expected TimeTags on outputs, over all block sizes
  std::size_t missed = 0;     // expected MissedEvents on outputs
};

inline ReferenceTotals checkAgainstReferences(const TestStream& stream,
                                              const std::vector<ChannelUnderTest>& cases) {
  std::vector<ChannelFactory> factories;
  for (const auto& c : cases) factories.push_back(c.make);
  ReferenceTotals totals;
  for (std::size_t block_size : blockSizesToTest()) {
    const auto blocks = blocksOf(stream, block_size);
    const auto recorded = recordChannels(blocks, factories);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      INFO(cases[i].label << ", " << blocks.size() << " blocks of up to " << block_size << " tags");
      const auto expected = canonicalOutput(
          realize(cases[i].reference(stream.tags, recorded[i].outputs), stream.tags, blocks));
      const std::string output_difference = firstDifference(outputsOf(recorded[i]), expected);
      CHECK(output_difference == "");
      const std::string input_difference = firstDifference(passedThrough(recorded[i]), stream.tags);
      CHECK(input_difference == "");
      CHECK(recorded[i].order_error == "");
      for (const Tag& tag : expected) {
        totals.time_tags += tag.type == TagType::TimeTag ? 1 : 0;
        totals.missed += tag.type == TagType::MissedEvents ? 1 : 0;
      }
    }
  }
  return totals;
}

}  // namespace tagflow::test
