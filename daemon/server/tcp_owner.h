// tcp_owner.h — who is on the other end of a TCP connection to the metrics port, so that one
// user's idle connections cannot take every scrape slot (issue 26, L4). A local peer is told
// by the uid owning its socket (the kernel's table in /proc/net/tcp and tcp6); a remote one,
// which has no uid here, by its address.
#ifndef XMEMD_TCP_OWNER_H
#define XMEMD_TCP_OWNER_H

#include <string>
#include <sys/socket.h>

namespace xmem::server
{

// "uid:N" for a peer socket of this host, "addr:IP" otherwise; "" when the addresses are
// neither IPv4 nor IPv6.
std::string tcp_peer_owner(const sockaddr_storage &peer, const sockaddr_storage &self);

} // namespace xmem::server
#endif
