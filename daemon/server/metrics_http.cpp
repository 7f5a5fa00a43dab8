// metrics_http.cpp — read one request (bounded), answer it, close.
#include "metrics_http.h"
#include "daemon.h"
#include "defaults.h"
#include "tcp_owner.h"

#include <cstdlib>
#include <cstring>

namespace xmem::server
{

// One scrape: its connection and its deadline timer, two handles closed together.
struct Scrape {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_write_t write;
    MetricsServer *server;
    std::string in, out;
    std::string peer; // counted in MetricsServer::m_by_peer while live; "" when not counted
    int handles = 0;
    bool closing = false;
};

namespace
{

void scrape_closed(uv_handle_t *h)
{
    auto *s = static_cast<Scrape *>(h->data);
    if (--s->handles > 0)
        return;
    MetricsServer *server = s->server;
    if (!s->peer.empty())
        server->peer_closed(s->peer);
    delete s;
    server->release();
}

void scrape_close(Scrape *s)
{
    if (s->closing)
        return;
    s->closing = true;
    uv_close(reinterpret_cast<uv_handle_t *>(&s->tcp), scrape_closed);
    uv_close(reinterpret_cast<uv_handle_t *>(&s->timer), scrape_closed);
}

} // namespace

void MetricsServer::peer_closed(const std::string &peer)
{
    if (--m_by_peer[peer] <= 0)
        m_by_peer.erase(peer);
}

void MetricsServer::release()
{
    if (--m_open == 0 && m_closing)
        delete this;
}

Result<void> MetricsServer::listen(const std::string &hp)
{
    auto colon = hp.rfind(':');
    std::string host = hp.substr(0, colon);
    int port = std::atoi(hp.substr(colon + 1).c_str()); // 1..65535, checked by config.cpp
    struct sockaddr_storage addr {
    };
    int rc = uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in *>(&addr));
    if (rc != 0)
        rc = uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6 *>(&addr));
    if (rc != 0)
        return Result<void>::fail("not an IP address: " + host);
    uv_tcp_init(m_d->loop(), &m_tcp);
    m_tcp.data = this;
    m_open = 1;
    rc = uv_tcp_bind(&m_tcp, reinterpret_cast<sockaddr *>(&addr), 0);
    if (rc == 0)
        rc = uv_listen(reinterpret_cast<uv_stream_t *>(&m_tcp), 64, on_connection);
    if (rc != 0)
        return Result<void>::fail("cannot listen on " + hp + ": " + uv_strerror(rc));
    return Result<void>::success();
}

void MetricsServer::close()
{
    m_closing = true;
    uv_close(reinterpret_cast<uv_handle_t *>(&m_tcp),
             [](uv_handle_t *h) { static_cast<MetricsServer *>(h->data)->release(); });
}

void MetricsServer::on_connection(uv_stream_t *ls, int status)
{
    auto *self = static_cast<MetricsServer *>(ls->data);
    if (status < 0 || self->m_closing)
        return;
    auto *s = new Scrape;
    s->server = self;
    uv_tcp_init(self->m_d->loop(), &s->tcp);
    uv_timer_init(self->m_d->loop(), &s->timer);
    s->tcp.data = s->timer.data = s;
    s->handles = 2;
    self->m_open++; // one per scrape: released when both its handles are closed
    // Accepted even when over the bound, so the kernel's backlog drains; then closed at once.
    if (uv_accept(ls, reinterpret_cast<uv_stream_t *>(&s->tcp)) != 0 ||
        self->m_open - 1 > k_metrics_max_connections) {
        scrape_close(s);
        return;
    }
    // One peer's share of the connections: past it, closed at once.
    sockaddr_storage peer{}, here{};
    int plen = sizeof peer, hlen = sizeof here;
    if (uv_tcp_getpeername(&s->tcp, reinterpret_cast<sockaddr *>(&peer), &plen) == 0 &&
        uv_tcp_getsockname(&s->tcp, reinterpret_cast<sockaddr *>(&here), &hlen) == 0) {
        std::string owner = tcp_peer_owner(peer, here);
        if (!owner.empty() && self->m_by_peer[owner] >= k_metrics_max_per_peer) {
            scrape_close(s);
            return;
        }
        if (!owner.empty()) {
            s->peer = owner;
            self->m_by_peer[owner]++;
        }
    }
    // A scrape that neither asks nor drains its answer in time is closed (slow-loris bound).
    uv_timer_start(
        &s->timer, [](uv_timer_t *t) { scrape_close(static_cast<Scrape *>(t->data)); },
        k_metrics_timeout_ms, 0);
    uv_read_start(
        reinterpret_cast<uv_stream_t *>(&s->tcp),
        [](uv_handle_t *h, size_t, uv_buf_t *b) {
            auto *sc = static_cast<Scrape *>(h->data);
            Daemon *d = sc->server->m_d;
            *b = uv_buf_init(d->read_buffer(), (unsigned)d->read_buffer_size());
        },
        [](uv_stream_t *st, ssize_t n, const uv_buf_t *b) {
            auto *sc = static_cast<Scrape *>(st->data);
            if (n < 0) {
                scrape_close(sc);
                return;
            }
            sc->in.append(b->base, (size_t)n);
            if (sc->in.size() > k_metrics_request_max) {
                scrape_close(sc);
                return;
            }
            if (sc->in.find("\r\n\r\n") == std::string::npos &&
                sc->in.find("\n\n") == std::string::npos)
                return;
            uv_read_stop(st);
            bool ok = sc->in.rfind("GET /metrics", 0) == 0;
            std::string body = ok ? sc->server->m_d->metrics().prometheus(sc->server->m_d->gauges())
                                  : "only GET /metrics is served here\n";
            sc->out = std::string(ok ? "HTTP/1.0 200 OK\r\n" : "HTTP/1.0 404 Not Found\r\n") +
                      "Content-Type: text/plain; version=0.0.4\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
            uv_buf_t out = uv_buf_init(&sc->out[0], (unsigned)sc->out.size());
            sc->write.data = sc;
            if (uv_write(&sc->write, st, &out, 1, [](uv_write_t *w, int) {
                    scrape_close(static_cast<Scrape *>(w->data));
                }) != 0)
                scrape_close(sc);
        });
}

} // namespace xmem::server
