#include "tagflow/channels/constant_fraction_discriminator.hpp"

#include <algorithm>
#include <set>

#include "tagflow/core/branch_free.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

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
  if (channels.empty()) throw InvalidArgument(label + ": channels is empty (valid: one or more)");
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

ConstantFractionDiscriminator::ConstantFractionDiscriminator(std::string name,
                                                             std::vector<channel_t> channels,
                                                             timestamp_t search_window)
    : VirtualChannel(
          "ConstantFractionDiscriminator", std::move(name),
          Parameters{{"channels", std::vector<std::int64_t>(channels.begin(), channels.end())},
                     {"search_window", search_window}},
          channels.size()),
      channels_(checkedChannels(std::move(channels),
                                "ConstantFractionDiscriminator '" + this->name() + "'")),
      search_window_(search_window),
      edges_(bothEdges(channels_), "ConstantFractionDiscriminator '" + this->name() + "'"),
      starts_(channels_.size() + 1, kClosed) {
  const std::string label = "ConstantFractionDiscriminator '" + this->name() + "'";
  if (search_window <= 0) {
    throw InvalidArgument(label + ": search_window " + std::to_string(search_window) +
                          " ps is invalid (valid: > 0)");
  }
}

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

// One pass, branch-free in the common case: at every tag the candidate mean time of a pulse
// ending there is stored, then the tag itself, after the candidate when the tag does end a
// pulse and over it otherwise. A mean belongs before the falling edge and after every earlier
// tag at or before its time; only when an earlier tag is later than the mean (a tag inside the
// pulse, or the pulse begun before the block) or the mean is not before the edge (a pulse of
// zero width) does a branch put it in place by hand. A closed pulse starts at kClosed, so the
// window test alone says whether a falling edge ends one, and the pulse's state is one time
// carried from tag to tag through two conditional moves. `edge_of(channel)` says which input
// the tag belongs to and whether it is its rising or falling edge (neither for other channels);
// `start_of(i)` is the pulse start of input i, anything for other channels (they change
// nothing).
template <class EdgeOf, class StartOf>
Tag* ConstantFractionDiscriminator::transcribeWith(const TagBlock& block, Tag* out, EdgeOf edge_of,
                                                   StartOf start_of) {
  const channel_t first_output = outputChannel(0);
  const auto window = static_cast<std::uint64_t>(search_window_);
  Tag* const begin = out;
  MisplacedRuns misplaced;
  // Unsigned: the time of the last tag out; a mean before it is moved.
  auto previous = static_cast<std::uint64_t>(block.begin_time);
  for (const Tag& tag : block.tags) {
    prefetchAhead(&tag);
    const auto time = static_cast<std::uint64_t>(tag.time);
    const Edge edge = edge_of(tag.channel);
    timestamp_t& start = start_of(edge.input);
    // Unsigned, so a closed pulse's huge width wraps instead of overflowing.
    const std::uint64_t width = time - static_cast<std::uint64_t>(start);
    const std::uint64_t mean = static_cast<std::uint64_t>(start) + (width >> 1);
    const std::uint64_t ends = edge.falling & opaqueFlag(width <= window);
    start = moveIfFlag(edge.falling, kClosed, moveIfFlag(edge.rising, tag.time, start));
    const channel_t output = first_output + static_cast<channel_t>(edge.input);
    // In place when previous <= mean < time, one unsigned comparison.
    const std::uint64_t in_place = opaqueFlag(mean - previous < time - previous);
    if ((ends & ~in_place) != 0) [[unlikely]] {
      // See the class comment for the block's start.
      const timestamp_t placed = std::max(static_cast<timestamp_t>(mean), block.begin_time);
      *out++ = tag;
      out = insertByTime(begin, out, Tag{TagType::TimeTag, 0, 0, output, placed});
      previous = static_cast<std::uint64_t>(out[-1].time);
      if (placed == tag.time) misplaced.note(placed);  // input tags of this time may follow
      continue;
    }
    storeTimeTag(out, timeTagHeader(output), static_cast<timestamp_t>(mean));
    out += ends;
    *out++ = tag;
    previous = time;
  }
  misplaced.repair(begin, out, first_output, channels_.size());
  return out;
}

// One input compares channels directly and keeps its pulse start in a register; several look their
// edges up and index their pulse starts.
Tag* ConstantFractionDiscriminator::transcribe(const TagBlock& block, Tag* out) {
  if (channels_.size() == 1) {
    const auto rising = static_cast<std::uint32_t>(channels_[0]);
    const auto falling = static_cast<std::uint32_t>(-channels_[0]);
    timestamp_t start = starts_[0];
    Tag* const end = transcribeWith(
        block, out,
        [=](channel_t channel) {
          const auto code = static_cast<std::uint32_t>(channel);
          return Edge{0, flagIfEqual(code, rising), flagIfEqual(code, falling)};
        },
        [&](std::uint32_t) -> timestamp_t& { return start; });
    starts_[0] = start;
    return end;
  }
  const ChannelIndex::Lookup slot_of = edges_.lookup();
  const auto discard = static_cast<std::uint32_t>(edges_.discardSlot());
  timestamp_t* const starts = starts_.data();
  return transcribeWith(
      block, out,
      [=](channel_t channel) {
        const std::uint32_t slot = slot_of(channel);
        const std::uint64_t falling = slot & 1;  // the discard slot 2n is even
        return Edge{slot >> 1, (falling ^ 1) & (flagIfEqual(slot, discard) ^ 1), falling};
      },
      [starts](std::uint32_t i) -> timestamp_t& { return starts[i]; });
}

void ConstantFractionDiscriminator::forgetHistory() {
  std::fill(starts_.begin(), starts_.end(), kClosed);
}

}  // namespace tagflow
