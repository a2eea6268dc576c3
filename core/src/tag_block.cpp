#include "tagflow/core/tag_block.hpp"

#include <algorithm>

namespace tagflow {

void BlockBuffer::publishStorage() {
  tags = storage;
  indexSpecialTags();
}

void BlockBuffer::indexSpecialTags() {
  special.clear();
  for (std::size_t i = 0; i < tags.size(); ++i) {
    if (tags[i].type != TagType::TimeTag) special.push_back(static_cast<std::uint32_t>(i));
  }
}

std::size_t firstAtOrAfter(std::span<const Tag> tags, timestamp_t time) {
  std::size_t low = 0;  // every tag before `low` is earlier than `time`
  std::size_t step = 1;
  while (low + step <= tags.size() && tags[low + step - 1].time < time) {
    low += step;
    step *= 2;
  }
  const auto first = tags.begin() + static_cast<std::ptrdiff_t>(low);
  const auto last = tags.begin() + static_cast<std::ptrdiff_t>(std::min(tags.size(), low + step));
  return static_cast<std::size_t>(
      std::lower_bound(first, last, time,
                       [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
      tags.begin());
}

std::size_t blockSplitPoint(std::span<const Tag> tags, std::size_t max_tags) {
  if (tags.size() <= max_tags) return tags.size();
  std::size_t count = max_tags;
  while (count > 0 && tags[count - 1].time == tags[count].time) --count;
  if (count > 0) return count;
  count = max_tags;
  while (count < tags.size() && tags[count].time == tags[0].time) ++count;
  return count;
}

}  // namespace tagflow
