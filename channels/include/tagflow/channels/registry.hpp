// The virtual channel kinds by name, for [[channel]] tables of configuration files and for
// Python: each kind's declaration and its factory (channel names already resolved to
// numbers). Adding a virtual channel adds one entry in registry.cpp.
#pragma once

#include <vector>

#include "tagflow/core/kind_registry.hpp"

namespace tagflow {

const std::vector<VirtualChannelKind>& virtualChannelKinds();

// Throws InvalidArgument naming an unknown kind (and the known ones) or a bad key.
std::unique_ptr<VirtualChannel> makeVirtualChannel(std::string_view kind, const std::string& name,
                                                   const Parameters& parameters);

}  // namespace tagflow
