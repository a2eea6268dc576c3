#include "tagflow/measurements/channel_times.hpp"

#include "tagflow/core/channel_split.hpp"

namespace tagflow {

ChannelTimes::ChannelTimes(std::span<const channel_t> channels, std::string_view owner)
    : index_(channels, owner),
      buffers_(index_.size() + 1),
      counts_(index_.size() + 1, 0),
      write_(index_.size() + 1, nullptr),
      views_(index_.size()) {
  // The discard slot is written on every unwanted tag and never advances: one element.
  buffers_.back().resize(1);
}

void ChannelTimes::reserve(std::size_t tags) {
  // Spare elements: a write position may sit one past the last kept time, and the split of
  // a few channels stores whole vectors.
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

}  // namespace

void ChannelTimes::gather(std::span<const Tag> tags) {
  reserve(tags.size());
  const std::size_t wanted = index_.size();
  if (wanted <= kMaxSplitChannels) {
    // A few channels: four tags at a time in vector registers.
    for (std::size_t slot = 0; slot < wanted; ++slot) write_[slot] = buffers_[slot].data();
    splitTimes(tags, index_.channels(), write_.data(), counts_.data());
  } else {
    // More channels: one table look-up per tag; unwanted tags go to the discard slot, whose
    // write position never advances.
    for (std::size_t slot = 0; slot <= wanted; ++slot) write_[slot] = buffers_[slot].data();
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
  for (std::size_t slot = 0; slot < wanted; ++slot) {
    views_[slot] = {buffers_[slot].data(), counts_[slot]};
  }
}

}  // namespace tagflow
