// PacedSource: hands out another source's blocks no faster than their stream time, scaled by
// `speed` (1.0: real time, 2.0: twice as fast). A block is released once the wall clock has
// reached its end time, counted from the first block; a source slower than the pace is not
// held back further. For live views and demos of generated or recorded streams.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow {

class PacedSource final : public Source {
 public:
  // InvalidArgument when speed is not in [0.001, 1e6].
  PacedSource(std::unique_ptr<Source> inner, double speed);

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return inner_->maxBlockTags(); }
  std::vector<channel_t> channels() const override { return inner_->channels(); }
  std::string describe() const override;

  const Source& inner() const { return *inner_; }
  double speed() const { return speed_; }

 private:
  std::unique_ptr<Source> inner_;
  double speed_;
  bool started_ = false;
  timestamp_t stream_anchor_ = 0;
  std::chrono::steady_clock::time_point wall_anchor_;
};

}  // namespace tagflow
