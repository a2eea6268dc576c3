#include "snapshot.hpp"

#include <cmath>
#include <variant>

#include "tagflow/core/virtual_channel.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/version.hpp"

namespace tagflow::serve_detail {

namespace {

// JSON has no NaN or infinity: they travel as null, which the page skips.
nlohmann::json number(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json valueJson(const ParameterValue& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          return number(v);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          nlohmann::json list = nlohmann::json::array();
          for (const double x : v) list.push_back(number(x));
          return list;
        } else {
          return nlohmann::json(v);
        }
      },
      value);
}

nlohmann::json arrayDataJson(const ArrayData& data) {
  return std::visit(
      [](const auto& values) -> nlohmann::json {
        using T = typename std::decay_t<decltype(values)>::value_type;
        if constexpr (std::is_same_v<T, double>) {
          nlohmann::json list = nlohmann::json::array();
          list.get_ref<nlohmann::json::array_t&>().reserve(values.size());
          for (const double x : values) list.push_back(number(x));
          return list;
        } else if constexpr (std::is_same_v<T, std::int8_t>) {
          return nlohmann::json(std::vector<int>(values.begin(), values.end()));
        } else {
          return nlohmann::json(values);
        }
      },
      data);
}

}  // namespace

nlohmann::json parametersJson(const Parameters& parameters) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : parameters.entries()) out[key] = valueJson(value);
  return out;
}

nlohmann::json profileJson(const Profile& profile) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeProfile& node : profile.nodes) {
    nodes.push_back({{"name", node.name},
                     {"kind", node.kind},
                     {"tags", node.tags},
                     {"blocks", node.blocks},
                     {"busy_s", node.busy_s},
                     {"wait_s", node.wait_s},
                     {"capacity_mtags_per_s", node.capacityMTagsPerSecond()}});
  }
  return {{"tags", profile.tags},
          {"blocks", profile.blocks},
          {"stream_time_ps", profile.stream_duration_ps},
          {"wall_s", profile.wall_s},
          {"wall_mtags_per_s", profile.wallMTagsPerSecond()},
          {"threads", profile.threads},
          {"blocks_in_flight", profile.blocks_in_flight},
          {"max_blocks_in_flight", profile.max_blocks_in_flight},
          {"nodes", std::move(nodes)}};
}

nlohmann::json resultsJson(const ResultSet& results) {
  nlohmann::json arrays = nlohmann::json::object();
  for (const ResultArray& array : results.arrays) {
    arrays[array.name] = {
        {"unit", array.unit}, {"shape", array.shape}, {"data", arrayDataJson(array.data)}};
  }
  return {{"name", results.name},
          {"kind", results.kind},
          {"facts", parametersJson(results.facts)},
          {"arrays", std::move(arrays)}};
}

nlohmann::json graphJson(const MeasurementGraph& graph, const Source& source, double update_hz) {
  nlohmann::json measurements = nlohmann::json::array();
  graph.withMeasurements([&](const std::vector<Measurement*>& list) {
    for (const Measurement* measurement : list) {
      const ResultSet results = measurement->getResults();
      nlohmann::json units = nlohmann::json::object();
      for (const auto& [key, unit] : results.parameter_units) units[key] = unit;
      measurements.push_back({{"name", measurement->name()},
                              {"kind", measurement->kind()},
                              {"parameters", parametersJson(measurement->parameters())},
                              {"parameter_units", std::move(units)}});
    }
  });
  return {{"version", TAGFLOW_VERSION_STRING},
          {"source", source.describe()},
          {"update_hz", update_hz},
          {"measurements", std::move(measurements)}};
}

nlohmann::json measurementsJson(const MeasurementGraph& graph,
                                std::vector<std::string>& unreadable) {
  nlohmann::json measurements = nlohmann::json::array();
  graph.withMeasurements([&](const std::vector<Measurement*>& list) {
    for (const Measurement* measurement : list) {
      try {
        nlohmann::json entry = resultsJson(measurement->getResults());
        entry["running"] = measurement->isRunning();
        entry["capture_duration_ps"] = measurement->getCaptureDuration();
        entry["overflow_count"] = measurement->getOverflowCount();
        measurements.push_back(std::move(entry));
      } catch (const std::exception& e) {
        unreadable.push_back("measurement '" + measurement->name() + "': " + e.what());
      }
    }
  });
  return measurements;
}

nlohmann::json channelsJson(const MeasurementGraph& graph) {
  nlohmann::json channels = nlohmann::json::array();
  for (const VirtualChannel* channel : graph.virtualChannels()) {
    nlohmann::json settings = nlohmann::json::object();
    for (const auto& [key, value] : channel->liveSettings()) settings[key] = value;
    channels.push_back({{"name", channel->name()},
                        {"kind", channel->kind()},
                        {"outputs", channel->getChannels()},
                        {"settings", std::move(settings)}});
  }
  return channels;
}

nlohmann::json snapshotJson(std::uint64_t sequence, double elapsed_s, const RunStatus& status,
                            const Profile& profile, const Source& source,
                            nlohmann::json measurements, nlohmann::json channels) {
  return {{"type", "snapshot"},
          {"seq", sequence},
          {"elapsed_s", elapsed_s},
          {"run", {{"state", status.state}, {"error", status.error}}},
          {"profile", profileJson(profile)},
          {"source",
           {{"description", source.describe()},
            {"statistics", parametersJson(sourceStatistics(source))}}},
          {"measurements", std::move(measurements)},
          {"channels", std::move(channels)}};
}

}  // namespace tagflow::serve_detail
