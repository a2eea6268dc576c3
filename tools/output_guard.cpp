#include "output_guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
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

// The command that moved a file aside, from the aside's suffix HOST-PID-START: START is the
// process's start in clock ticks after boot, which tells it from a later process that reuses
// its number. A bare PID (an earlier form) is this host's, with its start unknown (0).
struct AsideMaker {
  std::string host;
  long pid = 0;
  std::uint64_t start = 0;
};

// The host name, as part of a file name: its characters other than letters, digits, '.' and
// '-' replaced, and at most 32 of them, so that the suffix leaves room for the file's own name.
std::string thisHost() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "localhost";
  std::string host(name.data());
  host.resize(std::min<std::size_t>(host.size(), 32));
  for (char& c : host) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-') c = '_';
  }
  return host;
}

// Start of a process (`self` or its number) in clock ticks after boot; 0 where it cannot be
// read.
std::uint64_t processStart(const std::string& process) {
  std::ifstream stat("/proc/" + process + "/stat");
  std::string line;
  std::getline(stat, line);
  // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
  const std::size_t name_end = line.rfind(')');
  if (name_end == std::string::npos) return 0;
  std::istringstream fields(line.substr(name_end + 1));
  std::string field;
  for (int number = 3; number < 22 && fields >> field; ++number) {
  }
  std::uint64_t start = 0;
  return fields >> start ? start : 0;
}

std::uint64_t ownStart() {
  static const std::uint64_t start = processStart("self");
  return start;
}

std::string asideSuffix() {
  return std::string(kAsideMark) + thisHost() + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(ownStart());
}

template <typename Number>
bool parseNumber(std::string_view digits, Number& value) {
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return error == std::errc{} && end == digits.data() + digits.size();
}

bool validPid(long pid) {
  return pid > 0 && pid <= std::numeric_limits<pid_t>::max();
}

std::optional<AsideMaker> makerOf(std::string_view suffix) {
  AsideMaker maker;
  const std::size_t start_at = suffix.rfind('-');
  if (start_at == std::string_view::npos) {
    maker.host = thisHost();
    if (!parseNumber(suffix, maker.pid) || !validPid(maker.pid)) return std::nullopt;
    return maker;
  }
  const std::size_t pid_at =
      start_at == 0 ? std::string_view::npos : suffix.rfind('-', start_at - 1);
  if (pid_at == std::string_view::npos || pid_at == 0) return std::nullopt;
  maker.host = std::string(suffix.substr(0, pid_at));
  if (!parseNumber(suffix.substr(pid_at + 1, start_at - pid_at - 1), maker.pid) ||
      !parseNumber(suffix.substr(start_at + 1), maker.start)) {
    return std::nullopt;
  }
  return validPid(maker.pid) ? std::optional<AsideMaker>(maker) : std::nullopt;
}

// Whether the command on this host that made an aside has ended. A process under its number
// that started at another time is a later one: so is this process, under its own number (a
// restarted container's tagflow may run under the same number every time), unless the start
// is its own too (another guard of this process, at work). The caller leaves asides of other
// hosts alone: whether their commands run cannot be seen from here.
bool makerEnded(const AsideMaker& maker) {
  if (maker.pid == ::getpid()) return maker.start != ownStart() || maker.start == 0;
  if (::kill(static_cast<pid_t>(maker.pid), 0) != 0 && errno == ESRCH) return true;
  if (maker.start == 0) return false;
  const std::uint64_t start = processStart(std::to_string(maker.pid));
  return start != 0 && start != maker.start;
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
// end, never put back nor removed: `<file>.tagflow-previous-<host>-<pid>-<start>` of a
// process that has ended. They are put back (this command then guards them as any earlier
// output) only where the output is as that command found it before it wrote: none of the
// set's files there, one aside for each, none made on another host. Otherwise the killed
// command may have recorded there after all, or left asides of two attempts, or may still
// run elsewhere, and they are all left and named.
void recoverStaleAsides(const std::string& path, bool tag_file_set) {
  const fs::path output(path);
  const fs::path folder = output.has_parent_path() ? output.parent_path() : fs::path(".");
  const std::string host = thisHost();
  struct Stale {
    std::string aside;
    std::string original;
    std::string elsewhere;  // the host of a command this one cannot see; empty: ended here
  };
  std::vector<Stale> stale;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const std::size_t mark = name.rfind(kAsideMark);
    if (mark == std::string::npos || !belongsToOutput(name.substr(0, mark), path, tag_file_set)) {
      continue;
    }
    const std::optional<AsideMaker> maker = makerOf(name.substr(mark + kAsideMark.size()));
    if (!maker || (maker->host == host && !makerEnded(*maker))) continue;
    stale.push_back({entry.path().string(), (folder / name.substr(0, mark)).string(),
                     maker->host == host ? std::string() : maker->host});
  }
  if (stale.empty()) return;
  std::vector<std::string> originals;
  for (const Stale& file : stale) originals.push_back(file.original);
  std::ranges::sort(originals);
  const bool claimed_twice = std::ranges::adjacent_find(originals) != originals.end();
  const bool from_elsewhere =
      std::ranges::any_of(stale, [](const Stale& file) { return !file.elsewhere.empty(); });
  const bool output_there = typeAt(path) != fs::file_type::not_found ||
                            (tag_file_set && !TagFileWriter::laterParts(path).empty()) ||
                            std::ranges::any_of(originals, [](const std::string& original) {
                              return typeAt(original) != fs::file_type::not_found;
                            });
  for (const Stale& file : stale) {
    if (!claimed_twice && !from_elsewhere && !output_there &&
        renameNoReplace(file.aside, file.original)) {
      std::cerr << "note: put back '" << file.original
                << "', which an earlier tagflow command had moved aside and, killed, never put "
                   "back\n";
    } else if (!file.elsewhere.empty()) {
      std::cerr << "warning: '" << file.aside << "' holds an earlier '" << file.original
                << "' that a tagflow command on host '" << file.elsewhere
                << "' moved aside; whether it still runs cannot be seen from here, so it stays "
                   "there: rename it back once that command has ended, or remove it\n";
    } else {
      std::cerr << "warning: '" << file.aside << "' holds an earlier '" << file.original
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
  const std::string suffix = asideSuffix();
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
