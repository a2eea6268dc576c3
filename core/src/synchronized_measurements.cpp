#include "tagflow/core/synchronized_measurements.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow {

void SynchronizedMeasurements::registerMeasurement(Measurement& measurement) {
  if (std::find(members_.begin(), members_.end(), &measurement) != members_.end()) {
    throw InvalidArgument("measurement '" + measurement.name() + "' is already in the group");
  }
  members_.push_back(&measurement);
  // Lock order is by address everywhere, so two groups never deadlock.
  std::sort(members_.begin(), members_.end(), std::less<Measurement*>());
}

void SynchronizedMeasurements::unregisterMeasurement(Measurement& measurement) {
  members_.erase(std::remove(members_.begin(), members_.end(), &measurement), members_.end());
}

void SynchronizedMeasurements::start() {
  schedule(Measurement::Action::Start, 0, false);
}

void SynchronizedMeasurements::startFor(timestamp_t duration, bool clear) {
  if (duration <= 0) {
    throw InvalidArgument("startFor duration " + std::to_string(duration) +
                          " ps is invalid (valid: > 0)");
  }
  schedule(Measurement::Action::StartFor, duration, clear);
}

void SynchronizedMeasurements::stop() {
  schedule(Measurement::Action::Stop, 0, false);
}

void SynchronizedMeasurements::clear() {
  schedule(Measurement::Action::Clear, 0, false);
}

bool SynchronizedMeasurements::isRunning() const {
  return std::any_of(members_.begin(), members_.end(),
                     [](const Measurement* m) { return m->isRunning(); });
}

bool SynchronizedMeasurements::waitUntilFinished(std::int64_t timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (Measurement* member : members_) {
    std::int64_t left = -1;
    if (timeout_ms >= 0) {
      left = std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                           deadline - std::chrono::steady_clock::now())
                                           .count());
    }
    if (!member->waitUntilFinished(left)) return false;
  }
  return true;
}

bool SynchronizedMeasurements::mayFinish() const {
  return std::all_of(members_.begin(), members_.end(),
                     [](const Measurement* member) { return member->mayFinish(); });
}

void SynchronizedMeasurements::schedule(Measurement::Action action, timestamp_t duration,
                                        bool clear) {
  std::vector<std::unique_lock<std::mutex>> locks;
  locks.reserve(members_.size());
  for (Measurement* member : members_) locks.emplace_back(member->mutex_);

  std::uint64_t first_unseen = 0;
  for (const Measurement* member : members_) {
    first_unseen = std::max(first_unseen, member->next_sequence_);
  }
  for (Measurement* member : members_) {
    if (member->next_sequence_ == first_unseen && member->pending_.empty()) {
      member->applyLocked(action, duration, clear);
    } else {
      member->pending_.push_back(Measurement::PendingAction{action, first_unseen, duration, clear});
    }
  }
}

}  // namespace tagflow
