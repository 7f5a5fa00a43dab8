/*
 * request_env.h — the environment variables an estimate request carries (docs/protocol.md,
 * "env", says why each is in or out): the ones that decide what the profile of a job runs,
 * i.e. which interpreter, which torch, which libraries, which allocator settings. The client
 * sends only these; xmemd keeps only these (sorted by name: the cache key hashes them) and
 * passes them to the profile's environment, after it has dropped root.
 *
 * A variable is kept when its name is one of XMEM_REQUEST_ENV_NAMES, or starts with one of
 * XMEM_REQUEST_ENV_PREFIXES, and contains none of XMEM_REQUEST_ENV_SECRET_WORDS in any case:
 * a token (HF_TOKEN, HF_Token) never decides the memory of a run, and the request is stored
 * in the ledger. xmemd's ledger redaction (daemon/server/redact.h) uses the same words.
 * Loader and shell start-up variables (LD_PRELOAD, BASH_ENV, ENV, BASH_FUNC_*) stay out.
 *
 * PYTORCH_ALLOC_CONF is the name PyTorch 2.9+ reads first (PYTORCH_CUDA_ALLOC_CONF is the
 * older one); xmem-estimate reads both for the allocator settings it simulates.
 */
#ifndef XMEM_CONTRACT_REQUEST_ENV_H
#define XMEM_CONTRACT_REQUEST_ENV_H

#include <stddef.h>
#include <string.h>

/* An initializer list: `const char *const names[] = {XMEM_REQUEST_ENV_NAMES};` */
#define XMEM_REQUEST_ENV_NAMES                                                                     \
    "PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONUSERBASE", "VIRTUAL_ENV",       \
        "LD_LIBRARY_PATH", "MODULEPATH", "MODULESHOME", "LOADEDMODULES", "_LMFILES_", "CUDA_HOME", \
        "CUDA_PATH", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"

/* Families: conda/mamba state, PyTorch and Hugging Face settings, OpenMP threads. */
#define XMEM_REQUEST_ENV_PREFIXES                                                                  \
    "CONDA_", "MAMBA_", "PYTORCH_", "TORCH_", "HF_", "TRANSFORMERS_", "OMP_"

/* Parts of a name that mark a secret, matched in any case: such a variable is never sent nor
 * kept, and such an option's value never reaches the ledger. KEY catches API_KEY, APIKEY and
 * api-key; PASS catches PASSWORD and CONDA_PASSWD; a name dropped by mistake costs nothing,
 * since none of these decides a run's memory. */
#define XMEM_REQUEST_ENV_SECRET_WORDS                                                              \
    "TOKEN", "SECRET", "PASS", "CREDENTIAL", "KEY", "AUTH", "COOKIE"

/* Longest name kept, and most variables one request carries (the rest are dropped). */
#define XMEM_REQUEST_ENV_MAX_NAME 64
#define XMEM_REQUEST_ENV_MAX_VARS 128

/* 1 when name[0..len) contains one of XMEM_REQUEST_ENV_SECRET_WORDS, in any case: the one
 * test of a secret name, for a variable here and for an option in xmemd's ledger redaction. */
static inline int xmem_request_env_secret(const char *name, size_t len)
{
    static const char *const secrets[] = {XMEM_REQUEST_ENV_SECRET_WORDS};
    size_t i, k, j;

    for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
        size_t w = strlen(secrets[i]);
        for (k = 0; k + w <= len; k++) {
            for (j = 0; j < w; j++) {
                char c = name[k + j];
                if ((c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c) != secrets[i][j])
                    break;
            }
            if (j == w)
                return 1;
        }
    }
    return 0;
}

/* 1 when the variable named name[0..len) is one a request carries. */
static inline int xmem_request_env_kept(const char *name, size_t len)
{
    static const char *const names[] = {XMEM_REQUEST_ENV_NAMES};
    static const char *const prefixes[] = {XMEM_REQUEST_ENV_PREFIXES};
    size_t i;
    int kept = 0;

    if (len == 0 || len > XMEM_REQUEST_ENV_MAX_NAME)
        return 0;
    for (i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9')))
            return 0;
    }
    for (i = 0; i < sizeof(names) / sizeof(names[0]) && !kept; i++)
        kept = strlen(names[i]) == len && strncmp(names[i], name, len) == 0;
    for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !kept; i++)
        kept = strlen(prefixes[i]) < len && strncmp(prefixes[i], name, strlen(prefixes[i])) == 0;
    return kept && !xmem_request_env_secret(name, len);
}

#endif
