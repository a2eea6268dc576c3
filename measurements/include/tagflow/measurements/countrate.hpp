// Countrate: the average rate of each channel since construction or clear(): total counts
// divided by the capture duration (stream time processed while running, from the capture
// start, not from the first tag). MissedEvents counts of overflow intervals are included,
// so the rate stays right when the stream overflowed. NaN while the capture duration is 0.
#pragma once

#include <cstdint>
#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/measurement.hpp"

namespace tagflow {

class Countrate : public Measurement {
 public:
  static const ParameterSchema& schema();

  Countrate(std::string name, std::vector<channel_t> channels);

  std::vector<double> getData() const;               // counts per second, per channel
  std::vector<std::int64_t> getCountsTotal() const;  // per channel

  std::optional<std::vector<channel_t>> inputChannels() const override { return channels(); }
  const std::vector<channel_t>& channels() const { return index_.channels(); }
  // Counts are sums: no margins, any order.
  std::optional<SplitSupport> splitSupport() const override {
    return SplitSupport{.any_order = true};
  }

 protected:
  void processTimeTags(std::span<const Tag> tags) override;
  void onMissedEvents(const Tag& tag) override;
  void clearData() override;
  void collectResults(ResultSet& out) const override;
  void savePartialState(ResultSet& out) const override;
  void mergePartial(const ResultSet& later) override;

 private:
  std::vector<double> ratesLocked() const;

  ChannelIndex index_;
  std::vector<std::uint64_t> counts_;  // per slot, plus the discard slot
};

}  // namespace tagflow
