// The measurement kinds a configuration can name: for each, a one-line summary, its keys
// with their meaning, and a factory from Parameters (the config table without `kind` and
// `name`). Adding a measurement adds one entry in registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/core/parameters.hpp"

namespace tagflow {

struct KeyHelp {
  std::string_view key;
  std::string_view help;
};

struct MeasurementKind {
  std::string_view kind;
  std::string_view summary;
  std::vector<KeyHelp> keys;
  std::function<std::unique_ptr<Measurement>(const std::string& name, const Parameters&)> make;
};

const std::vector<MeasurementKind>& measurementKinds();

// Throws InvalidArgument naming an unknown kind (and the known ones) or a bad key.
std::unique_ptr<Measurement> makeMeasurement(std::string_view kind, const std::string& name,
                                             const Parameters& parameters);

// A channel list from parameters, checked to fit channel_t.
std::vector<channel_t> channelList(const Parameters& parameters, std::string_view key);

}  // namespace tagflow
