/*
 * xmem_client.c — the public calls of xmem_client.h: build a JSON request with json-c, run
 * one exchange, map the reply's outcome onto the return code and the result struct.
 */
#define _GNU_SOURCE
#include "xmem_client.h"
#include "xmem_client_io.h"
#include "contract/xmem_proto.h"
#include "contract/outcomes.h"
#include "contract/request_env.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The environment a request carries (contract/request_env.h); the daemon re-filters anyway. */
static int env_relevant(const char *kv, size_t *keylen)
{
    const char *eq = strchr(kv, '=');
    if (!eq)
        return 0;
    *keylen = (size_t)(eq - kv);
    return xmem_request_env_kept(kv, *keylen);
}

/* [{"line": N, "text": "..."}, ...] */
static json_object *script_lines(const struct xmem_script_line *lines, int n)
{
    json_object *a = json_object_new_array();
    for (int i = 0; i < n; i++) {
        json_object *l = json_object_new_object();
        json_object_object_add(l, "line", json_object_new_int(lines[i].line));
        json_object_object_add(l, "text", json_object_new_string(lines[i].text));
        json_object_array_add(a, l);
    }
    return a;
}

static void add_str(json_object *o, const char *key, const char *v)
{
    if (v)
        json_object_object_add(o, key, json_object_new_string(v));
}

static json_object *estimate_body(const struct xmem_estimate_request *req, int deadline_ms)
{
    json_object *o = json_object_new_object();
    json_object *argv = json_object_new_array();
    for (const char *const *a = req->argv; *a; a++)
        json_object_array_add(argv, json_object_new_string(*a));
    json_object_object_add(o, "argv", argv);
    add_str(o, "script", req->script);
    add_str(o, "wrap", req->wrap);
    add_str(o, "cwd", req->cwd);
    json_object *env = json_object_new_object();
    int kept = 0;
    for (const char *const *e = req->env; e && *e && kept < XMEM_REQUEST_ENV_MAX_VARS; e++) {
        size_t kl;
        if (!env_relevant(*e, &kl))
            continue;
        char key[XMEM_REQUEST_ENV_MAX_NAME + 1];
        memcpy(key, *e, kl);
        key[kl] = '\0';
        json_object_object_add(env, key, json_object_new_string(*e + kl + 1));
        kept++;
    }
    json_object_object_add(o, "env", env);
    if (req->preamble_count > 0)
        json_object_object_add(o, "preamble", script_lines(req->preamble, req->preamble_count));
    if (req->skipped_count > 0)
        json_object_object_add(o, "preamble_skipped",
                               script_lines(req->skipped, req->skipped_count));
    add_str(o, "gpu", req->gpu);
    add_str(o, "partition", req->partition);
    add_str(o, "gres", req->gres);
    add_str(o, "torch", req->torch);
    json_object_object_add(o, "steps", json_object_new_int(req->steps));
    json_object_object_add(o, "check_only", json_object_new_boolean(req->check_only != 0));
    if (req->async_ok)
        json_object_object_add(o, "async", json_object_new_boolean(1));
    json_object_object_add(o, "deadline_ms", json_object_new_int(deadline_ms));
    return o;
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static uint64_t get_u64(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return 0;
    return (uint64_t)json_object_get_uint64(v);
}

static int get_int(json_object *o, const char *key, int dflt)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return dflt;
    return json_object_get_int(v);
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    if (!src)
        src = "";
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Parses a reply; returns the outcome or a negative client error. */
static int parse_reply(const char *socket_path, const char *text, json_object **out, char *err,
                       size_t errlen)
{
    json_object *o = json_tokener_parse(text);
    if (!o || !json_object_is_type(o, json_type_object) ||
        !json_object_object_get_ex(o, "outcome", NULL)) {
        json_object_put(o);
        xmem__seterr(err, errlen,
                     "xmem: malformed reply from xmemd at %s (not a JSON object "
                     "with an outcome; client and daemon versions differ?)",
                     socket_path);
        return XMEM_CLIENT_EPROTO;
    }
    *out = o;
    return get_int(o, "outcome", -1);
}

/* "line 5 'srun hostname', line 7 'python prepare.py'" from the reply's preamble_skipped. */
static void skipped_summary(json_object *o, char *buf, size_t cap)
{
    json_object *a, *l, *v;
    size_t used = 0;

    buf[0] = '\0';
    if (!json_object_object_get_ex(o, "preamble_skipped", &a) ||
        !json_object_is_type(a, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(a) && used + 1 < cap; i++) {
        l = json_object_array_get_idx(a, i);
        const char *text = get_str(l, "text");
        int line = json_object_object_get_ex(l, "line", &v) ? json_object_get_int(v) : 0;
        int n = snprintf(buf + used, cap - used, "%sline %d '%.80s'", i ? ", " : "", line,
                         text ? text : "");
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used >= cap && cap > 4)
        memcpy(buf + cap - 4, "...", 4);
}

static void fill_result(json_object *o, struct xmem_estimate_result *res)
{
    res->outcome = get_int(o, "outcome", -1);
    copy_str(res->outcome_name, sizeof(res->outcome_name), get_str(o, "outcome_name"));
    res->peak_bytes = get_u64(o, "peak_bytes");
    res->limit_bytes = get_u64(o, "limit_bytes");
    res->gpu_memory_bytes = get_u64(o, "gpu_memory_bytes");
    res->fits = get_int(o, "fits", 0);
    res->cached = get_int(o, "cached", 0);
    res->request_id = get_u64(o, "request_id");
    copy_str(res->gpu, sizeof(res->gpu), get_str(o, "gpu"));
    copy_str(res->entrypoint, sizeof(res->entrypoint), get_str(o, "entrypoint"));
    copy_str(res->decision, sizeof(res->decision), get_str(o, "decision"));
    copy_str(res->message, sizeof(res->message), get_str(o, "message"));
    skipped_summary(o, res->skipped, sizeof(res->skipped));
}

int xmem_client_estimate(const char *socket_path, int deadline_ms,
                         const struct xmem_estimate_request *req, struct xmem_estimate_result *res,
                         char *err, size_t errlen)
{
    char *reply = NULL;
    json_object *o = NULL;
    int rc;

    if (!socket_path || !req || !res || !req->argv || !req->argv[0] || !req->cwd ||
        deadline_ms <= 0) {
        xmem__seterr(err, errlen,
                     "xmem: estimate needs a socket path, argv, a working "
                     "directory and a positive deadline");
        return XMEM_CLIENT_EINVAL;
    }
    memset(res, 0, sizeof(*res));
    res->outcome = -1;
    json_object *body = estimate_body(req, deadline_ms);
    size_t len;
    const char *text = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &len);
    rc =
        xmem__exchange(socket_path, deadline_ms, XMEM_MSG_ESTIMATE, text, len, &reply, err, errlen);
    json_object_put(body);
    if (rc < 0)
        goto out;
    rc = parse_reply(socket_path, reply, &o, err, errlen);
    if (rc < 0)
        goto out;
    fill_result(o, res);
    if (res->outcome == XMEM_OUTCOME_estimated || res->outcome == XMEM_OUTCOME_exceeds_gpu ||
        (res->outcome == XMEM_OUTCOME_pending && req->async_ok)) {
        rc = XMEM_CLIENT_OK;
    } else if (res->outcome == XMEM_OUTCOME_busy) {
        xmem__seterr(err, errlen, "%s", res->message);
        rc = XMEM_CLIENT_EBUSY;
    } else {
        xmem__seterr(err, errlen, "%s", res->message);
        rc = XMEM_CLIENT_EREFUSED;
    }
out:
    json_object_put(o);
    free(reply);
    return rc;
}

/* Sends a status/stats/job_end request; success is outcome "recorded" or "answered". */
static int simple_call(const char *socket_path, int deadline_ms, uint16_t type, json_object *body,
                       json_object **reply_obj, char *err, size_t errlen)
{
    char *reply = NULL;
    size_t len;
    const char *text = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &len);
    int rc = xmem__exchange(socket_path, deadline_ms, type, text, len, &reply, err, errlen);
    if (rc == 0) {
        rc = parse_reply(socket_path, reply, reply_obj, err, errlen);
        if (rc == XMEM_OUTCOME_recorded || rc == XMEM_OUTCOME_answered) {
            rc = 0;
        } else if (rc >= 0) {
            const char *msg = get_str(*reply_obj, "message");
            xmem__seterr(err, errlen, "%s", msg && *msg ? msg : "xmem: xmemd refused the request");
            rc = rc == XMEM_OUTCOME_busy ? XMEM_CLIENT_EBUSY : XMEM_CLIENT_EREFUSED;
        }
    }
    free(reply);
    return rc;
}

static json_object *job_end_body(const struct xmem_job_end *job)
{
    json_object *body = json_object_new_object();
    json_object_object_add(body, "request_id", json_object_new_uint64(job->request_id));
    json_object_object_add(body, "job_id", json_object_new_uint64(job->job_id));
    json_object_object_add(body, "exit_status", json_object_new_int(job->exit_status));
    json_object_object_add(body, "elapsed_seconds", json_object_new_uint64(job->elapsed_seconds));
    json_object_object_add(body, "cuda_oom", json_object_new_boolean(job->cuda_oom != 0));
    add_str(body, "account", job->account && *job->account ? job->account : NULL);
    add_str(body, "partition", job->partition && *job->partition ? job->partition : NULL);
    if (job->has_measured_peak)
        json_object_object_add(body, "measured_peak_bytes",
                               json_object_new_uint64(job->measured_peak_bytes));
    if (job->has_job_uid)
        json_object_object_add(body, "job_uid", json_object_new_int64(job->job_uid));
    add_str(body, "enforcement", job->enforcement && *job->enforcement ? job->enforcement : NULL);
    json_object_object_add(body, "oom_requeued", json_object_new_boolean(job->oom_requeued != 0));
    if (job->share && *job->share && job->gpu_fraction > 0) {
        add_str(body, "share", job->share);
        json_object_object_add(body, "gpu_fraction", json_object_new_double(job->gpu_fraction));
        if (job->packed_limit_bytes)
            json_object_object_add(body, "packed_limit_bytes",
                                   json_object_new_uint64(job->packed_limit_bytes));
        if (job->packed_estimate_bytes)
            json_object_object_add(body, "packed_estimate_bytes",
                                   json_object_new_uint64(job->packed_estimate_bytes));
    }
    return body;
}

int xmem_client_job_end(const char *socket_path, int deadline_ms, const struct xmem_job_end *job,
                        char *err, size_t errlen)
{
    if (!socket_path || !job || deadline_ms <= 0) {
        xmem__seterr(err, errlen,
                     "xmem: job_end needs a socket path, a job and a positive "
                     "deadline");
        return XMEM_CLIENT_EINVAL;
    }
    json_object *body = job_end_body(job), *reply = NULL;
    int rc = simple_call(socket_path, deadline_ms, XMEM_MSG_JOB_END, body, &reply, err, errlen);
    json_object_put(body);
    if (job->record && job->record_len > 0) {
        const char *record = rc == 0 ? get_str(reply, "record") : NULL;
        job->record[0] = '\0';
        if (record && strlen(record) < job->record_len)
            strcpy(job->record, record);
    }
    json_object_put(reply);
    return rc < 0 ? rc : 0;
}

int xmem_client_query(const char *socket_path, int deadline_ms, const char *type, char **json_out,
                      char *err, size_t errlen)
{
    uint16_t t;
    if (json_out)
        *json_out = NULL;
    if (!socket_path || !type || !json_out || deadline_ms <= 0) {
        xmem__seterr(err, errlen,
                     "xmem: query needs a socket path, a type, an output pointer "
                     "and a positive deadline");
        return XMEM_CLIENT_EINVAL;
    }
    if (strcmp(type, "status") == 0)
        t = XMEM_MSG_STATUS;
    else if (strcmp(type, "stats") == 0)
        t = XMEM_MSG_STATS;
    else {
        xmem__seterr(err, errlen, "xmem: unknown query type '%s' (use status or stats)", type);
        return XMEM_CLIENT_EINVAL;
    }
    json_object *body = json_object_new_object(), *reply = NULL;
    int rc = simple_call(socket_path, deadline_ms, t, body, &reply, err, errlen);
    json_object_put(body);
    if (rc >= 0) {
        const char *s = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
        *json_out = strdup(s);
        rc = *json_out ? 0 : XMEM_CLIENT_EPROTO;
    }
    json_object_put(reply);
    return rc;
}
