#include "tagflow/measurements/octave_welch.hpp"

#include <algorithm>
#include <cmath>

namespace tagflow {

OctaveWelch::OctaveWelch(SegmentPeriodogram& periodogram)
    : periodogram_(&periodogram), length_(periodogram.length()) {
  stages_.reserve(kMaxStages);
}

void OctaveWelch::push(std::span<const double> samples) {
  pushStage(0, samples);
}

void OctaveWelch::pushStage(std::size_t k, std::span<const double> samples) {
  if (samples.empty()) return;
  const std::size_t capacity = 2 * length_;
  if (k == stages_.size()) addStage();
  Stage& stage = *stages_[k];
  std::size_t position = 0;
  while (position < samples.size()) {
    if (stage.filled == capacity) {
      // Less than a segment is left to fill: it moves to the front.
      std::copy(stage.buffer.get() + stage.begin, stage.buffer.get() + capacity,
                stage.buffer.get());
      stage.filled -= stage.begin;
      stage.begin = 0;
    }
    const std::size_t take =
        std::min(stage.begin + length_ - stage.filled, samples.size() - position);
    std::copy_n(samples.begin() + static_cast<std::ptrdiff_t>(position), take,
                stage.buffer.get() + stage.filled);
    stage.filled += take;
    position += take;
    if (stage.filled == stage.begin + length_) {
      periodogram_->accumulate({stage.buffer.get() + stage.begin, length_}, firstBin(),
                               stage.power);
      ++stage.segments;
      stage.begin += length_ / 2;  // 50 % overlap: the newer half begins the next segment
    }
  }
  if (k + 1 < kMaxStages) {
    stage.decimated.clear();
    stage.decimator.process(samples, stage.decimated);
    pushStage(k + 1, stage.decimated);
  }
}

void OctaveWelch::addStage() {
  auto stage = std::make_unique<Stage>();
  stage->buffer = makeAlignedDoubles(2 * length_);
  stage->power.assign(binCount(stages_.size()), 0.0);
  stages_.push_back(std::move(stage));
}

void OctaveWelch::mergeStage(std::size_t k, std::uint64_t segments, std::span<const double> power) {
  while (stages_.size() <= k) addStage();
  Stage& stage = *stages_[k];
  for (std::size_t i = 0; i < stage.power.size(); ++i) stage.power[i] += power[i];
  stage.segments += segments;
}

void OctaveWelch::restart() {
  for (auto& stage : stages_) {
    stage->begin = 0;
    stage->filled = 0;
    stage->decimator.restart();
  }
}

void OctaveWelch::clear() {
  stages_.clear();
}

std::vector<OctaveWelch::Point> OctaveWelch::spectrum() const {
  std::vector<Point> points;
  const double window_power = periodogram_->windowPower();
  for (std::size_t k = stages_.size(); k-- > 0;) {
    const Stage& stage = *stages_[k];
    if (stage.segments == 0) continue;
    const double rate = std::ldexp(1.0, -static_cast<int>(k));  // of this stage
    const double width = rate / static_cast<double>(length_);
    for (std::size_t i = 0; i < stage.power.size(); ++i) {
      const double mean_power = stage.power[i] / static_cast<double>(stage.segments);
      points.push_back(Point{static_cast<double>(firstBin() + i) * width, width,
                             2 * mean_power / (rate * window_power), stage.segments});
    }
  }
  return points;
}

}  // namespace tagflow
