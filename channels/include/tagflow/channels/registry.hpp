// The virtual channel kinds a configuration can name ([[channel]] tables): for each, a
// one-line summary, its keys with their meaning, and a factory from Parameters (the table
// without `kind` and `name`, channel names already resolved to numbers). Adding a virtual
// channel adds one entry in registry.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/core/virtual_channel.hpp"
#include "tagflow/measurements/registry.hpp"

namespace tagflow {

struct VirtualChannelKind {
  std::string_view kind;
  std::string_view summary;
  std::vector<KeyHelp> keys;
  std::function<std::unique_ptr<VirtualChannel>(const std::string& name, const Parameters&)> make;
};

const std::vector<VirtualChannelKind>& virtualChannelKinds();

// Throws InvalidArgument naming an unknown kind (and the known ones) or a bad key.
std::unique_ptr<VirtualChannel> makeVirtualChannel(std::string_view kind, const std::string& name,
                                                   const Parameters& parameters);

}  // namespace tagflow
