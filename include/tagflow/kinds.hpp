// Every kind of every library by name: the measurements (FileWriter included), the virtual
// channels and the sources that configuration files, the command line and Python can build,
// each with its declaration of settings.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/channels/registry.hpp"
#include "tagflow/core/kind_registry.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/measurements/registry.hpp"

namespace tagflow {

inline const std::vector<MeasurementKind>& allMeasurementKinds() {
  static const std::vector<MeasurementKind> kinds = [] {
    std::vector<MeasurementKind> all = measurementKinds();
    all.push_back(fileWriterKind());
    return all;
  }();
  return kinds;
}

// Throws InvalidArgument naming an unknown kind (and the known ones) or a bad key or value.
inline std::unique_ptr<Measurement> makeMeasurement(std::string_view kind, const std::string& name,
                                                    const Parameters& parameters) {
  return makeNode(allMeasurementKinds(), kind, name, parameters, "measurement");
}

}  // namespace tagflow
