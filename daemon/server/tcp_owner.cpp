// tcp_owner.cpp — the peer's uid from the kernel's TCP tables (tcp_owner.h).
#include "tcp_owner.h"

#include <arpa/inet.h>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <netinet/in.h>
#include <sstream>

namespace xmem::server
{
namespace
{

// An endpoint as /proc/net/tcp(6) prints it: each 32-bit word of the address as the host
// reads it, "%08X", then ":%04X" of the port.
std::string proc_endpoint(const sockaddr_storage &a)
{
    char buf[64];
    if (a.ss_family == AF_INET) {
        const auto &in = reinterpret_cast<const sockaddr_in &>(a);
        uint32_t word;
        std::memcpy(&word, &in.sin_addr, 4);
        std::snprintf(buf, sizeof buf, "%08X:%04X", word, ntohs(in.sin_port));
        return buf;
    }
    const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(a);
    std::string out;
    for (int i = 0; i < 4; ++i) {
        uint32_t word;
        std::memcpy(&word, reinterpret_cast<const char *>(&in6.sin6_addr) + 4 * i, 4);
        std::snprintf(buf, sizeof buf, "%08X", word);
        out += buf;
    }
    std::snprintf(buf, sizeof buf, ":%04X", ntohs(in6.sin6_port));
    return out + buf;
}

std::string address_text(const sockaddr_storage &a)
{
    char buf[INET6_ADDRSTRLEN] = "";
    if (a.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(a).sin_addr, buf, sizeof buf);
    else
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(a).sin6_addr, buf, sizeof buf);
    return buf;
}

// The uid column of the row whose local end is `local` and remote end `remote`, or -1.
long owner_in(const char *table, const std::string &local, const std::string &remote)
{
    std::ifstream in(table);
    std::string line;
    std::getline(in, line); // the header
    while (std::getline(in, line)) {
        std::istringstream row(line);
        std::string slot, l, r, state, queues, timer, retransmits;
        long uid = -1;
        if (row >> slot >> l >> r >> state >> queues >> timer >> retransmits >> uid && l == local &&
            r == remote)
            return uid;
    }
    return -1;
}

} // namespace

std::string tcp_peer_owner(const sockaddr_storage &peer, const sockaddr_storage &self)
{
    if ((peer.ss_family != AF_INET && peer.ss_family != AF_INET6) ||
        peer.ss_family != self.ss_family)
        return "";
    const char *table = peer.ss_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6";
    long uid = owner_in(table, proc_endpoint(peer), proc_endpoint(self));
    return uid >= 0 ? "uid:" + std::to_string(uid) : "addr:" + address_text(peer);
}

} // namespace xmem::server
