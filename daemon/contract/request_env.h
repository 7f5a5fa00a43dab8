/*
 * request_env.h — the environment variables an estimate request carries (docs/protocol.md,
 * "env"): the ones that change what the profile of a job sees. The client sends only these;
 * xmemd keeps only these, in this order (the cache key hashes them in order, so append new
 * names at the end), and passes them to the profile's environment.
 *
 * PYTORCH_ALLOC_CONF is the name PyTorch 2.9+ reads first (PYTORCH_CUDA_ALLOC_CONF is the
 * older one); xmem-estimate reads both for the allocator settings it simulates.
 */
#ifndef XMEM_CONTRACT_REQUEST_ENV_H
#define XMEM_CONTRACT_REQUEST_ENV_H

/* An initializer list: `const char *const names[] = {XMEM_REQUEST_ENV_NAMES};` */
#define XMEM_REQUEST_ENV_NAMES                                                                     \
    "PATH", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH",                        \
        "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"

/* Longest of the names above, for fixed key buffers. */
#define XMEM_REQUEST_ENV_MAX_NAME 32

#endif
