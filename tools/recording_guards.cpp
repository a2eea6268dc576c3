#include "recording_guards.hpp"

#include <string>
#include <variant>

namespace tagflow::cli {

RecordingGuards::RecordingGuards(const RunConfig& config) {
  for (const MeasurementSpec& spec : config.measurements) {
    if (spec.kind != "FileWriter" || !spec.parameters.contains("path")) continue;
    if (const auto* path = std::get_if<std::string>(&spec.parameters.at("path"))) {
      guards_.push_back(std::make_unique<OutputGuard>(*path, true));
    }
  }
}

void RecordingGuards::commit() {
  for (const auto& guard : guards_) guard->commit();
}

}  // namespace tagflow::cli
