// Interrupts: SIGINT and SIGTERM for the commands that run a while. The first signal asks the
// command to finish: `stop` runs (from a thread of its own, not the signal handler), the
// command ends its stream at the next block, writes what it has, says so and exits with
// 128 + the signal (130 for Ctrl-C, 143 for SIGTERM). A second signal ends the process at
// once, removing the files named by abandon() first, so that nothing half-written is left.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace tagflow::cli {

class Interrupts {
 public:
  // Installs the handlers; the previous ones come back at destruction. One at a time.
  explicit Interrupts(std::function<void()> stop);
  ~Interrupts();
  Interrupts(const Interrupts&) = delete;
  Interrupts& operator=(const Interrupts&) = delete;

  bool interrupted() const;
  // 128 + the signal, or 0 when none came.
  int exitCode() const;
  // The files a second signal removes before the process ends (none by default).
  static void abandon(const std::vector<std::string>& paths);

 private:
  std::function<void()> stop_;
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

}  // namespace tagflow::cli
