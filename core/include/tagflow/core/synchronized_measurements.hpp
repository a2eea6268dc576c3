// SynchronizedMeasurements: starts, stops and clears a group of measurements on the same
// block, so that all of them process exactly the same tags even though each runs at its own
// pace in the graph. An action is scheduled at the first block that no member has begun yet;
// members that are behind keep their previous state until they reach that block.
#pragma once

#include <cstdint>
#include <vector>

#include "tagflow/core/measurement.hpp"

namespace tagflow {

class SynchronizedMeasurements {
 public:
  void registerMeasurement(Measurement& measurement);
  void unregisterMeasurement(Measurement& measurement);

  void start();
  void startFor(timestamp_t duration, bool clear = true);
  void stop();
  void clear();
  bool isRunning() const;  // true if any member runs
  bool waitUntilFinished(std::int64_t timeout_ms = -1);
  bool mayFinish() const;  // every member may

  std::size_t size() const { return members_.size(); }

 private:
  void schedule(Measurement::Action action, timestamp_t duration, bool clear);

  std::vector<Measurement*> members_;
};

}  // namespace tagflow
