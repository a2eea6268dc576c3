#include "interrupts.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tagflow::cli {

namespace {

std::atomic<int> received{0};
// Read by the handler, so plain buffers, no allocation: the paths one after the other, each
// ending in a NUL, the list in an empty one. abandon() fills the buffer not in use, then
// switches, so that a handler never reads a list half written.
char abandon_lists[2][65536] = {};
std::atomic<const char*> abandoned{abandon_lists[0]};
struct sigaction previous_int, previous_term;
bool installed = false;

void onSignal(int signal) {
  int none = 0;
  if (received.compare_exchange_strong(none, signal)) return;
  // The second: only async-signal-safe calls from here.
  for (const char* path = abandoned.load(); *path != '\0'; path += std::strlen(path) + 1) {
    ::unlink(path);
  }
  ::_exit(128 + signal);
}

}  // namespace

Interrupts::Interrupts(std::function<void()> stop) : stop_(std::move(stop)) {
  if (installed) throw std::logic_error("only one Interrupts at a time");
  received.store(0);
  abandon({});
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
  installed = true;
  watcher_ = std::thread([this] {
    while (!done_.load()) {
      if (const int signal = received.load(); signal != 0) {
        std::fprintf(stderr,
                     "\ntagflow: %s: finishing at the next block and writing what was measured "
                     "(again to abort)\n",
                     signal == SIGINT ? "interrupted" : "terminated");
        stop_();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

Interrupts::~Interrupts() {
  done_.store(true);
  watcher_.join();
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
  installed = false;
}

bool Interrupts::interrupted() const {
  return received.load() != 0;
}

int Interrupts::exitCode() const {
  const int signal = received.load();
  return signal == 0 ? 0 : 128 + signal;
}

void Interrupts::abandon(const std::vector<std::string>& paths) {
  char* list = abandoned.load() == abandon_lists[0] ? abandon_lists[1] : abandon_lists[0];
  std::size_t used = 0;
  for (const std::string& path : paths) {
    if (path.empty() || used + path.size() + 2 > sizeof abandon_lists[0]) continue;
    std::memcpy(list + used, path.c_str(), path.size() + 1);
    used += path.size() + 1;
  }
  list[used] = '\0';
  abandoned.store(list);
}

}  // namespace tagflow::cli
