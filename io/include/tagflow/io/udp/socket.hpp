// The operating-system side of the stream link: IPv4 addresses and ports checked with clear
// errors, an owned socket descriptor, and pinning the calling thread to one CPU. Bad values
// are InvalidArgument naming the value and the valid range; refusals of the system (a port
// in use, no permission) are IoError naming the address and the system's reason.
#pragma once

#include <netinet/in.h>

#include <string>
#include <string_view>
#include <utility>

namespace tagflow {

struct UdpEndpoint {
  std::string address;  // dotted IPv4
  int port = 0;

  std::string text() const { return address + ":" + std::to_string(port); }
};

// "ADDRESS:PORT" (the port required) into an endpoint; `what` names it in errors.
UdpEndpoint parseEndpoint(std::string_view text, std::string_view what);

// Checks and converts; port 0 is accepted only where `allow_any_port` (a receiver that lets
// the system choose).
sockaddr_in socketAddress(const UdpEndpoint& endpoint, std::string_view what,
                          bool allow_any_port = false);

class SocketFd {
 public:
  SocketFd() = default;
  explicit SocketFd(int fd) : fd_(fd) {}
  ~SocketFd();
  SocketFd(SocketFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  SocketFd& operator=(SocketFd&& other) noexcept;
  SocketFd(const SocketFd&) = delete;
  SocketFd& operator=(const SocketFd&) = delete;

  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// Sets SO_RCVBUF or SO_SNDBUF to `bytes`, beyond the system limit where the process may
// (SO_*BUFFORCE as root), and returns what the kernel granted.
int setSocketBuffer(int fd, bool receive, int bytes);

// Pins the calling thread to `cpu`; -1 leaves it alone. Throws InvalidArgument naming the
// CPU and the ones this process may use.
void pinCurrentThread(int cpu, std::string_view who);
// Throws like pinCurrentThread, without pinning: for checking options before a run.
void checkCpu(int cpu, std::string_view who);

std::string systemErrorText(int error);

}  // namespace tagflow
