// The JSON the live view reads (docs/serve.md): the graph's description (measurements and
// their parameters) and snapshots of the run (state, live profile, source statistics, every
// measurement's results read through the same locked getters as from C++).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/parameters.hpp"
#include "tagflow/core/profile.hpp"
#include "tagflow/core/result_set.hpp"
#include "tagflow/core/source.hpp"

namespace tagflow::serve_detail {

struct RunStatus {
  std::string state = "running";  // running, finished, stopped, failed
  std::string error;
};

nlohmann::json parametersJson(const Parameters& parameters);
nlohmann::json profileJson(const Profile& profile);
nlohmann::json resultsJson(const ResultSet& results);

nlohmann::json graphJson(const MeasurementGraph& graph, const Source& source, double update_hz);

// Each measurement's entry of a snapshot: its results, running, capture duration and overflow
// count. One whose results cannot be read (a Python measurement's results() raised) is left
// out, and `unreadable` gets its name and the reason.
nlohmann::json measurementsJson(const MeasurementGraph& graph,
                                std::vector<std::string>& unreadable);

// Each virtual channel's entry of a snapshot: name, kind, output channels and the settings
// that may change while the stream runs, with their values now.
nlohmann::json channelsJson(const MeasurementGraph& graph);

// `profile` is the live one while the run goes on, the run's own once it has ended.
nlohmann::json snapshotJson(std::uint64_t sequence, double elapsed_s, const RunStatus& status,
                            const Profile& profile, const Source& source,
                            nlohmann::json measurements, nlohmann::json channels);

}  // namespace tagflow::serve_detail
