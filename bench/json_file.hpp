// Writes a benchmark's figures as indented JSON and says where; throws if the file cannot be
// written.
#pragma once

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace tagflow::bench {

inline void writeJsonFile(const std::string& path, const nlohmann::json& json) {
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write " + path);
  std::cout << "json written to " << path << "\n";
}

}  // namespace tagflow::bench
