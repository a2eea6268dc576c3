#include "tagflow/measurements/channel_times.hpp"

#include <array>

#include "tagflow/measurements/time_window.hpp"

namespace tagflow {

ChannelTimes::ChannelTimes(std::span<const channel_t> channels, std::string_view owner)
    : index_(channels, owner),
      buffers_(index_.size() + 1),
      counts_(index_.size() + 1, 0),
      write_(index_.size() + 1, nullptr) {
  // The discard slot is written on every unwanted tag and never advances: one element.
  buffers_.back().resize(1);
}

void ChannelTimes::reserve(std::size_t tags) {
  // Spare elements: a write position may sit one past the last kept time, and the split of
  // one or two channels stores whole vectors.
  for (std::size_t slot = 0; slot < index_.size(); ++slot) {
    if (buffers_[slot].size() < tags + kSplitSpare) buffers_[slot].resize(tags + kSplitSpare);
  }
}

namespace {

// put(tag) for every tag in order, four tags per prefetch, as the plain scan does (a prefetch
// per tag costs a fifth of the loop).
template <typename Put>
void putPrefetched(std::span<const Tag> tags, Put put) {
  const Tag* tag = tags.data();
  const Tag* const end = tag + tags.size();
  for (; end - tag >= 4; tag += 4) {
    prefetchAhead(tag);
    for (int i = 0; i < 4; ++i) put(tag[i]);
  }
  for (; tag != end; ++tag) put(*tag);
}

// Three or four channels: a compare per channel and tag, write positions in registers.
template <std::size_t N>
void gatherFew(std::span<const Tag> tags, const channel_t* wanted, timestamp_t* const* out,
               std::size_t* counts) {
  std::array<channel_t, N> channel;
  std::array<timestamp_t*, N> write;
  for (std::size_t c = 0; c < N; ++c) {
    channel[c] = wanted[c];
    write[c] = out[c];
  }
  const auto put = [&](const Tag& tag) {
    for (std::size_t c = 0; c < N; ++c) {
      *write[c] = tag.time;
      write[c] += tag.channel == channel[c] ? 1 : 0;
    }
  };
  putPrefetched(tags, put);
  for (std::size_t c = 0; c < N; ++c) counts[c] = static_cast<std::size_t>(write[c] - out[c]);
}

}  // namespace

void ChannelTimes::gather(std::span<const Tag> tags) {
  reserve(tags.size());
  const std::size_t wanted = index_.size();
  for (std::size_t slot = 0; slot <= wanted; ++slot) write_[slot] = buffers_[slot].data();
  const channel_t* channels = index_.channels().data();
  switch (wanted) {
    case 1:
    case 2: {
      // One or two channels: four tags at a time in vector registers.
      const SplitCounts split =
          splitChannelsInto(tags, channels[0], write_[0], wanted == 2 ? channels[1] : channels[0],
                            wanted == 2 ? write_[1] : nullptr);
      counts_[0] = split.a;
      if (wanted == 2) counts_[1] = split.b;
      return;
    }
    case 3:
      return gatherFew<3>(tags, channels, write_.data(), counts_.data());
    case 4:
      return gatherFew<4>(tags, channels, write_.data(), counts_.data());
    default:
      break;
  }
  // More channels: one table look-up per tag; unwanted tags go to the discard slot, whose
  // write position never advances.
  const auto put = [&](const Tag& tag) {
    const std::uint32_t slot = index_.slot(tag.channel);
    *write_[slot] = tag.time;
    write_[slot] += slot < wanted ? 1 : 0;
  };
  putPrefetched(tags, put);
  for (std::size_t slot = 0; slot < wanted; ++slot) {
    counts_[slot] = static_cast<std::size_t>(write_[slot] - buffers_[slot].data());
  }
}

}  // namespace tagflow
