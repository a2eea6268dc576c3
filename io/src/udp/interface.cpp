#include "tagflow/io/udp/interface.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <fstream>
#include <sstream>

namespace tagflow {

namespace {

std::int64_t readNumber(const std::string& path) {
  std::ifstream in(path);
  std::int64_t value = -1;
  if (!(in >> value)) return -1;
  return value;
}

// The value of `field` in the "Udp:" header/value line pair of /proc/net/snmp.
std::int64_t udpCounter(const std::string& field) {
  std::ifstream in("/proc/net/snmp");
  std::string header, values;
  while (std::getline(in, header)) {
    if (header.rfind("Udp:", 0) != 0) continue;
    if (!std::getline(in, values)) return -1;
    std::istringstream names(header), numbers(values);
    std::string name, number;
    while (names >> name && numbers >> number) {
      if (name == field) return std::stoll(number);
    }
    return -1;
  }
  return -1;
}

}  // namespace

std::string interfaceOf(const std::string& address) {
  in_addr wanted{};
  if (inet_pton(AF_INET, address.c_str(), &wanted) != 1 || wanted.s_addr == INADDR_ANY) return {};
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string name;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if (ipv4->sin_addr.s_addr == wanted.s_addr) {
      name = entry->ifa_name;
      break;
    }
  }
  freeifaddrs(list);
  return name;
}

int interfaceMtu(const std::string& interface) {
  if (interface.empty()) return -1;
  return static_cast<int>(readNumber("/sys/class/net/" + interface + "/mtu"));
}

std::vector<LinkCounter> readLinkCounters(const std::string& interface) {
  std::vector<LinkCounter> counters;
  for (const char* name : {"rx_packets", "rx_bytes", "rx_errors", "rx_dropped", "rx_missed_errors",
                           "rx_over_errors", "rx_fifo_errors"}) {
    counters.push_back({name, interface.empty() ? -1
                                                : readNumber("/sys/class/net/" + interface +
                                                             "/statistics/" + name)});
  }
  counters.push_back({"udp_in_errors", udpCounter("InErrors")});
  counters.push_back({"udp_rcvbuf_errors", udpCounter("RcvbufErrors")});
  return counters;
}

std::vector<LinkCounter> counterChanges(const std::vector<LinkCounter>& before,
                                        const std::vector<LinkCounter>& after) {
  std::vector<LinkCounter> changes;
  for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
    const bool known = before[i].value >= 0 && after[i].value >= 0;
    changes.push_back({before[i].name, known ? after[i].value - before[i].value : -1});
  }
  return changes;
}

}  // namespace tagflow
