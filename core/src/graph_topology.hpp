// GraphTopology: decides which stream each node of a measurement graph reads. The source's
// blocks form the root stream; every virtual channel reads one stream and publishes a new one
// (its input plus its own tags). A node reads the stream of the deepest virtual channel it
// needs, so independent virtual channels form parallel branches; when a node needs channels
// of two branches, one branch is moved below the other (a stream only ever gains channels,
// so every node upstream still finds what it needs). Checks, naming the node and channel:
// every channel a node reads is produced (by the source, when it lists its channels, or by a
// virtual channel), and no virtual channel depends on itself through others.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow::detail {

struct TopologyNode {
  std::string label;                             // "DelayedChannel 'herald'", for errors
  std::optional<std::vector<channel_t>> inputs;  // nullopt: every channel of the stream
  std::vector<channel_t> outputs;                // empty for measurements
};

struct Topology {
  static constexpr int kSource = -1;
  std::vector<int> virtual_parent;      // per virtual node: the virtual node it reads, or kSource
  std::vector<int> measurement_stream;  // per measurement: the virtual node it reads, or kSource
  std::vector<std::size_t> virtual_order;  // virtual nodes, every node after the one it reads
};

// Channels below `first_virtual` are physical (present or not, like the inputs of a time
// tagger); above it each must be the output of a virtual channel.
Topology planTopology(channel_t first_virtual, const std::vector<TopologyNode>& virtual_nodes,
                      const std::vector<TopologyNode>& measurements);

// Where a node added while the graph runs reads: like planTopology, but the tree is fixed, so
// a node needing channels of two branches is refused.
int placeInFixedTopology(channel_t first_virtual, const std::vector<TopologyNode>& virtual_nodes,
                         const std::vector<int>& virtual_parent, const TopologyNode& node);

}  // namespace tagflow::detail
