#include "control.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "tagflow/core/error.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow::serve_detail {

namespace {

ControlOutcome refuse(std::string error) {
  return {false, std::move(error)};
}

// The node named `name`, or nullptr with `error` naming the valid names.
template <class Node>
Node* findNamed(const std::vector<Node*>& nodes, const std::string& name, std::string_view what,
                std::string& error) {
  std::vector<std::string> valid;
  for (Node* node : nodes) {
    if (node->name() == name) return node;
    valid.push_back(node->name());
  }
  error =
      fmt::format("unknown {} '{}' (valid: {})", what, name,
                  valid.empty() ? std::string("none") : fmt::format("{}", fmt::join(valid, ", ")));
  return nullptr;
}

// `measurements` stay alive while this runs (MeasurementGraph::withMeasurements).
ControlOutcome applyToMeasurement(const std::vector<Measurement*>& measurements,
                                  const std::string& name, const std::string& action,
                                  const nlohmann::json& request) {
  std::string error;
  Measurement* measurement = findNamed(measurements, name, "measurement", error);
  if (measurement == nullptr) return refuse(error);
  if (action == "start") {
    measurement->start();
  } else if (action == "stop") {
    measurement->stop();
  } else if (action == "clear") {
    measurement->clear();
  } else {
    const auto duration = request.find("duration_ps");
    if (duration == request.end() || !duration->is_number_integer() ||
        duration->get<std::int64_t>() <= 0) {
      return refuse(fmt::format("duration_ps {} is invalid (valid: an integer from 1 to {} ps)",
                                duration == request.end() ? "(missing)" : duration->dump(),
                                std::numeric_limits<std::int64_t>::max()));
    }
    const auto clear = request.find("clear");
    if (clear != request.end() && !clear->is_boolean()) {
      return refuse(fmt::format("clear {} is invalid (valid: true, false)", clear->dump()));
    }
    try {
      measurement->startFor(duration->get<std::int64_t>(),
                            clear == request.end() || clear->get<bool>());
    } catch (const InvalidArgument& e) {
      return refuse(e.what());
    }
  }
  return {true, {}};
}

// {"action": "set", "channel": name, "key": setting, "value": integer}: a virtual channel's
// live setting (VirtualChannel::liveSettings()), in force from the next block.
ControlOutcome applyToChannel(const MeasurementGraph& graph, const nlohmann::json& request,
                              bool stream_ended) {
  const auto name = request.find("channel");
  if (name == request.end() || !name->is_string()) {
    return refuse("\"channel\" is missing: the name of a virtual channel of the graph");
  }
  std::string error;
  VirtualChannel* channel =
      findNamed(graph.virtualChannels(), name->get<std::string>(), "virtual channel", error);
  if (channel == nullptr) return refuse(error);
  const auto key = request.find("key");
  if (key == request.end() || !key->is_string()) {
    return refuse("\"key\" is missing: the name of the setting, e.g. delay");
  }
  const auto value = request.find("value");
  // An unsigned value above the largest int64 would wrap to a value never sent.
  if (value == request.end() || !value->is_number_integer() ||
      (value->is_number_unsigned() &&
       value->get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})) {
    return refuse(fmt::format("value {} is invalid (valid: an integer of 64 bits, in ps)",
                              value == request.end() ? "(missing)" : value->dump()));
  }
  if (stream_ended) {
    return refuse(
        fmt::format("the stream has ended: '{}' of '{}' would hold from the next "
                    "block, and none will come",
                    key->get<std::string>(), channel->name()));
  }
  try {
    channel->setLiveSetting(key->get<std::string>(), value->get<std::int64_t>());
  } catch (const InvalidArgument& e) {
    return refuse(e.what());
  }
  return {true, {}};
}

}  // namespace

ControlOutcome applyControl(MeasurementGraph& graph, const std::string& body,
                            const std::function<void()>& stop_run, bool stream_ended) {
  const nlohmann::json request = nlohmann::json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object()) {
    return refuse("the body is not a JSON object");
  }
  const auto action_it = request.find("action");
  if (action_it == request.end() || !action_it->is_string()) {
    return refuse("\"action\" is missing (valid: start, stop, clear, start_for, stop_run, set)");
  }
  const std::string action = action_it->get<std::string>();
  if (action == "stop_run") {
    stop_run();
    return {true, {}};
  }
  if (action == "set") return applyToChannel(graph, request, stream_ended);
  if (action != "start" && action != "stop" && action != "clear" && action != "start_for") {
    return refuse(fmt::format(
        "unknown action '{}' (valid: start, stop, clear, start_for, stop_run, set)", action));
  }
  const auto name_it = request.find("measurement");
  if (name_it == request.end() || !name_it->is_string()) {
    return refuse("\"measurement\" is missing: the name of a measurement of the graph");
  }
  ControlOutcome outcome;
  graph.withMeasurements([&](const std::vector<Measurement*>& measurements) {
    outcome = applyToMeasurement(measurements, name_it->get<std::string>(), action, request);
  });
  return outcome;
}

}  // namespace tagflow::serve_detail
