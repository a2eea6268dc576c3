// What the operating system counts about a receiving link, read before and after a link
// test so that a loss can be placed: the network interface's own counters
// (/sys/class/net/IF/statistics: errors, drops, ring overruns) and MTU, and the system-wide
// UDP counters of /proc/net/snmp (receive-buffer errors). Linux only; a counter the system
// does not provide reads as -1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tagflow {

struct LinkCounter {
  std::string name;
  std::int64_t value = -1;
};

// The interface that holds the IPv4 `address`; empty when none does (or 0.0.0.0).
std::string interfaceOf(const std::string& address);

// The interface's MTU, or -1 when it cannot be read.
int interfaceMtu(const std::string& interface);

// rx_packets, rx_bytes, rx_errors, rx_dropped, rx_missed_errors, rx_over_errors,
// rx_fifo_errors of the interface, then Udp InErrors and RcvbufErrors of the system.
std::vector<LinkCounter> readLinkCounters(const std::string& interface);

// after - before, counter by counter (-1 where either is unknown).
std::vector<LinkCounter> counterChanges(const std::vector<LinkCounter>& before,
                                        const std::vector<LinkCounter>& after);

}  // namespace tagflow
