// Kinds by name: what a configuration file, the command line or Python can build. Each kind is
// its declaration (ParameterSchema: keys, units, ranges, defaults, help) plus a factory that
// receives the parameters already checked against it, defaults filled in. Each library lists
// its own kinds (measurements/, channels/, io/); <tagflow/kinds.hpp> joins the lists.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/core/parameter_schema.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

template <class Node>
struct NodeKind {
  const ParameterSchema* schema;
  std::function<std::unique_ptr<Node>(const std::string& name, const Parameters& checked)> make;
  // Whether the kind can run as shards over parts of the stream (parallel = N), declared so
  // that shards are refused before any is built: a FileWriter creates its file when built.
  // Instances agree (splitSupport()), though some refuse for some parameters (gates).
  bool splits_by_time = true;

  const std::string& kind() const { return schema->kind(); }
};

using MeasurementKind = NodeKind<Measurement>;
using VirtualChannelKind = NodeKind<VirtualChannel>;

// The kind named `kind` of `kinds`; InvalidArgument naming it and the valid ones otherwise.
// `what` says what a kind is here ("measurement", "virtual channel").
template <class Node>
const NodeKind<Node>& findKind(const std::vector<NodeKind<Node>>& kinds, std::string_view kind,
                               std::string_view what);

// Arguments of a factory, from parameters already checked against a declaration.
channel_t channelArgument(const Parameters& checked, std::string_view key);
std::vector<channel_t> channelListArgument(const Parameters& checked, std::string_view key);

[[noreturn]] void throwUnknownKind(std::string_view what, std::string_view kind,
                                   const std::vector<std::string>& valid);

// Throws InvalidArgument if `kind` cannot run as shards (NodeKind::splits_by_time), before any
// of them is built.
void requireSplitsByTime(const NodeKind<Measurement>& kind);

// Checks `parameters` against the kind's declaration and builds the node.
template <class Node>
std::unique_ptr<Node> makeNode(const std::vector<NodeKind<Node>>& kinds, std::string_view kind,
                               const std::string& name, const Parameters& parameters,
                               std::string_view what) {
  const NodeKind<Node>& found = findKind(kinds, kind, what);
  return found.make(name, found.schema->validate(parameters, found.kind() + " '" + name + "'"));
}

template <class Node>
const NodeKind<Node>& findKind(const std::vector<NodeKind<Node>>& kinds, std::string_view kind,
                               std::string_view what) {
  std::vector<std::string> valid;
  for (const auto& entry : kinds) {
    if (entry.kind() == kind) return entry;
    valid.push_back(entry.kind());
  }
  throwUnknownKind(what, kind, valid);
}

}  // namespace tagflow
