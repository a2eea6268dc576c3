// ShardedMeasurement: one measurement done by N copies of it ("shards") on N graph nodes, so
// that it uses N cores. Stream time is cut into chunks; shard k counts chunks k, k + N, ...
// and reads the margins around them that its kind needs (Measurement::splitSupport()).
// Reading merges the shards' partial states into a fresh copy: integer results equal those of
// one pass exactly. Only kinds whose partial states are sums (SplitSupport::any_order) shard
// this way; the others split into consecutive ranges (docs/parallel.md).
//
// Start, stop and clear reach every shard at the same block. While the graph runs, each
// shard's part is a snapshot at one of its own block boundaries, and shards may stand up to
// the blocks in flight apart: a snapshot then holds a little more of some chunks than of
// others. After the run it holds every chunk.
//
//   auto& hlb = graph.emplace<ShardedMeasurement>(
//       [] { return std::make_unique<HistogramLogBins>("hlb", 1, 2, -9, -6, 200); }, 2);
//   graph.run();
//   auto merged = hlb.mergedAs<HistogramLogBins>();
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/core/synchronized_measurements.hpp"

namespace tagflow {

class ShardedMeasurement : public Measurement {
 public:
  // `make` builds a fresh measurement of the kind, with the same name and parameters at every
  // call. chunk = 0 picks kDefaultChunk, or more where the margins would cost over 1/32.
  using Factory = std::function<std::unique_ptr<Measurement>()>;
  ShardedMeasurement(const Factory& make, int shards, timestamp_t chunk = 0);

  static constexpr timestamp_t kDefaultChunk = timestamp_t{1} << 27;  // about 134 us
  static constexpr int kMaxShards = 256;

  int shardCount() const { return static_cast<int>(shards_.size()); }
  timestamp_t chunk() const { return chunk_; }

  // A fresh measurement holding the merged state of every shard.
  std::unique_ptr<Measurement> merged() const;
  template <typename Kind>
  std::unique_ptr<Kind> mergedAs() const {
    std::unique_ptr<Measurement> all = merged();
    auto* typed = dynamic_cast<Kind*>(all.get());
    if (typed == nullptr) throwWrongKind();
    all.release();
    return std::unique_ptr<Kind>(typed);
  }

  void start() override;
  void startFor(timestamp_t duration, bool clear = true) override;
  void stop() override;
  void clear() override;
  bool isRunning() const override;
  bool waitUntilFinished(std::int64_t timeout_ms = -1) override;
  bool mayFinish() const override;
  timestamp_t getCaptureDuration() const override;
  std::uint64_t getOverflowCount() const override;
  ResultSet getResults() const override;
  // The merged shards' state; a merged state goes to the first shard (the states are sums).
  ResultSet getPartialState() const override;
  void mergePartialState(const ResultSet& later) override;
  std::optional<std::vector<channel_t>> inputChannels() const override;
  std::vector<Measurement*> graphNodes() override;

 protected:
  // The shards do the work: the graph never hands this object a block.
  void processTimeTags(std::span<const Tag> /*tags*/) override {}
  void clearData() override {}
  void collectResults(ResultSet& /*out*/) const override {}

 private:
  ShardedMeasurement(const Factory& make, std::unique_ptr<Measurement> prototype, int shards,
                     timestamp_t chunk);
  [[noreturn]] void throwWrongKind() const;

  Factory make_;
  std::unique_ptr<Measurement> prototype_;  // never runs: kind, parameters, input channels
  std::vector<std::unique_ptr<Measurement>> shards_;
  timestamp_t chunk_ = 0;
  mutable SynchronizedMeasurements group_;
};

}  // namespace tagflow
