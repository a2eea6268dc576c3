#include "output_guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
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

// Renames without replacing: false (errno EEXIST) where `to` exists, so that no file is ever
// lost to a name that is taken. A file system that cannot rename so (EINVAL) gets a check
// before a plain rename.
bool renameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return true;
  }
  if (errno != EINVAL) return false;
  if (typeAt(to) != fs::file_type::not_found) {
    errno = EEXIST;
    return false;
  }
  return ::rename(from.c_str(), to.c_str()) == 0;
}

// Whether the process `digits` names has ended. Our own number counts as ended: this guard
// has moved nothing yet, so an aside under it is an earlier process's (a container's tagflow
// may run under the same number every time). A process of another number that still runs, or
// is not ours to signal, counts as alive.
bool processEnded(std::string_view digits) {
  long pid = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (error != std::errc{} || end != digits.data() + digits.size() || pid <= 0) return false;
  if (pid == ::getpid()) return true;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Whether `name` is the file name of `path` or, for a tag file set, of one of its later parts.
bool belongsToOutput(const std::string& name, const std::string& path, bool tag_file_set) {
  const std::string own = fs::path(path).filename().string();
  if (name == own) return true;
  if (!tag_file_set) return false;
  // A later part N is named stem.N followed by the extension (TagFileWriter::partPath).
  const std::string stem = fs::path(path).stem().string();
  const std::string extension = fs::path(path).extension().string();
  if (name.size() < stem.size() + extension.size() + 2 || !name.starts_with(stem + ".") ||
      !name.ends_with(extension)) {
    return false;
  }
  const std::string digits =
      name.substr(stem.size() + 1, name.size() - stem.size() - 1 - extension.size());
  return digits.size() <= 9 && digits.find_first_not_of("0123456789") == std::string::npos &&
         fs::path(TagFileWriter::partPath(path, static_cast<std::uint32_t>(std::stoul(digits))))
                 .filename()
                 .string() == name;
}

// The files of the output that an earlier command moved aside and, killed before it could
// end, never put back nor removed: `<file>.tagflow-previous-<pid>` of a process that has
// ended. They are put back (this command then guards them as any earlier output) only where
// the output is as that command found it before it wrote: none of the set's files there, and
// one aside for each. Otherwise the killed command may have recorded there after all, or
// left asides of two attempts, and they are all left and named.
void recoverStaleAsides(const std::string& path, bool tag_file_set) {
  const fs::path output(path);
  const fs::path folder = output.has_parent_path() ? output.parent_path() : fs::path(".");
  std::vector<std::pair<std::string, std::string>> stale;  // aside, original
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const std::size_t mark = name.rfind(kAsideMark);
    if (mark == std::string::npos || !processEnded(name.substr(mark + kAsideMark.size())) ||
        !belongsToOutput(name.substr(0, mark), path, tag_file_set)) {
      continue;
    }
    stale.emplace_back(entry.path().string(), (folder / name.substr(0, mark)).string());
  }
  if (stale.empty()) return;
  std::vector<std::string> originals;
  for (const auto& files : stale) originals.push_back(files.second);
  std::ranges::sort(originals);
  const bool claimed_twice = std::ranges::adjacent_find(originals) != originals.end();
  const bool output_there = typeAt(path) != fs::file_type::not_found ||
                            (tag_file_set && !TagFileWriter::laterParts(path).empty()) ||
                            std::ranges::any_of(originals, [](const std::string& original) {
                              return typeAt(original) != fs::file_type::not_found;
                            });
  for (const auto& [aside, original] : stale) {
    if (!claimed_twice && !output_there && renameNoReplace(aside, original)) {
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
    if (!renameNoReplace(file, file + suffix)) {
      const std::error_code error(errno, std::generic_category());
      // Put back what was moved: the destructor of a guard never made does not run.
      std::error_code ignored;
      for (const MovedAside& earlier : moved_) fs::rename(earlier.aside, earlier.path, ignored);
      throw IoError("cannot move the earlier '" + file + "' aside to '" + file + suffix +
                    "' before writing '" + path + "': " + error.message());
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
