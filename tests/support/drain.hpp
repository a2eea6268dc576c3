// Drains a Source into plain vectors (blocks and the whole tag stream) and checks the block
// contract on them: blocks tile time, tags sorted and inside their block. Tests compare
// what measurements report against these vectors.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <limits>
#include <vector>

#include "tagflow/core/source.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/core/tag_block.hpp"

namespace tagflow::test {

struct DrainedBlock {
  timestamp_t begin = 0;
  timestamp_t end = 0;
  std::vector<Tag> tags;
};

struct DrainedStream {
  std::vector<DrainedBlock> blocks;
  std::vector<Tag> tags;  // all blocks' tags, concatenated

  timestamp_t begin() const { return blocks.front().begin; }
  timestamp_t end() const { return blocks.back().end; }
  std::size_t emptyBlocks() const {
    std::size_t empty = 0;
    for (const auto& block : blocks) empty += block.tags.empty() ? 1 : 0;
    return empty;
  }
};

inline DrainedStream drain(Source& source,
                           std::size_t max_blocks = std::numeric_limits<std::size_t>::max()) {
  DrainedStream stream;
  BlockBuffer buffer;
  buffer.storage.reserve(source.maxBlockTags());
  while (stream.blocks.size() < max_blocks && source.next(buffer)) {
    DrainedBlock block{buffer.begin_time, buffer.end_time,
                       std::vector<Tag>(buffer.tags.begin(), buffer.tags.end())};
    // The special index must list exactly the non-TimeTag records.
    std::vector<std::uint32_t> special;
    for (std::size_t i = 0; i < block.tags.size(); ++i) {
      if (block.tags[i].type != TagType::TimeTag) special.push_back(static_cast<std::uint32_t>(i));
    }
    REQUIRE(std::vector<std::uint32_t>(buffer.special.begin(), buffer.special.end()) == special);
    stream.tags.insert(stream.tags.end(), block.tags.begin(), block.tags.end());
    stream.blocks.push_back(std::move(block));
  }
  return stream;
}

// Blocks tile time without gaps, every tag lies in its block, tags never go back in time.
inline void requireWellFormed(const DrainedStream& stream) {
  REQUIRE_FALSE(stream.blocks.empty());
  for (std::size_t b = 0; b < stream.blocks.size(); ++b) {
    const DrainedBlock& block = stream.blocks[b];
    INFO("block " << b << " [" << block.begin << ", " << block.end << ")");
    REQUIRE(block.begin <= block.end);
    if (b > 0) REQUIRE(block.begin == stream.blocks[b - 1].end);
    for (const Tag& tag : block.tags) {
      REQUIRE(tag.time >= block.begin);
      REQUIRE(tag.time < block.end);
    }
  }
  for (std::size_t i = 1; i < stream.tags.size(); ++i) {
    REQUIRE(stream.tags[i - 1].time <= stream.tags[i].time);
  }
}

// Number of blocks whose interval contains `time` strictly inside (not on an edge).
inline std::size_t blocksStraddling(const DrainedStream& stream, timestamp_t time) {
  std::size_t count = 0;
  for (const auto& block : stream.blocks) count += block.begin < time && time < block.end ? 1 : 0;
  return count;
}

}  // namespace tagflow::test
