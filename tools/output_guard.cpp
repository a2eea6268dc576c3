#include "output_guard.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string_view>
#include <system_error>
#include <utility>
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

constexpr std::string_view kAsideMark = ".tagflow-previous-";

// Whether the process `digits` names has ended (a process of that number still running, or
// one that is not ours to signal, counts as alive).
bool processEnded(std::string_view digits) {
  long pid = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (error != std::errc{} || end != digits.data() + digits.size() || pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Whether `name` names the file at `path` or, for a tag file set, one of its later parts
// (stem.N.extension).
bool belongsToOutput(const fs::path& name, const fs::path& path, bool tag_file_set) {
  if (name == path.filename()) return true;
  if (!tag_file_set || name.extension() != path.extension()) return false;
  const fs::path stem = name.stem();
  const std::string part = stem.extension().string();  // ".N"
  return stem.stem() == path.stem() && part.size() > 1 &&
         part.find_first_not_of("0123456789", 1) == std::string::npos;
}

// The files of the output that an earlier command moved aside and, killed before it could
// end, never put back nor removed: `<file>.tagflow-previous-<pid>` of a process that has
// ended. If none of their files is there again, they are put back (this command then guards
// them as any earlier output); otherwise the command that was killed may have recorded there
// after all, and they are left and named.
void recoverStaleAsides(const std::string& path, bool tag_file_set) {
  const fs::path output(path);
  const fs::path folder = output.has_parent_path() ? output.parent_path() : fs::path(".");
  std::vector<std::pair<std::string, std::string>> stale;  // aside, original
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const std::size_t mark = name.rfind(kAsideMark);
    if (mark == std::string::npos || !processEnded(name.substr(mark + kAsideMark.size())) ||
        !belongsToOutput(name.substr(0, mark), output, tag_file_set)) {
      continue;
    }
    stale.emplace_back(entry.path().string(), (folder / name.substr(0, mark)).string());
  }
  const bool any_there = std::ranges::any_of(
      stale, [](const auto& files) { return typeAt(files.second) != fs::file_type::not_found; });
  for (const auto& [aside, original] : stale) {
    std::error_code rename_error;
    if (!any_there) fs::rename(aside, original, rename_error);
    if (!any_there && !rename_error) {
      std::cerr << "note: put back '" << original
                << "', which an earlier tagflow command had moved aside and, killed, never put "
                   "back\n";
    } else {
      std::cerr << "warning: '" << aside << "' holds an earlier '" << original
                << "' that a tagflow command, killed, left moved aside; it stays there: rename "
                   "it back to keep it, or remove it\n";
    }
  }
}

}  // namespace

OutputGuard::OutputGuard(const std::string& path, bool tag_file_set, OnFailure on_failure)
    : path_(path),
      tag_file_set_(tag_file_set),
      on_failure_(on_failure),
      exceptions_(std::uncaught_exceptions()) {
  recoverStaleAsides(path, tag_file_set);
  const fs::file_type type = typeAt(path);
  owns_path_ = type == fs::file_type::not_found || type == fs::file_type::regular;
  if (!owns_path_) return;
  std::vector<std::string> existing;
  if (tag_file_set_) existing = regularLaterParts(path);
  if (type == fs::file_type::regular) existing.insert(existing.begin(), path);
  const std::string suffix = std::string(kAsideMark) + std::to_string(::getpid());
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
