// The measurement kinds of this library by name, for configuration files, the command line
// and Python: each kind's declaration and its factory. Adding a measurement adds one entry in
// registry.cpp. <tagflow/kinds.hpp> joins these with the kinds of the other libraries.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "tagflow/core/kind_registry.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

namespace tagflow {

const std::vector<MeasurementKind>& measurementKinds();

// A gate from checked parameters: [open_channel, close_channel] or [open_channel,
// close_channel, initially_open (0 or 1)]; nullopt when the key is absent. Another
// initially_open is an InvalidArgument that begins with `owner`.
std::optional<ChannelGate> gateFrom(const Parameters& parameters, std::string_view key,
                                    std::string_view owner);

}  // namespace tagflow
