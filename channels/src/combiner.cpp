#include "tagflow/channels/combiner.hpp"

#include "fast_path/inline_writer.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

using namespace fast_path;

const ParameterSchema& Combiner::schema() {
  static const ParameterSchema schema(
      "Combiner", "the logical OR of channels: one tag per input tag",
      {ParameterSpec::channels("channels").sizeBetween(1, SIZE_MAX).help("channels to merge")});
  return schema;
}

Combiner::Combiner(std::string name, std::vector<channel_t> channels)
    : VirtualChannel(
          schema(), name,
          Parameters{{"channels", std::vector<std::int64_t>(channels.begin(), channels.end())}}),
      index_(std::move(channels), "Combiner '" + name + "'"),
      counts_(index_.size() + 1, 0) {}

void Combiner::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  const std::uint32_t discard = index_.discardSlot();
  if (candidates_.size() < time_tags.size()) candidates_.resize(time_tags.size());
  timestamp_t* out = candidates_.data();
  std::size_t end = 0;
  std::lock_guard lock(counts_mutex_);
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    const std::uint32_t slot = index_.slot(tag.channel);
    ++counts_[slot];
    out[end] = tag.time;
    end += slot != discard ? 1 : 0;
  }
  for (std::size_t i = 0; i < end; ++i) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, out[i]});
  }
}

Tag* Combiner::transcribe(const TagBlock& block, Tag* out) {
  const channel_t output = outputChannel();
  InlineWriter writer(out, output);
  const TagRegister combined = tagTemplate(output);
  const std::uint32_t discard = index_.discardSlot();
  const ChannelIndex::Lookup slot_of = index_.lookup();
  std::uint64_t* const counts = counts_.data();
  std::lock_guard lock(counts_mutex_);
  for (const Tag& tag : block.tags) {
    prefetchAhead(&tag);
    // Read before anything is stored (see InlineWriter).
    const std::uint32_t slot = slot_of(tag.channel);
    writer.copy(tag);
    ++counts[slot];
    writer.generateIf(slot != discard ? 1 : 0, combined);
  }
  return writer.finish();
}

void Combiner::onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) {
  if (index_.slot(tag.channel) == index_.discardSlot()) return;
  emitted.push_back(Tag{TagType::MissedEvents, 0, tag.missed_events, outputChannel(), tag.time});
}

std::vector<std::uint64_t> Combiner::getChannelCounts() const {
  std::lock_guard lock(counts_mutex_);
  return {counts_.begin(), counts_.end() - 1};
}

void Combiner::clearChannelCounts() {
  std::lock_guard lock(counts_mutex_);
  std::fill(counts_.begin(), counts_.end(), 0);
}

}  // namespace tagflow
