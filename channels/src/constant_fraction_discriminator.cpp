#include "tagflow/channels/constant_fraction_discriminator.hpp"

#include <algorithm>
#include <set>

#include "fast_path/inline_writer.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

using namespace fast_path;

namespace {

std::vector<channel_t> bothEdges(const std::vector<channel_t>& channels) {
  std::vector<channel_t> edges;
  for (channel_t channel : channels) {
    edges.push_back(channel);
    edges.push_back(-channel);
  }
  return edges;
}

std::vector<channel_t> checkedChannels(std::vector<channel_t> channels, const std::string& label) {
  for (channel_t channel : channels) {
    if (channel <= 0) {
      throw InvalidArgument(label + ": channel " + std::to_string(channel) +
                            " is invalid (valid: rising-edge channels > 0; the falling edge "
                            "-channel is paired with it)");
    }
  }
  std::set<channel_t> seen;
  for (channel_t channel : channels) {
    if (!seen.insert(channel).second) {
      throw InvalidArgument(label + ": channel " + std::to_string(channel) +
                            " is listed twice (valid: distinct channels)");
    }
  }
  return channels;
}

}  // namespace

const ParameterSchema& ConstantFractionDiscriminator::schema() {
  static const ParameterSchema schema(
      "ConstantFractionDiscriminator",
      "mean time of each pulse's rising and falling edge, one output per channel",
      {ParameterSpec::channels("channels")
           .atLeast(1)
           .sizeBetween(1, SIZE_MAX)
           .help("rising-edge channels; their falling edges (-channel) must be in the stream"),
       ParameterSpec::integer("search_window").unit("ps").atLeast(1).help("longest pulse")});
  return schema;
}

ConstantFractionDiscriminator::ConstantFractionDiscriminator(std::string name,
                                                             std::vector<channel_t> channels,
                                                             timestamp_t search_window)
    : VirtualChannel(
          schema(), std::move(name),
          Parameters{{"channels", std::vector<std::int64_t>(channels.begin(), channels.end())},
                     {"search_window", search_window}},
          channels.size()),
      channels_(checkedChannels(std::move(channels),
                                "ConstantFractionDiscriminator '" + this->name() + "'")),
      search_window_(search_window),
      edges_(bothEdges(channels_), "ConstantFractionDiscriminator '" + this->name() + "'"),
      starts_(channels_.size() + 1, kClosed) {}

std::vector<channel_t> ConstantFractionDiscriminator::inputChannels() const {
  return edges_.channels();
}

bool ConstantFractionDiscriminator::endsPulse(std::uint32_t slot, timestamp_t time,
                                              timestamp_t& mean) {
  timestamp_t& start = starts_[slot / 2];
  if (slot % 2 == 0) {
    start = time;
    return false;
  }
  if (start == kClosed) return false;
  const timestamp_t width = time - start;
  mean = start + width / 2;
  start = kClosed;
  return width <= search_window_;
}

void ConstantFractionDiscriminator::consume(std::span<const Tag> time_tags,
                                            std::vector<Tag>& emitted) {
  if (selected_.size() < time_tags.size()) selected_.resize(time_tags.size());
  const std::size_t count = edges_.select(time_tags, selected_.data());
  for (std::size_t k = 0; k < count; ++k) {
    const auto [slot, time] = selected_[k];
    timestamp_t mean = 0;
    if (endsPulse(slot, time, mean)) {
      emitted.push_back(Tag{TagType::TimeTag, 0, 0, outputChannel(slot / 2), mean});
    }
  }
}

namespace {

// The edges of one channel: a tag's edge is its channel's code, compared with the rising and
// the falling code by the conditional move itself (two instructions where a flag first made
// and then tested takes five). The pulse start lives in a register through the block.
struct OneChannelEdges {
  std::uint32_t rising;
  std::uint32_t falling;
  timestamp_t start;

  std::uint32_t edgeOf(channel_t channel) const { return static_cast<std::uint32_t>(channel); }
  std::uint32_t inputOf(std::uint32_t) const { return 0; }
  timestamp_t& startOf(std::uint32_t) { return start; }
  template <class T>
  T ifRising(std::uint32_t code, T yes, T no) const {
    return moveIfEqual(code, rising, yes, no);
  }
  template <class T>
  T ifFalling(std::uint32_t code, T yes, T no) const {
    return moveIfEqual(code, falling, yes, no);
  }
};

// The edges of several channels through the index: slot 2i is the rising edge of input i,
// 2i + 1 its falling edge, the discard slot (even) neither.
struct IndexedEdges {
  struct Edge {
    std::uint32_t input;
    std::uint64_t rising;
    std::uint64_t falling;
  };
  ChannelIndex::Lookup slot_of;
  std::uint32_t discard;
  timestamp_t* starts;

  Edge edgeOf(channel_t channel) const {
    const std::uint32_t slot = slot_of(channel);
    const std::uint64_t falling = slot & 1;
    return Edge{slot >> 1, (falling ^ 1) & (flagIfEqual(slot, discard) ^ 1), falling};
  }
  std::uint32_t inputOf(const Edge& edge) const { return edge.input; }
  timestamp_t& startOf(const Edge& edge) { return starts[edge.input]; }
  template <class T>
  T ifRising(const Edge& edge, T yes, T no) const {
    return moveIfFlag(edge.rising, yes, no);
  }
  template <class T>
  T ifFalling(const Edge& edge, T yes, T no) const {
    return moveIfFlag(edge.falling, yes, no);
  }
};

}  // namespace

// One pass, branch-free in the common case: at every tag the candidate mean time of a pulse
// ending there is stored, then the tag itself, after the candidate when the tag does end a
// pulse and over it otherwise. A mean belongs before the falling edge and after every earlier
// tag at or before its time; only when an earlier tag is later than the mean (a tag inside the
// pulse, or the pulse begun before the block) or the mean is not before the edge (a pulse of
// zero width) does a branch put it in place by hand. A closed pulse starts at kClosed, so the
// window test alone says whether a falling edge ends one, and the pulse's state is one time
// carried from tag to tag through two conditional moves. `edges` (OneChannelEdges or
// IndexedEdges) says which input a tag belongs to, holds the inputs' pulse starts, and chooses
// by whether the tag is a rising or a falling edge (neither for other channels, whose start,
// anything, they leave unchanged).
template <class Edges>
Tag* ConstantFractionDiscriminator::transcribeWith(const TagBlock& block, Tag* out, Edges& edges) {
  const channel_t first_output = outputChannel(0);
  const auto window = static_cast<std::uint64_t>(search_window_);
  // The width given to an edge that is not falling: beyond any window.
  constexpr std::uint64_t kNotEnding = std::numeric_limits<std::uint64_t>::max();
  Tag* const begin = out;
  MisplacedRuns misplaced;
  // Unsigned: the time of the last tag out; a mean before it is moved.
  auto previous = static_cast<std::uint64_t>(block.begin_time);
  for (const Tag& tag : block.tags) {
    prefetchAhead(&tag);
    // Read before anything is stored (see InlineWriter).
    const TagRegister copied = TagRegister::load(&tag);
    const auto time = static_cast<std::uint64_t>(tag.time);
    const auto edge = edges.edgeOf(tag.channel);
    timestamp_t& start = edges.startOf(edge);
    // Unsigned, so a closed pulse's huge width wraps instead of overflowing.
    const std::uint64_t width = time - static_cast<std::uint64_t>(start);
    const std::uint64_t mean = static_cast<std::uint64_t>(start) + (width >> 1);
    const std::uint64_t ends = opaqueFlag(edges.ifFalling(edge, width, kNotEnding) <= window);
    start = edges.ifFalling(edge, kClosed, edges.ifRising(edge, tag.time, start));
    const channel_t output = first_output + static_cast<channel_t>(edges.inputOf(edge));
    // In place when previous <= mean < time, one unsigned comparison.
    const std::uint64_t in_place = opaqueFlag(mean - previous < time - previous);
    if ((ends & ~in_place) != 0) [[unlikely]] {
      // See the class comment for the block's start.
      const timestamp_t placed = std::max(static_cast<timestamp_t>(mean), block.begin_time);
      copied.store(out++);
      out = insertByTime(begin, out, Tag{TagType::TimeTag, 0, 0, output, placed});
      previous = static_cast<std::uint64_t>(out[-1].time);
      if (placed == tag.time) misplaced.note(placed);  // input tags of this time may follow
      continue;
    }
    storeTimeTag(out, timeTagHeader(output), static_cast<timestamp_t>(mean));
    out += ends;
    copied.store(out++);
    previous = time;
  }
  misplaced.repair(begin, out, first_output, channels_.size());
  return out;
}

Tag* ConstantFractionDiscriminator::transcribe(const TagBlock& block, Tag* out) {
  if (channels_.size() == 1) {
    OneChannelEdges edges{static_cast<std::uint32_t>(channels_[0]),
                          static_cast<std::uint32_t>(-channels_[0]), starts_[0]};
    Tag* const end = transcribeWith(block, out, edges);
    starts_[0] = edges.start;
    return end;
  }
  IndexedEdges edges{edges_.lookup(), edges_.discardSlot(), starts_.data()};
  return transcribeWith(block, out, edges);
}

void ConstantFractionDiscriminator::forgetHistory() {
  std::fill(starts_.begin(), starts_.end(), kClosed);
}

}  // namespace tagflow
