#include "recording_guards.hpp"

namespace tagflow::cli {

RecordingGuards::RecordingGuards(const RunConfig& config) {
  for (const Recording& recording : recordingsOf(config)) {
    guards_.push_back(std::make_unique<OutputGuard>(recording.path, true));
  }
}

void RecordingGuards::commit() {
  for (const auto& guard : guards_) guard->commit();
}

}  // namespace tagflow::cli
