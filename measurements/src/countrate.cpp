#include "tagflow/measurements/countrate.hpp"

#include <algorithm>
#include <limits>

namespace tagflow {

const ParameterSchema& Countrate::schema() {
  static const ParameterSchema schema(
      "Countrate", "average rate per channel since the start, missed events included",
      {ParameterSpec::channels("channels").help("channels to count")});
  return schema;
}

Countrate::Countrate(std::string name, std::vector<channel_t> channels)
    : Measurement(
          schema(), std::move(name),
          Parameters{{"channels", std::vector<std::int64_t>(channels.begin(), channels.end())}}),
      index_(channels, "Countrate '" + this->name() + "'"),
      counts_(index_.size() + 1, 0) {}

void Countrate::processTimeTags(std::span<const Tag> tags) {
  index_.countTags(tags, counts_.data());
}

void Countrate::onMissedEvents(const Tag& tag) {
  counts_[index_.slot(tag.channel)] += tag.missed_events;
}

void Countrate::clearData() {
  std::fill(counts_.begin(), counts_.end(), 0);
}

std::vector<double> Countrate::ratesLocked() const {
  const double seconds = static_cast<double>(captureDurationLocked()) / kPicosecondsPerSecond;
  std::vector<double> rates(index_.size(), std::numeric_limits<double>::quiet_NaN());
  if (seconds > 0) {
    for (std::size_t c = 0; c < index_.size(); ++c) rates[c] = counts_[c] / seconds;
  }
  return rates;
}

std::vector<double> Countrate::getData() const {
  auto lock = lockData();
  return ratesLocked();
}

std::vector<std::int64_t> Countrate::getCountsTotal() const {
  auto lock = lockData();
  return std::vector<std::int64_t>(counts_.begin(), counts_.end() - 1);
}

void Countrate::collectResults(ResultSet& out) const {
  out.add("data", "Hz", {index_.size()}, ratesLocked(),
          "total counts / capture duration; NaN while the capture duration is 0");
  out.add("counts_total", "counts", {index_.size()},
          std::vector<std::int64_t>(counts_.begin(), counts_.end() - 1),
          "time tags plus missed events since clear()");
}

void Countrate::savePartialState(ResultSet& out) const {
  out.add("counts", "counts", {counts_.size()}, counts_, "per channel, then the discard slot");
}

void Countrate::mergePartial(const ResultSet& later) {
  const auto& counts = later.values<std::uint64_t>("counts", counts_.size());
  for (std::size_t c = 0; c < counts_.size(); ++c) counts_[c] += counts[c];
}

}  // namespace tagflow
