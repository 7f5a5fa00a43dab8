/*
 * defaults.h — the defaults and limits more than one component must agree on (the client
 * library, the SPANK plugin, xmemd, xmem-estimate and the profilers), each with its reason.
 * A component's private limits live in its own defaults.h, which includes this one.
 */
#ifndef XMEM_CONTRACT_DEFAULTS_H
#define XMEM_CONTRACT_DEFAULTS_H

/* Where xmemd listens and the plugin and `xmem status` connect, unless configured (xmemd:
 * socket:, plugstack.conf: socket=, $XMEM_SOCKET). Under systemd's RuntimeDirectory=xmem. */
#define XMEM_DEFAULT_SOCKET "/run/xmem/xmemd.sock"

/* Optimizer steps profiled: the first step creates the gradients and optimizer state, the
 * next ones show the steady state the allocator settles into; three show both. */
#define XMEM_DEFAULT_STEPS 3
/* Most steps a request may ask for: a profile is a few steps, not a training run. */
#define XMEM_MAX_STEPS 1000

/* GPU estimated for when neither the request, its partition nor the site names one: the
 * most common data-centre GPU of the clusters xmem was calibrated on. */
#define XMEM_DEFAULT_GPU "A100-40GB"

/* A batch script's preamble in a request: at most this many kept lines and this many skipped
 * lines, each at most this long. A preamble is a few module/source lines; every line is
 * echoed to the user and stored in the ledger. The plugin sends at most this many skipped
 * lines (they are only shown); xmemd refuses a request beyond either bound. */
#define XMEM_MAX_PREAMBLE_LINES 256
#define XMEM_MAX_SCRIPT_LINE_BYTES 4096

/* Most words kept from one entrypoint command line, by the plugin and by xmemd reading the
 * same script (daemon/script/xmem_script.h): a training command has tens of words. */
#define XMEM_MAX_ARGV 256

#endif
