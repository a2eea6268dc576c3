#include "graph_topology.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "tagflow/core/error.hpp"

namespace tagflow::detail {

namespace {

std::string channelListText(const std::vector<channel_t>& channels) {
  std::string text;
  for (channel_t channel : channels) text += (text.empty() ? "" : ", ") + std::to_string(channel);
  return text.empty() ? "none" : text;
}

class Planner {
 public:
  Planner(channel_t first_virtual, const std::vector<TopologyNode>& virtual_nodes)
      : first_virtual_(first_virtual), nodes_(virtual_nodes) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      for (channel_t channel : nodes_[i].outputs) producer_[channel] = static_cast<int>(i);
    }
  }

  // The virtual nodes `node` reads from; throws for a channel nobody produces.
  std::set<int> dependencies(const TopologyNode& node) const {
    std::set<int> dependencies;
    if (!node.inputs) {
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (&nodes_[i] != &node) dependencies.insert(static_cast<int>(i));
      }
      return dependencies;
    }
    for (channel_t channel : *node.inputs) {
      if (channel == CHANNEL_UNUSED) continue;
      if (auto producer = producer_.find(channel); producer != producer_.end()) {
        dependencies.insert(producer->second);
      } else if (!isPhysical(channel)) {
        throw InvalidArgument(node.label + " reads channel " + std::to_string(channel) +
                              ", which nothing produces (physical channels are below " +
                              std::to_string(first_virtual_) +
                              ", first_virtual_channel raises that; virtual channels: " +
                              virtualChannelsText() + ")");
      }
    }
    return dependencies;
  }

  // Virtual nodes in an order where each comes after those it reads; throws on a cycle.
  std::vector<std::size_t> order() const {
    enum class Mark { None, Visiting, Done };
    std::vector<Mark> marks(nodes_.size(), Mark::None);
    std::vector<std::size_t> sorted;
    std::vector<int> path;
    const auto visit = [&](auto& self, int node) -> void {
      if (marks[node] == Mark::Done) return;
      if (marks[node] == Mark::Visiting) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), node); it != path.end(); ++it) {
          cycle += nodes_[*it].label + " -> ";
        }
        throw InvalidArgument("the graph has a cycle: " + cycle + nodes_[node].label +
                              " (a virtual channel cannot read its own output, directly or "
                              "through others)");
      }
      marks[node] = Mark::Visiting;
      path.push_back(node);
      for (int dependency : dependencies(nodes_[node])) self(self, dependency);
      path.pop_back();
      marks[node] = Mark::Done;
      sorted.push_back(static_cast<std::size_t>(node));
    };
    for (std::size_t i = 0; i < nodes_.size(); ++i) visit(visit, static_cast<int>(i));
    return sorted;
  }

 private:
  // Like an unconnected input of a time tagger, a physical channel that never fires is legal;
  // what must exist is every virtual channel a node reads.
  bool isPhysical(channel_t channel) const { return channel < first_virtual_; }

  std::string virtualChannelsText() const {
    std::vector<channel_t> channels;
    for (const auto& [channel, producer] : producer_) channels.push_back(channel);
    return channelListText(channels);
  }

  channel_t first_virtual_;
  const std::vector<TopologyNode>& nodes_;
  std::map<channel_t, int> producer_;
};

bool isAncestorOrSelf(const std::vector<int>& parent, int ancestor, int node) {
  for (; node != Topology::kSource; node = parent[static_cast<std::size_t>(node)]) {
    if (node == ancestor) return true;
  }
  return false;
}

// The dependency every other one lies above, or nullopt when they sit on different branches.
std::optional<int> deepestOnOnePath(const std::vector<int>& parent,
                                    const std::set<int>& dependencies) {
  for (int candidate : dependencies) {
    if (std::all_of(dependencies.begin(), dependencies.end(),
                    [&](int other) { return isAncestorOrSelf(parent, other, candidate); })) {
      return candidate;
    }
  }
  return std::nullopt;
}

// Moves the branch holding `b` below `a`: the child of their lowest common ancestor on the
// way to `b` gets `a` as its parent.
void hangBranchBelow(std::vector<int>& parent, int a, int b) {
  int branch = b;
  while (parent[static_cast<std::size_t>(branch)] != Topology::kSource &&
         !isAncestorOrSelf(parent, parent[static_cast<std::size_t>(branch)], a)) {
    branch = parent[static_cast<std::size_t>(branch)];
  }
  parent[static_cast<std::size_t>(branch)] = a;
}

// Two dependencies on different branches (neither lies above the other).
std::pair<int, int> twoBranches(const std::vector<int>& parent, const std::set<int>& dependencies) {
  for (int a : dependencies) {
    for (int b : dependencies) {
      if (!isAncestorOrSelf(parent, a, b) && !isAncestorOrSelf(parent, b, a)) return {a, b};
    }
  }
  throw std::logic_error("graph topology: dependencies lie on one path");
}

int place(std::vector<int>& parent, const std::set<int>& dependencies) {
  if (dependencies.empty()) return Topology::kSource;
  while (true) {
    if (auto deepest = deepestOnOnePath(parent, dependencies)) return *deepest;
    const auto [a, b] = twoBranches(parent, dependencies);
    hangBranchBelow(parent, a, b);
  }
}

}  // namespace

Topology planTopology(channel_t first_virtual, const std::vector<TopologyNode>& virtual_nodes,
                      const std::vector<TopologyNode>& measurements) {
  Planner planner(first_virtual, virtual_nodes);
  Topology topology;
  topology.virtual_order = planner.order();
  topology.virtual_parent.assign(virtual_nodes.size(), Topology::kSource);
  for (std::size_t node : topology.virtual_order) {
    topology.virtual_parent[node] =
        place(topology.virtual_parent, planner.dependencies(virtual_nodes[node]));
  }
  for (const TopologyNode& measurement : measurements) {
    topology.measurement_stream.push_back(
        place(topology.virtual_parent, planner.dependencies(measurement)));
  }
  // Moving branches can put a node below one placed after it in the order; re-sort by depth
  // so every node still follows the one it reads.
  const auto depth = [&](std::size_t node) {
    int levels = 0;
    for (int at = static_cast<int>(node); at != Topology::kSource;
         at = topology.virtual_parent[static_cast<std::size_t>(at)]) {
      ++levels;
    }
    return levels;
  };
  std::stable_sort(topology.virtual_order.begin(), topology.virtual_order.end(),
                   [&](std::size_t a, std::size_t b) { return depth(a) < depth(b); });
  return topology;
}

int placeInFixedTopology(channel_t first_virtual, const std::vector<TopologyNode>& virtual_nodes,
                         const std::vector<int>& virtual_parent, const TopologyNode& node) {
  Planner planner(first_virtual, virtual_nodes);
  const auto dependencies = planner.dependencies(node);
  if (dependencies.empty()) return Topology::kSource;
  if (auto deepest = deepestOnOnePath(virtual_parent, dependencies)) return *deepest;
  throw InvalidArgument(node.label +
                        " reads virtual channels of two independent branches; while the graph "
                        "runs its branches are fixed: add it before the run");
}

}  // namespace tagflow::detail
