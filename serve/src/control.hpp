// The page's controls (POST /api/control, docs/serve.md): start, stop, clear and start_for of
// one measurement, stop_run of the whole run, set of a virtual channel's live setting (the
// delay or coincidence window of an alignment). A bad request names what was wrong and the
// valid values; nothing is changed then.
#pragma once

#include <functional>
#include <string>

#include "tagflow/core/measurement_graph.hpp"

namespace tagflow::serve_detail {

struct ControlOutcome {
  bool ok = false;
  std::string error;  // when not ok
};

// `body` is the request's JSON text; `stop_run` ends the run. Once the stream has ended
// (`stream_ended`), a set is refused: no block would take it up.
ControlOutcome applyControl(MeasurementGraph& graph, const std::string& body,
                            const std::function<void()>& stop_run, bool stream_ended);

}  // namespace tagflow::serve_detail
