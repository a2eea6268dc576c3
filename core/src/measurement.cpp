#include "tagflow/core/measurement.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow {

Measurement::Measurement(const ParameterSchema& schema, std::string name,
                         const Parameters& parameters)
    : kind_(schema.kind()),
      name_(std::move(name)),
      parameters_(schema.validate(parameters, kind_ + " '" + name_ + "'")),
      parameter_units_(schema.units()) {
  if (name_.empty()) throw InvalidArgument(kind_ + ": name must not be empty");
}

Measurement::Measurement(std::string kind, std::string name, Parameters parameters)
    : kind_(std::move(kind)), name_(std::move(name)), parameters_(std::move(parameters)) {
  if (name_.empty()) throw InvalidArgument(kind_ + ": name must not be empty");
}

void Measurement::start() {
  std::lock_guard lock(mutex_);
  pending_.clear();
  applyLocked(Action::Start, 0, false);
}

void Measurement::startFor(timestamp_t duration, bool clear) {
  if (duration <= 0) {
    throw InvalidArgument(name_ + ": startFor duration " + std::to_string(duration) +
                          " ps is invalid (valid: > 0)");
  }
  std::lock_guard lock(mutex_);
  pending_.clear();
  applyLocked(Action::StartFor, duration, clear);
}

void Measurement::stop() {
  std::lock_guard lock(mutex_);
  pending_.clear();
  applyLocked(Action::Stop, 0, false);
}

void Measurement::clear() {
  std::lock_guard lock(mutex_);
  pending_.clear();
  applyLocked(Action::Clear, 0, false);
}

bool Measurement::isRunning() const {
  std::lock_guard lock(mutex_);
  return running_;
}

bool Measurement::waitUntilFinished(std::int64_t timeout_ms) {
  std::unique_lock lock(mutex_);
  // A group action still waiting for its block has not taken effect: a member that is stopped
  // now but has a startFor() pending is not finished.
  const auto finished = [&] { return pending_.empty() && !running_; };
  const auto done = [&] { return finished() || stream_ended_; };
  const bool start_for_pending =
      std::any_of(pending_.begin(), pending_.end(),
                  [](const PendingAction& p) { return p.action == Action::StartFor; });
  if (remaining_ < 0 && !start_for_pending) return !running_;
  if (timeout_ms < 0) {
    finished_.wait(lock, done);
  } else if (!finished_.wait_for(lock, std::chrono::milliseconds(timeout_ms), done)) {
    return false;
  }
  return finished();
}

timestamp_t Measurement::getCaptureDuration() const {
  std::lock_guard lock(mutex_);
  return capture_duration_;
}

std::uint64_t Measurement::getOverflowCount() const {
  std::lock_guard lock(mutex_);
  return overflow_count_;
}

ResultSet Measurement::getResults() const {
  std::lock_guard lock(mutex_);
  ResultSet out;
  out.kind = kind_;
  out.name = name_;
  out.parameters = parameters_;
  out.parameter_units = parameter_units_;
  out.facts.set("capture_duration_ps", capture_duration_);
  out.facts.set("overflow_count", static_cast<std::int64_t>(overflow_count_));
  out.facts.set("in_overflow", in_overflow_);
  out.facts.set("running", running_);
  collectResults(out);
  return out;
}

void Measurement::applyLocked(Action action, timestamp_t duration, bool clear) {
  switch (action) {
    case Action::None:
      break;
    case Action::Start:
      running_ = true;
      remaining_ = -1;
      break;
    case Action::StartFor:
      if (clear) clearLocked();
      running_ = true;
      remaining_ = duration;
      break;
    case Action::Stop:
      running_ = false;
      endCaptureLocked();
      remaining_ = -1;
      finished_.notify_all();
      break;
    case Action::Clear:
      clearLocked();
      break;
  }
}

void Measurement::clearLocked() {
  clearData();
  capture_duration_ = 0;
  overflow_count_ = 0;
  capturing_ = false;
  fresh_ = true;
}

void Measurement::streamStarting() {
  std::lock_guard lock(mutex_);
  // Actions that waited for a block the last stream never reached take effect now.
  for (const PendingAction& p : pending_) applyLocked(p.action, p.duration, p.clear);
  pending_.clear();
  stream_ended_ = false;
  next_sequence_ = 0;
  in_overflow_ = false;
  capturing_ = false;
}

void Measurement::streamEnded() {
  std::lock_guard lock(mutex_);
  stream_ended_ = true;
  endCaptureLocked();
  finished_.notify_all();
}

void Measurement::endCaptureLocked() {
  if (!capturing_) return;
  onCaptureEnd();
  capturing_ = false;
}

void Measurement::processBlock(const TagBlock& block) {
  std::lock_guard lock(mutex_);
  next_sequence_ = block.sequence + 1;
  std::size_t due = 0;
  while (due < pending_.size() && pending_[due].at_sequence <= block.sequence) {
    applyLocked(pending_[due].action, pending_[due].duration, pending_[due].clear);
    ++due;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(due));
  if (!running_) {
    trackOverflowWhileStopped(block);
    return;
  }

  if (!capturing_) {
    onCaptureStart(block.begin_time, fresh_);
    capturing_ = true;
    fresh_ = false;
  }

  timestamp_t end = block.end_time;
  std::size_t tag_count = block.tags.size();
  const bool finishes = remaining_ >= 0 && block.end_time - block.begin_time >= remaining_;
  if (finishes) {
    end = block.begin_time + remaining_;
    tag_count = static_cast<std::size_t>(
        std::lower_bound(block.tags.begin(), block.tags.end(), end,
                         [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
        block.tags.begin());
  }

  dispatch(block, tag_count, end);
  capture_duration_ += end - block.begin_time;

  if (remaining_ >= 0) remaining_ -= end - block.begin_time;
  if (finishes) {
    running_ = false;
    endCaptureLocked();
    remaining_ = -1;
    finished_.notify_all();
  }
}

void Measurement::dispatch(const TagBlock& block, std::size_t tag_count, timestamp_t end) {
  std::size_t position = 0;
  for (std::uint32_t index : block.special) {
    if (index >= tag_count) break;
    if (index > position) processTimeTags(block.tags.subspan(position, index - position));
    handleSpecial(block.tags[index]);
    position = index + 1;
  }
  if (tag_count > position) processTimeTags(block.tags.subspan(position, tag_count - position));
  advanceTime(end);
}

void Measurement::trackOverflowWhileStopped(const TagBlock& block) {
  for (std::uint32_t index : block.special) {
    const TagType type = block.tags[index].type;
    if (type == TagType::OverflowBegin) in_overflow_ = true;
    if (type == TagType::OverflowEnd) in_overflow_ = false;
  }
}

void Measurement::handleSpecial(const Tag& tag) {
  advanceTime(tag.time);
  switch (tag.type) {
    case TagType::OverflowBegin:
      if (!in_overflow_) ++overflow_count_;
      in_overflow_ = true;
      onOverflowBegin(tag);
      break;
    case TagType::OverflowEnd:
      in_overflow_ = false;
      onOverflowEnd(tag);
      break;
    case TagType::MissedEvents:
      onMissedEvents(tag);
      break;
    case TagType::Error:
      onError(tag);
      break;
    case TagType::TimeTag:
      break;
  }
}

}  // namespace tagflow
