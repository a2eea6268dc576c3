#include "tagflow/measurements/registry.hpp"

#include <string>

#include "tagflow/core/error.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/phase_noise.hpp"
#include "tagflow/measurements/tag_stream.hpp"

namespace tagflow {

namespace {

std::vector<MeasurementKind> buildKinds() {
  std::vector<MeasurementKind> kinds;
  kinds.push_back({&Counter::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<Counter>(name, channelListArgument(p, "channels"),
                                                      p.getInt("binwidth"), p.getInt("n_values"));
                   }});
  kinds.push_back({&Countrate::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<Countrate>(name, channelListArgument(p, "channels"));
                   }});
  kinds.push_back({&Correlation::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<Correlation>(
                         name, channelArgument(p, "channel_1"),
                         p.contains("channel_2") ? channelArgument(p, "channel_2") : CHANNEL_UNUSED,
                         p.getInt("binwidth"), p.getInt("n_bins"));
                   }});
  kinds.push_back({&HistogramLogBins::schema(), [](const std::string& name, const Parameters& p) {
                     const std::string who = "HistogramLogBins '" + name + "'";
                     return std::make_unique<HistogramLogBins>(
                         name, channelArgument(p, "click_channel"),
                         channelArgument(p, "start_channel"), p.getDouble("exp_start"),
                         p.getDouble("exp_stop"), p.getInt("n_bins"),
                         gateFrom(p, "click_gate", who), gateFrom(p, "start_gate", who));
                   }});
  kinds.push_back({&FrequencyStability::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<FrequencyStability>(
                         name, channelArgument(p, "channel"), p.getIntList("steps"),
                         p.getInt("average"), p.getInt("trace_len"));
                   }});
  kinds.push_back({&PhaseNoise::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<PhaseNoise>(name, channelListArgument(p, "channels"),
                                                         p.getInt("samples_per_octave"));
                   }});
  kinds.push_back({.schema = &TagStream::schema(),
                   .make =
                       [](const std::string& name, const Parameters& p) {
                         return std::make_unique<TagStream>(
                             name, channelListArgument(p, "channels"), p.getInt("max_tags"));
                       },
                   .splits_by_time = false});
  return kinds;
}

}  // namespace

std::optional<ChannelGate> gateFrom(const Parameters& parameters, std::string_view key,
                                    std::string_view owner) {
  if (!parameters.contains(key)) return std::nullopt;
  const auto values = parameters.getIntList(key);
  if (values.size() == 3 && values[2] != 0 && values[2] != 1) {
    throw InvalidArgument(std::string(owner) + ": " + std::string(key) + " initially_open " +
                          std::to_string(values[2]) + " is invalid (valid: 0 closed, 1 open)");
  }
  return ChannelGate{static_cast<channel_t>(values[0]), static_cast<channel_t>(values[1]),
                     values.size() == 3 && values[2] != 0};
}

const std::vector<MeasurementKind>& measurementKinds() {
  static const std::vector<MeasurementKind> kinds = buildKinds();
  return kinds;
}

}  // namespace tagflow
