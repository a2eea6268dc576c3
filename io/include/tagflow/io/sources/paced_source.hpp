// PacedSource: hands out another source's blocks no faster than their stream time, scaled by
// `speed` (1.0: real time, 2.0: twice as fast). A block is released once the wall clock has
// reached its end time, counted from the first block; a source slower than the pace is not
// held back further. For live views and demos of generated or recorded streams.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
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
  // Ends the waiting: from now on blocks are handed out unpaced, and the inner source is asked
  // to stop too.
  void requestStop() override;

  const Source& inner() const { return *inner_; }
  double speed() const { return speed_; }

 private:
  std::unique_ptr<Source> inner_;
  double speed_;
  bool started_ = false;
  timestamp_t stream_anchor_ = 0;
  std::chrono::steady_clock::time_point wall_anchor_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;  // guarded by mutex_
};

}  // namespace tagflow
