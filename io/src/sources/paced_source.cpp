#include "tagflow/io/sources/paced_source.hpp"

#include <fmt/format.h>

#include "tagflow/core/error.hpp"

namespace tagflow {

PacedSource::PacedSource(std::unique_ptr<Source> inner, double speed)
    : inner_(std::move(inner)), speed_(speed) {
  if (!(speed >= 1e-3 && speed <= 1e6)) {
    throw InvalidArgument(
        fmt::format("speed {} is invalid (valid: 0.001 to 1e6, 1.0 is real time)", speed));
  }
}

bool PacedSource::next(BlockBuffer& out) {
  if (!inner_->next(out)) return false;
  if (!started_) {
    started_ = true;
    stream_anchor_ = out.begin_time;
    wall_anchor_ = std::chrono::steady_clock::now();
  }
  const double seconds = static_cast<double>(out.end_time - stream_anchor_) * 1e-12 / speed_;
  const auto due = wall_anchor_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(seconds));
  std::unique_lock lock(mutex_);
  wake_.wait_until(lock, due, [this] { return stopped_; });
  return true;
}

void PacedSource::requestStop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  wake_.notify_all();
  inner_->requestStop();
}

std::string PacedSource::describe() const {
  return fmt::format("{} speed={}", inner_->describe(), speed_);
}

}  // namespace tagflow
