// OutputGuard: the file a command is writing, removed if the command leaves by an exception, so
// that a failed command leaves no half-written output (exit 1: no output file left); the parts
// of a tag file set (path.1.tags, ...) go with it. Made once the output is opened: whatever
// was at the path before is gone by then.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow::cli {

class OutputGuard {
 public:
  explicit OutputGuard(std::string path)
      : path_(std::move(path)), exceptions_(std::uncaught_exceptions()) {}
  ~OutputGuard() {
    if (std::uncaught_exceptions() <= exceptions_) return;
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
    for (std::uint32_t part = 1;
         std::filesystem::remove(TagFileWriter::partPath(path_, part), ignored); ++part) {
    }
  }
  OutputGuard(const OutputGuard&) = delete;
  OutputGuard& operator=(const OutputGuard&) = delete;

 private:
  std::string path_;
  int exceptions_;
};

}  // namespace tagflow::cli
