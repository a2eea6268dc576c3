// Random tag streams for the tag file tests, with every feature a recording must keep:
// several channels (negative ones too), bursts and huge gaps, runs of equal times, overflow
// intervals with missed-event counts, error tags, and odd reserved bytes, built with the
// standard library only; and blocks of them written as the records of a tag file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "support/generators.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow::test {

inline std::vector<Tag> featureStream(std::uint64_t seed, std::size_t count,
                                      const std::vector<channel_t>& channels,
                                      timestamp_t start = 0) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::size_t> pick(0, channels.size() - 1);
  std::uniform_int_distribution<int> roll(0, 999);
  std::exponential_distribution<double> gap(1.0 / 14000.0);
  std::vector<Tag> tags;
  timestamp_t time = start;
  for (std::size_t i = 0; i < count; ++i) {
    const int r = roll(random);
    if (r < 2) {
      time += timestamp_t{1} << (30 + roll(random) % 25);  // a huge gap, up to 2^54 ps
    } else if (r < 100) {
      // equal time: no step
    } else {
      time += static_cast<timestamp_t>(gap(random));
    }
    Tag tag = makeTimeTag(channels[pick(random)], time);
    if (r >= 990) {
      tag.type = static_cast<TagType>(1 + roll(random) % 4);
      tag.missed_events = static_cast<std::uint16_t>(random());
      tag.channel = static_cast<channel_t>(random());
    }
    if (r == 500) tag.reserved = static_cast<std::uint8_t>(1 + roll(random) % 255);
    tags.push_back(tag);
  }
  return tags;
}

// Splits `tags` into blocks of random sizes (some empty), each [begin, end) with end just
// past its last tag or later, tiling time.
struct TestBlock {
  timestamp_t begin = 0;
  timestamp_t end = 0;
  std::vector<Tag> tags;
};

inline std::vector<TestBlock> randomBlocks(std::uint64_t seed, const std::vector<Tag>& tags,
                                           std::size_t max_tags) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::size_t> size(0, max_tags);
  std::vector<TestBlock> blocks;
  timestamp_t begin = tags.empty() ? 0 : tags.front().time;
  std::size_t at = 0;
  while (at < tags.size()) {
    std::size_t take = std::min(size(random), tags.size() - at);
    // Never split tags of one time between blocks.
    while (at + take < tags.size() && take > 0 &&
           tags[at + take - 1].time == tags[at + take].time) {
      ++take;
    }
    TestBlock block;
    block.begin = begin;
    block.tags.assign(tags.begin() + static_cast<std::ptrdiff_t>(at),
                      tags.begin() + static_cast<std::ptrdiff_t>(at + take));
    at += take;
    block.end = at < tags.size() ? tags[at].time : tags.back().time + 1;
    begin = block.end;
    blocks.push_back(std::move(block));
  }
  return blocks;
}

// Packs each block and writes it as one record.
inline void writeBlocks(TagFileWriter& writer, const std::vector<TestBlock>& blocks,
                        tagfile::Compression compression) {
  BlockPacker packer(compression);
  EncodedBlock encoded;
  for (const auto& block : blocks) {
    packer.pack(block.tags, block.begin, block.end, encoded);
    writer.write(encoded);
  }
}

}  // namespace tagflow::test
