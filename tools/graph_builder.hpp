// buildGraph: turns the [[channel]] and [[measurement]] tables of a configuration into nodes
// of a MeasurementGraph. A channel key (a key whose name contains "channel" or "gate", or
// starts with "group") may name a virtual channel instead of giving a number: "herald" is that
// channel's output, "coincidences:1" the second output of a node with several. Virtual
// channels are built in the order their references need; an unknown name, an output index out
// of range or a cycle of references is an InvalidArgument naming the node. Every measurement
// is checked before any is made (its name can name a group of the results file, its channel
// names resolve, its keys and values fit its kind's declaration), and FileWriters are made
// last: a FileWriter creates its file when made, and a configuration error must leave an
// earlier file at that path as it was.
#pragma once

#include <memory>
#include <vector>

#include "run_config.hpp"
#include "tagflow/core/measurement.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow::cli {

struct BuiltGraph {
  std::vector<std::unique_ptr<VirtualChannel>> channels;
  std::vector<std::unique_ptr<Measurement>> measurements;  // in the order of the file

  // Every measurement's results, in the order of the file.
  std::vector<ResultSet> results() const;
};

// The graph options of the configuration's [run] table (threads, blocks in flight).
GraphOptions graphOptionsOf(const RunConfig& config);

// Adds every node to `graph` (which must outlive nothing here: the caller keeps BuiltGraph
// alive as long as the graph) and checks the wiring.
BuiltGraph buildGraph(const RunConfig& config, MeasurementGraph& graph);

}  // namespace tagflow::cli
