#include "tagflow/measurements/registry.hpp"

#include <limits>

#include "tagflow/core/error.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"

namespace tagflow {

std::vector<channel_t> channelList(const Parameters& parameters, std::string_view key) {
  std::vector<channel_t> channels;
  for (std::int64_t value : parameters.getIntList(key)) {
    if (value < std::numeric_limits<channel_t>::min() ||
        value > std::numeric_limits<channel_t>::max()) {
      throw InvalidArgument("key '" + std::string(key) + "': channel " + std::to_string(value) +
                            " is out of range (valid: 32-bit signed integers)");
    }
    channels.push_back(static_cast<channel_t>(value));
  }
  return channels;
}

namespace {

std::vector<MeasurementKind> buildKinds() {
  std::vector<MeasurementKind> kinds;
  kinds.push_back(MeasurementKind{
      "Counter",
      "counts per channel in consecutive bins, the last n_values bins kept",
      {{"channels", "list of channels to count"},
       {"binwidth", "bin width in ps (> 0), default 1e9"},
       {"n_values", "number of bins kept per channel (> 0), default 1"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"channels", "binwidth", "n_values"}, "Counter '" + name + "'");
        return std::make_unique<Counter>(name, channelList(p, "channels"),
                                         p.getInt("binwidth", 1'000'000'000),
                                         p.getInt("n_values", 1));
      }});
  kinds.push_back(MeasurementKind{
      "Countrate",
      "average rate per channel since the start, missed events included",
      {{"channels", "list of channels"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"channels"}, "Countrate '" + name + "'");
        return std::make_unique<Countrate>(name, channelList(p, "channels"));
      }});
  return kinds;
}

}  // namespace

const std::vector<MeasurementKind>& measurementKinds() {
  static const std::vector<MeasurementKind> kinds = buildKinds();
  return kinds;
}

std::unique_ptr<Measurement> makeMeasurement(std::string_view kind, const std::string& name,
                                             const Parameters& parameters) {
  std::string known;
  for (const auto& entry : measurementKinds()) {
    if (entry.kind == kind) return entry.make(name, parameters);
    known += (known.empty() ? "" : ", ") + std::string(entry.kind);
  }
  throw InvalidArgument("unknown measurement kind '" + std::string(kind) + "' (valid: " + known +
                        ")");
}

}  // namespace tagflow
