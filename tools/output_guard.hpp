// OutputGuard: made before a command opens its output, so that a failed command leaves the
// files as they were (exit 1: no half-written output). A regular file already at the path,
// and for a tag file set the parts path.1.tags, ... of an earlier one, are moved aside first:
// put back if the command leaves by an exception, removed once it succeeds (so no stale part
// follows a new set). What the command wrote is removed on failure. Anything else at the path
// (a device, a pipe, a symbolic link) is written through and never removed. Files that an
// earlier command moved aside and, killed, never put back
// (`<file>.tagflow-previous-<host>-<pid>-<start>` of a process of this host that has ended)
// are put back first where none of them is there again, and named on stderr otherwise.
#pragma once

#include <string>
#include <vector>

namespace tagflow::cli {

class OutputGuard {
 public:
  // What a failed command leaves at the path: nothing (its output removed, the earlier files
  // put back), or, for a recording of a stream that cannot be read again, what it wrote (the
  // earlier files then removed, as after success; put back only where nothing was written).
  enum class OnFailure { Remove, Keep };

  // `tag_file_set`: the output is a tag file, whose later parts are its own too.
  OutputGuard(const std::string& path, bool tag_file_set, OnFailure on_failure = OnFailure::Remove);
  ~OutputGuard();
  OutputGuard(const OutputGuard&) = delete;
  OutputGuard& operator=(const OutputGuard&) = delete;

  // From here on the output stands whatever happens (a recording has begun): the earlier
  // files are removed now, and a later failure leaves what was written.
  void commit();

  // Whether the path is a file of the command's own, which a failure removes.
  bool ownsPath() const { return owns_path_; }
  // Where the earlier files were moved.
  std::vector<std::string> movedAside() const;

 private:
  struct MovedAside {
    std::string path;
    std::string aside;
  };

  std::string path_;
  bool tag_file_set_;
  OnFailure on_failure_;
  bool owns_path_ = true;
  std::vector<MovedAside> moved_;
  bool committed_ = false;
  int exceptions_;
};

}  // namespace tagflow::cli
