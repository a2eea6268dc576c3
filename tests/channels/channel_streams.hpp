// Streams and runs for the virtual-channel tests, built with the standard library only: random
// time-ordered streams with equal timestamps, overflow intervals (OverflowBegin, MissedEvents,
// OverflowEnd, no time tags inside) and Error tags; a cutter into blocks of a fixed number of
// tags (with some empty blocks); and a graph run that hangs one Recorder below each virtual
// channel and returns what each recorder saw.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "recorder.hpp"
#include "support/drain.hpp"
#include "support/sources.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow::test {

struct StreamShape {
  std::size_t time_tags = 3000;
  std::vector<channel_t> channels{1, 2, 3, 4};
  double mean_gap_ps = 200;
  double equal_time_probability = 0.15;  // the next tag shares the previous tag's time
  double overflow_probability = 0.002;   // per tag: an overflow interval starts here
  double error_probability = 0.001;      // per tag: an Error tag here
  timestamp_t longest_overflow_ps = 20'000;
};

struct TestStream {
  std::vector<Tag> tags;
  timestamp_t begin = 0;
  timestamp_t end = 0;
};

// Time tags on random channels; a time tag may share the time of the one before it (any
// channel, the same one included). Overflow intervals hold no time tags: OverflowBegin at
// their start, MissedEvents for random channels at random times inside, OverflowEnd at the end.
inline TestStream randomStream(std::uint64_t seed, const StreamShape& shape = {}) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::uniform_int_distribution<std::size_t> pick(0, shape.channels.size() - 1);
  TestStream stream;
  stream.begin = 0;
  timestamp_t time = 1'000;
  std::size_t time_tags = 0;
  while (time_tags < shape.time_tags) {
    const double draw = uniform(random);
    if (draw < shape.overflow_probability) {
      std::uniform_int_distribution<timestamp_t> length(1, shape.longest_overflow_ps);
      const timestamp_t end = time + length(random);
      stream.tags.push_back(Tag{TagType::OverflowBegin, 0, 0, 0, time});
      std::vector<timestamp_t> missed_times;
      for (int k = static_cast<int>(uniform(random) * 4); k > 0; --k) {
        missed_times.push_back(std::uniform_int_distribution<timestamp_t>(time, end)(random));
      }
      std::sort(missed_times.begin(), missed_times.end());
      for (timestamp_t missed : missed_times) {
        const auto count = static_cast<std::uint16_t>(1 + uniform(random) * 500);
        stream.tags.push_back(
            Tag{TagType::MissedEvents, 0, count, shape.channels[pick(random)], missed});
      }
      stream.tags.push_back(Tag{TagType::OverflowEnd, 0, 0, 0, end});
      time = end;
    } else if (draw < shape.overflow_probability + shape.error_probability) {
      stream.tags.push_back(Tag{TagType::Error, 0, 0, 0, time});
    } else {
      stream.tags.push_back(makeTimeTag(shape.channels[pick(random)], time));
      ++time_tags;
    }
    if (uniform(random) >= shape.equal_time_probability) {
      const double gap = -shape.mean_gap_ps * std::log(1.0 - uniform(random));
      time += 1 + static_cast<timestamp_t>(gap);
    }
  }
  stream.end = time + 1 + static_cast<timestamp_t>(uniform(random) * 50'000);
  return stream;
}

// Blocks of at most `tags_per_block` tags (more only when that many share one time), tiling
// [begin, end). Boundaries fall alternately on the next tag's time and just after the last tag;
// every third boundary with room for it adds an empty block in the gap.
inline std::vector<DrainedBlock> cutEvery(const TestStream& stream, std::size_t tags_per_block) {
  const auto& tags = stream.tags;
  std::vector<DrainedBlock> blocks;
  timestamp_t block_begin = stream.begin;
  std::size_t from = 0;
  std::size_t boundaries = 0;
  while (from < tags.size()) {
    std::size_t to = std::min(from + tags_per_block, tags.size());
    while (to < tags.size() && to > from && tags[to].time == tags[to - 1].time) --to;
    if (to == from) {
      to = std::min(from + tags_per_block, tags.size());
      while (to < tags.size() && tags[to].time == tags[to - 1].time) ++to;
    }
    DrainedBlock block{block_begin, stream.end,
                       std::vector<Tag>(tags.begin() + static_cast<std::ptrdiff_t>(from),
                                        tags.begin() + static_cast<std::ptrdiff_t>(to))};
    if (to < tags.size()) {
      const timestamp_t last = tags[to - 1].time;
      const timestamp_t next = tags[to].time;
      ++boundaries;
      const bool empty_block = boundaries % 3 == 0 && next - last >= 2;
      block.end = empty_block || boundaries % 2 == 0 ? last + 1 : next;
      blocks.push_back(std::move(block));
      if (empty_block) blocks.push_back(DrainedBlock{last + 1, next, {}});
      block_begin = blocks.back().end;
    } else {
      blocks.push_back(std::move(block));
      block_begin = stream.end;
    }
    from = to;
  }
  if (blocks.empty() || block_begin < stream.end) {
    blocks.push_back(DrainedBlock{block_begin, stream.end, {}});
  }
  return blocks;
}

inline std::vector<DrainedBlock> oneBlock(const TestStream& stream) {
  return {DrainedBlock{stream.begin, stream.end, stream.tags}};
}

// Blocks tiling [begin, end) with boundaries at `cuts` (ascending, inside the stream).
inline std::vector<DrainedBlock> cutAt(const TestStream& stream,
                                       const std::vector<timestamp_t>& cuts) {
  std::vector<DrainedBlock> blocks;
  timestamp_t begin = stream.begin;
  std::size_t next = 0;
  for (std::size_t i = 0; i <= cuts.size(); ++i) {
    DrainedBlock block{begin, i < cuts.size() ? cuts[i] : stream.end, {}};
    while (next < stream.tags.size() && stream.tags[next].time < block.end) {
      block.tags.push_back(stream.tags[next++]);
    }
    begin = block.end;
    blocks.push_back(std::move(block));
  }
  return blocks;
}

// The block sizes every reference comparison runs with (the last: the whole stream).
inline std::vector<std::size_t> blockSizesToTest() {
  return {1, 7, 1000, static_cast<std::size_t>(-1)};
}

inline std::vector<DrainedBlock> blocksOf(const TestStream& stream, std::size_t tags_per_block) {
  return tags_per_block == static_cast<std::size_t>(-1) ? oneBlock(stream)
                                                        : cutEvery(stream, tags_per_block);
}

// What one recorder saw below one virtual channel.
struct Recorded {
  std::vector<channel_t> outputs;  // the channel's output channels, as the node reports them
  std::vector<Tag> seen;           // every tag the recorder was given, in order
  std::vector<Tag> missed_outside_overflow;
  std::string order_error;
};

// Builds a channel under the name it is given.
using ChannelFactory = std::function<std::unique_ptr<VirtualChannel>(const std::string&)>;

// Runs the blocks through a graph of the channels built by `factories` (added in order, named
// "channel 0", "channel 1", ...), each with a Recorder that reads its output channels.
inline std::vector<Recorded> recordChannels(const std::vector<DrainedBlock>& blocks,
                                            const std::vector<ChannelFactory>& factories,
                                            int threads = 2) {
  ScriptedSource source(blocks);
  MeasurementGraph graph(source, GraphOptions{.threads = threads});
  std::vector<std::unique_ptr<VirtualChannel>> channels;
  std::vector<std::unique_ptr<Recorder>> recorders;
  for (const auto& factory : factories) {
    channels.push_back(factory("channel " + std::to_string(channels.size())));
    graph.add(*channels.back());
    recorders.push_back(std::make_unique<Recorder>("recorder " + std::to_string(recorders.size()),
                                                   channels.back()->getChannels()));
    recorders.back()->checkGeneratedAfterInput(channels.back()->getChannels());
    graph.add(*recorders.back());
  }
  graph.run();
  std::vector<Recorded> recorded;
  for (std::size_t i = 0; i < channels.size(); ++i) {
    recorded.push_back(Recorded{channels[i]->getChannels(), recorders[i]->tags(),
                                recorders[i]->missedOutsideOverflow(), recorders[i]->orderError()});
  }
  return recorded;
}

inline Recorded recordOne(const std::vector<DrainedBlock>& blocks, const ChannelFactory& factory) {
  return recordChannels(blocks, {factory}).front();
}

inline bool isOutput(const Tag& tag, const std::vector<channel_t>& outputs) {
  return (tag.type == TagType::TimeTag || tag.type == TagType::MissedEvents) &&
         std::find(outputs.begin(), outputs.end(), tag.channel) != outputs.end();
}

// The tags on the output channels, in a canonical order (channel, time, type, count): the
// tests compare what each output carries, not how equal-time tags of a channel are ordered.
inline std::vector<Tag> canonicalOutput(std::vector<Tag> tags) {
  std::sort(tags.begin(), tags.end(), [](const Tag& a, const Tag& b) {
    if (a.channel != b.channel) return a.channel < b.channel;
    if (a.time != b.time) return a.time < b.time;
    if (a.type != b.type) return a.type < b.type;
    return a.missed_events < b.missed_events;
  });
  return tags;
}

inline std::vector<Tag> outputsOf(const Recorded& recorded) {
  std::vector<Tag> out;
  for (const Tag& tag : recorded.seen) {
    if (isOutput(tag, recorded.outputs)) out.push_back(tag);
  }
  return canonicalOutput(std::move(out));
}

// The recorded stream without the channel's own tags: it must be the input stream, unchanged.
inline std::vector<Tag> passedThrough(const Recorded& recorded) {
  std::vector<Tag> out;
  for (const Tag& tag : recorded.seen) {
    if (!isOutput(tag, recorded.outputs)) out.push_back(tag);
  }
  return out;
}

inline std::string describeTag(const Tag& tag) {
  std::ostringstream text;
  text << tagTypeName(tag.type) << "(channel " << tag.channel << ", " << tag.time << " ps";
  if (tag.type == TagType::MissedEvents) text << ", missed " << tag.missed_events;
  text << ")";
  return text.str();
}

// Empty when equal; otherwise where the two lists first differ.
inline std::string firstDifference(const std::vector<Tag>& actual,
                                   const std::vector<Tag>& expected) {
  const std::size_t common = std::min(actual.size(), expected.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (!(actual[i] == expected[i])) {
      return "at " + std::to_string(i) + ": got " + describeTag(actual[i]) + ", expected " +
             describeTag(expected[i]);
    }
  }
  if (actual.size() != expected.size()) {
    return "sizes differ: got " + std::to_string(actual.size()) + ", expected " +
           std::to_string(expected.size()) + "; first extra: " +
           describeTag(actual.size() > common ? actual[common] : expected[common]);
  }
  return "";
}

}  // namespace tagflow::test
