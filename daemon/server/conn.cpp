/*
 * conn.cpp — one client connection: read exactly one frame (header checked, size limit
 * enforced before the body is read), hand it to dispatch, write one reply, close.
 * A frame must arrive within k_frame_timeout_ms and a reply be drained within
 * k_write_timeout_ms, so a stalled client holds nothing for long.
 */
#include "daemon.h"
#include "defaults.h"
#include "log.h"

#include <cstring>

namespace xmem::server
{

namespace
{

struct WriteReq {
    uv_write_t req;
    std::string data;
    Conn *conn;
};

void on_handle_closed(uv_handle_t *h)
{
    auto *c = static_cast<Conn *>(h->data);
    if (--c->open_handles == 0) {
        c->d->conns().erase(c);
        Daemon *d = c->d;
        delete c;
        d->maybe_finish_drain();
    }
}

void on_timeout(uv_timer_t *t)
{
    auto *c = static_cast<Conn *>(t->data);
    if (c->answered || c->job) {
        // Reply not drained (client never reads) — or, for a job, cannot happen: the timer is
        // stopped while a request is in progress.
        log_warn_throttled("write-timeout",
                           "closing a connection from uid %u whose client "
                           "does not read its reply",
                           (unsigned)c->peer.uid);
        conn_close(c);
        return;
    }
    if (c->buf.empty() && !c->have_header) {
        conn_close(c); // connected and said nothing: not worth a ledger row
        return;
    }
    refuse_frame(c, Outcome::truncated_frame,
                 "xmem: incomplete frame after " + std::to_string(k_frame_timeout_ms / 1000) +
                     " s (client stalled)");
}

void alloc_cb(uv_handle_t *h, size_t, uv_buf_t *buf)
{
    auto *c = static_cast<Conn *>(h->data);
    *buf = uv_buf_init(c->d->read_buffer(), (unsigned)c->d->read_buffer_size());
}

// Consumes buffered bytes; returns true once a whole frame was dispatched or refused.
bool try_frame(Conn *c)
{
    if (!c->have_header) {
        if (c->buf.size() < XMEM_FRAME_HEADER_SIZE)
            return false;
        int st = xmem_frame_decode(reinterpret_cast<const uint8_t *>(c->buf.data()),
                                   XMEM_MAX_REQUEST_BYTES, &c->hdr);
        if (st != XMEM_FRAME_OK) {
            Outcome o = st == XMEM_FRAME_ETOOBIG ? Outcome::frame_too_large : Outcome::bad_frame;
            std::string msg = std::string("xmem: ") + xmem_frame_strerror(st);
            if (st == XMEM_FRAME_ETOOBIG)
                msg += " (" + std::to_string(c->hdr.length) + " > " +
                       std::to_string(XMEM_MAX_REQUEST_BYTES) + " bytes)";
            refuse_frame(c, o, msg);
            return true;
        }
        if (c->hdr.type == XMEM_MSG_REPLY) {
            refuse_frame(c, Outcome::bad_frame, "xmem: a client may not send a reply frame");
            return true;
        }
        c->have_header = true;
        c->buf.erase(0, XMEM_FRAME_HEADER_SIZE);
        c->buf.reserve(c->hdr.length);
    }
    if (c->buf.size() < c->hdr.length)
        return false;
    if (c->buf.size() > c->hdr.length) {
        refuse_frame(c, Outcome::bad_frame,
                     "xmem: bytes after the frame (one request per "
                     "connection)");
        return true;
    }
    uv_timer_stop(&c->timer);
    dispatch_request(c, c->hdr.type, c->buf);
    std::string().swap(c->buf);
    // An estimate keeps reading, only to see its client leave (on_read): work nobody waits
    // for is then stopped. Anything else is answered and needs nothing more from the client.
    if (!c->job && !c->closing)
        uv_read_stop(reinterpret_cast<uv_stream_t *>(&c->pipe));
    return true;
}

void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    auto *c = static_cast<Conn *>(s->data);
    if (nread == UV_EOF || nread < 0) {
        if (c->job || c->answered) {
            conn_close(c);
        } else if (c->buf.empty() && !c->have_header) {
            conn_close(c);
        } else {
            c->answered = true; // nobody to answer; record the truncation
            refuse_frame(c, Outcome::truncated_frame,
                         "xmem: client disconnected mid-frame (" + std::to_string(c->buf.size()) +
                             " bytes received)");
        }
        return;
    }
    if (nread == 0 || c->answered || c->job)
        return; // bytes after a dispatched estimate are dropped (one request per connection)
    c->buf.append(buf->base, (std::size_t)nread);
    try_frame(c);
}

void on_write(uv_write_t *req, int status)
{
    auto *w = reinterpret_cast<WriteReq *>(req);
    Conn *c = w->conn;
    delete w;
    (void)status; // a client that left early is not an error of ours
    conn_close(c);
}

} // namespace

nlohmann::json outcome_reply(Outcome o, const std::string &message)
{
    return {{"outcome", static_cast<int>(o)},
            {"outcome_name", std::string(outcome_name(o))},
            {"message", message}};
}

void conn_start(Daemon *d, Conn *c)
{
    c->d = d;
    c->pipe.data = c;
    c->timer.data = c;
    c->open_handles = 2;
    uv_timer_init(d->loop(), &c->timer);
    uv_timer_start(&c->timer, on_timeout, k_frame_timeout_ms, 0);
    uv_read_start(reinterpret_cast<uv_stream_t *>(&c->pipe), alloc_cb, on_read);
}

void conn_reply(Conn *c, const nlohmann::json &body)
{
    if (c->closing)
        return;
    c->answered = true;
    auto *w = new WriteReq;
    w->conn = c;
    std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    w->data.resize(XMEM_FRAME_HEADER_SIZE);
    xmem_frame_encode(reinterpret_cast<uint8_t *>(&w->data[0]), XMEM_MSG_REPLY,
                      (uint32_t)text.size());
    w->data += text;
    uv_buf_t b = uv_buf_init(&w->data[0], (unsigned)w->data.size());
    uv_timer_start(&c->timer, on_timeout, k_write_timeout_ms, 0);
    int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t *>(&c->pipe), &b, 1, on_write);
    if (rc != 0) {
        delete w;
        conn_close(c);
    }
}

void conn_close(Conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    if (c->job) {
        // Recorded without an answer; its work ends unless an identical request waits for it.
        estimate_forget_conn(c->job);
        c->job = nullptr;
    }
    uv_close(reinterpret_cast<uv_handle_t *>(&c->pipe), on_handle_closed);
    uv_close(reinterpret_cast<uv_handle_t *>(&c->timer), on_handle_closed);
}

} // namespace xmem::server
