#include "tagflow/measurements/tag_stream.hpp"

#include <algorithm>

namespace tagflow {

namespace {

constexpr std::int64_t kMaxTags = std::int64_t{1} << 30;

}  // namespace

const ParameterSchema& TagStream::schema() {
  static const ParameterSchema schema(
      "TagStream",
      "the tags of the channels (and overflow, missed-events, error tags) since the "
      "last getData(), for code of the user's own",
      {ParameterSpec::channels("channels").help("channels whose tags are passed on"),
       ParameterSpec::integer("max_tags")
           .atLeast(1)
           .atMost(static_cast<double>(kMaxTags))
           .byDefault(std::int64_t{1} << 20)
           .help("most tags held between two getData() calls; later ones are dropped")});
  return schema;
}

TagStream::TagStream(std::string name, std::vector<channel_t> channels, std::int64_t max_tags)
    : Measurement(
          schema(), std::move(name),
          Parameters{{"channels", std::vector<std::int64_t>(channels.begin(), channels.end())},
                     {"max_tags", max_tags}}),
      index_(channels, "TagStream '" + this->name() + "'"),
      max_tags_(static_cast<std::size_t>(max_tags)) {}

void TagStream::processTimeTags(std::span<const Tag> tags) {
  const std::size_t room = max_tags_ - size_;
  // Every tag is written, only those of the channels advance the end: no misprediction on an
  // unpredictable channel test. The buffer grows to hold the candidates of one run.
  if (buffer_.size() < size_ + std::min(tags.size(), room) + 1) {
    buffer_.resize(size_ + std::min(tags.size(), room) + 1);
  }
  const auto lookup = index_.lookup();
  const std::uint32_t discard = index_.discardSlot();
  Tag* const out = buffer_.data();
  std::size_t at = size_;
  std::size_t i = 0;
  for (; i < tags.size() && at < max_tags_; ++i) {
    out[at] = tags[i];
    at += lookup(tags[i].channel) != discard ? 1 : 0;
  }
  size_ = at;
  for (; i < tags.size(); ++i) dropped_ += lookup(tags[i].channel) != discard ? 1 : 0;
}

void TagStream::appendOne(const Tag& tag) {
  if (size_ == max_tags_) {
    ++dropped_;
    return;
  }
  if (buffer_.size() <= size_) buffer_.resize(size_ + 1);
  buffer_[size_++] = tag;
}

std::vector<Tag> TagStream::getData() {
  auto lock = lockData();
  std::vector<Tag> taken(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(size_));
  size_ = 0;
  return taken;
}

std::uint64_t TagStream::getDropped() const {
  auto lock = lockData();
  return dropped_;
}

void TagStream::clearData() {
  size_ = 0;
  dropped_ = 0;
}

void TagStream::collectResults(ResultSet& out) const {
  out.facts.set("buffered_tags", static_cast<std::int64_t>(size_));
  out.facts.set("dropped_tags", static_cast<std::int64_t>(dropped_));
}

}  // namespace tagflow
