#include "tagflow/io/udp/socket.hpp"

#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

std::string allowedCpus(const cpu_set_t& set) {
  std::string text;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (!text.empty()) text += ",";
    text += std::to_string(cpu);
    if (last > cpu) text += ".." + std::to_string(last);
    cpu = last;
  }
  return text;
}

cpu_set_t checkedCpuSet(int cpu, std::string_view who) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    throw IoError(std::string(who) +
                  ": cannot read the CPUs this process may use: " + systemErrorText(errno));
  }
  if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
    throw InvalidArgument(std::string(who) + ": CPU " + std::to_string(cpu) +
                          " is not available (valid: -1 for any, or " + allowedCpus(allowed) + ")");
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return one;
}

}  // namespace

std::string systemErrorText(int error) {
  return std::strerror(error);
}

UdpEndpoint parseEndpoint(std::string_view text, std::string_view what) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    throw InvalidArgument(std::string(what) + " '" + std::string(text) +
                          "' is invalid (valid: IPV4_ADDRESS:PORT, e.g. 127.0.0.1:4750)");
  }
  UdpEndpoint endpoint;
  endpoint.address = std::string(text.substr(0, colon));
  const std::string_view port = text.substr(colon + 1);
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), endpoint.port);
  if (error != std::errc() || end != port.data() + port.size() || port.empty()) {
    throw InvalidArgument(std::string(what) + " port '" + std::string(port) +
                          "' is invalid (valid: 1..65535)");
  }
  return endpoint;
}

sockaddr_in socketAddress(const UdpEndpoint& endpoint, std::string_view what, bool allow_any_port) {
  const int lowest = allow_any_port ? 0 : 1;
  if (endpoint.port < lowest || endpoint.port > 65535) {
    throw InvalidArgument(std::string(what) + " port " + std::to_string(endpoint.port) +
                          " is invalid (valid: " + std::to_string(lowest) + "..65535" +
                          (allow_any_port ? ", 0 lets the system choose)" : ")"));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(endpoint.port));
  if (inet_pton(AF_INET, endpoint.address.c_str(), &address.sin_addr) != 1) {
    throw InvalidArgument(std::string(what) + " address '" + endpoint.address +
                          "' is invalid (valid: a dotted IPv4 address such as 192.168.1.10)");
  }
  return address;
}

SocketFd::~SocketFd() {
  if (fd_ >= 0) ::close(fd_);
}

SocketFd& SocketFd::operator=(SocketFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

int setSocketBuffer(int fd, bool receive, int bytes) {
  const int option = receive ? SO_RCVBUF : SO_SNDBUF;
  const int forced = receive ? SO_RCVBUFFORCE : SO_SNDBUFFORCE;
  if (setsockopt(fd, SOL_SOCKET, forced, &bytes, sizeof bytes) != 0) {
    setsockopt(fd, SOL_SOCKET, option, &bytes, sizeof bytes);  // capped by net.core.*mem_max
  }
  int granted = 0;
  socklen_t length = sizeof granted;
  getsockopt(fd, SOL_SOCKET, option, &granted, &length);
  return granted / 2;  // the kernel reports twice the payload room it books
}

void checkCpu(int cpu, std::string_view who) {
  if (cpu != -1) checkedCpuSet(cpu, who);
}

void pinCurrentThread(int cpu, std::string_view who) {
  if (cpu == -1) return;
  const cpu_set_t one = checkedCpuSet(cpu, who);
  const int error = pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  if (error != 0) {
    throw IoError(std::string(who) + ": cannot pin to CPU " + std::to_string(cpu) + ": " +
                  systemErrorText(error));
  }
}

}  // namespace tagflow
