// replaceWhole: writes an output file whole or not at all. The content goes to a temporary file
// beside `path` (resultsTemporaryPath: path + ".tmp." + the process id), which then replaces
// `path` in one rename; if writing or the rename fails, the temporary is removed, `path` keeps
// what it held, and the error propagates (the rename's as an IoError naming `path` and
// `content`). Internal to the io library.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"

namespace tagflow::hdf5 {

inline void moveInto(const std::string& temporary, const std::string& path,
                     const std::string& content) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw IoError("cannot move " + content + " into '" + path + "': " + std::strerror(errno));
  }
}

// `write(temporary)` creates and fills the temporary file; what it returns is returned.
template <typename Write>
auto replaceWhole(const std::string& path, const std::string& content, Write write) {
  const std::string temporary = resultsTemporaryPath(path);
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<Write&, const std::string&>>) {
      write(temporary);
      moveInto(temporary, path, content);
    } else {
      auto result = write(temporary);
      moveInto(temporary, path, content);
      return result;
    }
  } catch (...) {
    std::remove(temporary.c_str());
    throw;
  }
}

}  // namespace tagflow::hdf5
