// RecordingGuards: an OutputGuard for the tag file set of every FileWriter of a configuration,
// made before the graph is built. A FileWriter creates (and so empties) its file when it is
// made, and errors are still found after that: a wiring error, another FileWriter's own
// checks, a port that is taken. Until commit(), such an error puts the earlier recordings back;
// commit() when the stream begins, after which a failed run keeps what it recorded.
#pragma once

#include <memory>
#include <vector>

#include "output_guard.hpp"
#include "run_config.hpp"

namespace tagflow::cli {

class RecordingGuards {
 public:
  explicit RecordingGuards(const RunConfig& config);

  void commit();

 private:
  std::vector<std::unique_ptr<OutputGuard>> guards_;
};

}  // namespace tagflow::cli
