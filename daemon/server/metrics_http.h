// metrics_http.h — a minimal HTTP/1.0 responder for Prometheus scrapes (GET /metrics) on the
// daemon's own loop. Local address only by intent (metrics_listen: 127.0.0.1:9464).
#ifndef XMEMD_METRICS_HTTP_H
#define XMEMD_METRICS_HTTP_H

#include "common/result.h"

#include <map>
#include <string>
#include <uv.h>

namespace xmem::server
{

class Daemon;

class MetricsServer
{
  public:
    explicit MetricsServer(Daemon *d) : m_d(d) {}
    // Binds and listens on HOST:PORT (checked by the config); the error says why not.
    Result<void> listen(const std::string &host_port);
    // Closes the listener and live scrapes; the object deletes itself when all are closed.
    void close();
    // One handle (listener or scrape) finished closing.
    void release();
    // A scrape of PEER (tcp_owner.h) closed.
    void peer_closed(const std::string &peer);

  private:
    static void on_connection(uv_stream_t *s, int status);
    Daemon *m_d;
    uv_tcp_t m_tcp{};
    int m_open = 0; // handles not yet closed: the listener and live scrape connections
    bool m_closing = false;
    std::map<std::string, int> m_by_peer; // live scrapes per peer (tcp_owner.h)
    friend struct Scrape;
};

} // namespace xmem::server
#endif
