// MemorySource: serves a time-ordered tag vector held in memory as blocks that point into
// it (no copy), for benchmarks and tests that replay one stream many times. The stream spans
// [begin_time, end_time); by default from the first tag to just after the last one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow {

class MemorySource : public Source {
 public:
  // Throws DataError naming the first unsorted tag or the first tag outside the interval.
  MemorySource(std::shared_ptr<const std::vector<Tag>> tags, std::size_t block_size,
               timestamp_t begin_time, timestamp_t end_time);
  MemorySource(std::shared_ptr<const std::vector<Tag>> tags, std::size_t block_size);

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return 0; }  // blocks point into the vector
  std::string describe() const override;
  std::optional<StreamSpan> timeSpan() override;
  // Starts the stream at `time` itself (the first block begins there).
  bool seekTo(timestamp_t time) override;
  bool startsInOverflow() const override;

  // Serves the stream again from its start.
  void rewind();

 private:
  std::shared_ptr<const std::vector<Tag>> tags_;
  std::vector<std::uint32_t> special_;  // indices of non-TimeTag tags in the whole vector
  std::size_t block_size_;
  timestamp_t begin_time_;
  timestamp_t end_time_;
  std::size_t position_ = 0;
  timestamp_t next_begin_ = 0;
};

}  // namespace tagflow
