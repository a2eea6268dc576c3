// requireFilePlace: unless `path` is a place for a file, an InvalidArgument (it is empty) or an
// IoError (something other than a regular file is there: a rename over a folder fails after
// all the work, and over a device, as root, replaces the device).
// replaceWhole: writes an output file whole or not at all. The content goes to a temporary file
// beside `path` (resultsTemporaryPath: path + ".tmp." + the process id), which then replaces
// `path` in one rename; if writing or the rename fails, the temporary is removed, `path` keeps
// what it held, and the error propagates (the rename's as an IoError naming `path` and
// `content`). Internal to the io library.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <type_traits>

#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"

namespace tagflow::hdf5 {

inline void requireFilePlace(const std::string& path, const std::string& content) {
  if (path.empty()) {
    throw InvalidArgument("the path for the " + content + " is empty (valid: a file's path)");
  }
  if (const auto nul = path.find('\0'); nul != std::string::npos) {
    throw InvalidArgument("the path for the " + content + " holds a NUL character at position " +
                          std::to_string(nul) + " (valid: a file's path, which has none)");
  }
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status) || std::filesystem::is_regular_file(status)) return;
  const char* kind = std::filesystem::is_directory(status)        ? "a folder"
                     : std::filesystem::is_character_file(status) ? "a character device"
                     : std::filesystem::is_block_file(status)     ? "a block device"
                     : std::filesystem::is_fifo(status)           ? "a pipe"
                     : std::filesystem::is_socket(status)         ? "a socket"
                                                                  : "not a regular file";
  throw IoError("cannot write the " + content + " to '" + path + "': it is " + kind +
                " (valid: a new file's path, or that of a file to replace)");
}

inline void moveInto(const std::string& temporary, const std::string& path,
                     const std::string& content) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw IoError("cannot move " + content + " into '" + path + "': " + std::strerror(errno));
  }
}

// `write(temporary)` creates and fills the temporary file; what it returns is returned.
template <typename Write>
auto replaceWhole(const std::string& path, const std::string& content, Write write) {
  requireFilePlace(path, content);
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
