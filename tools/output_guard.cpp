#include "output_guard.hpp"

#include <unistd.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <system_error>
#include <vector>

#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow::cli {

namespace {

namespace fs = std::filesystem;

fs::file_type typeAt(const std::string& path) {
  std::error_code error;
  return fs::symlink_status(path, error).type();
}

// The later parts of the set at `path` that are the guard's to move and remove: anything but
// a regular file there (a link, a device) is written through and left in place.
std::vector<std::string> regularLaterParts(const std::string& path) {
  std::vector<std::string> parts = TagFileWriter::laterParts(path);
  std::erase_if(parts,
                [](const std::string& part) { return typeAt(part) != fs::file_type::regular; });
  return parts;
}

}  // namespace

OutputGuard::OutputGuard(const std::string& path, bool tag_file_set, OnFailure on_failure)
    : path_(path),
      tag_file_set_(tag_file_set),
      on_failure_(on_failure),
      exceptions_(std::uncaught_exceptions()) {
  const fs::file_type type = typeAt(path);
  owns_path_ = type == fs::file_type::not_found || type == fs::file_type::regular;
  if (!owns_path_) return;
  std::vector<std::string> existing;
  if (tag_file_set_) existing = regularLaterParts(path);
  if (type == fs::file_type::regular) existing.insert(existing.begin(), path);
  const std::string suffix = ".tagflow-previous-" + std::to_string(::getpid());
  for (const std::string& file : existing) {
    std::error_code error;
    fs::rename(file, file + suffix, error);
    if (error) {
      // Put back what was moved: the destructor of a guard never made does not run.
      std::error_code ignored;
      for (const MovedAside& earlier : moved_) fs::rename(earlier.aside, earlier.path, ignored);
      throw IoError("cannot move the earlier '" + file + "' aside before writing '" + path +
                    "': " + error.message());
    }
    moved_.push_back({file, file + suffix});
  }
}

std::vector<std::string> OutputGuard::movedAside() const {
  std::vector<std::string> paths;
  for (const MovedAside& earlier : moved_) paths.push_back(earlier.aside);
  return paths;
}

void OutputGuard::commit() {
  std::error_code ignored;
  for (const MovedAside& earlier : moved_) fs::remove(earlier.aside, ignored);
  moved_.clear();
  committed_ = true;
}

OutputGuard::~OutputGuard() {
  if (committed_) return;
  std::error_code ignored;
  const bool failed = std::uncaught_exceptions() > exceptions_;
  const bool kept = failed && on_failure_ == OnFailure::Keep && owns_path_ &&
                    typeAt(path_) == fs::file_type::regular;
  if (!failed || kept) {
    for (const MovedAside& earlier : moved_) fs::remove(earlier.aside, ignored);
    return;
  }
  if (owns_path_) {
    fs::remove(path_, ignored);
    if (tag_file_set_) {
      for (const std::string& part : regularLaterParts(path_)) fs::remove(part, ignored);
    }
  }
  for (const MovedAside& earlier : moved_) fs::rename(earlier.aside, earlier.path, ignored);
}

}  // namespace tagflow::cli
