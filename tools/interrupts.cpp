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
// Written before the handlers can run, read by the handler: a plain buffer, no allocation.
char abandoned[4096] = {};
struct sigaction previous_int, previous_term;
bool installed = false;

void onSignal(int signal) {
  int none = 0;
  if (received.compare_exchange_strong(none, signal)) return;
  // The second: only async-signal-safe calls from here.
  if (abandoned[0] != '\0') ::unlink(abandoned);
  ::_exit(128 + signal);
}

}  // namespace

Interrupts::Interrupts(std::function<void()> stop) : stop_(std::move(stop)) {
  if (installed) throw std::logic_error("only one Interrupts at a time");
  received.store(0);
  abandoned[0] = '\0';
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

void Interrupts::abandon(const std::string& path) {
  const std::size_t n = std::min(path.size(), sizeof abandoned - 1);
  std::memcpy(abandoned, path.data(), n);
  abandoned[n] = '\0';
}

}  // namespace tagflow::cli
