// The GPU catalog (etc/gpus.yaml): what xmem needs to know about each GPU model, with the
// source of every number. Parsing is strict: an unknown key, a missing key, a number
// without a source, a bad value or a duplicate name fails with
// "xmem: FILE:LINE: KEY: what is wrong".
#pragma once

#include "common/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xmem::analysis
{

struct GpuSpec {
    std::string name;                 // catalog name, e.g. "A100-40GB"
    std::vector<std::string> aliases; // other accepted names (case-insensitive match)
    uint64_t total_bytes = 0;         // memory.total as nvidia-smi reports it
    int cc_major = 0;                 // compute capability
    int cc_minor = 0;
    uint64_t context_bytes = 0;            // CUDA context + libraries' modules, lazy loading
    uint64_t cublas_workspace_bytes = 0;   // what PyTorch 2.x asks per (handle, stream)
    uint64_t cublaslt_workspace_bytes = 0; // what PyTorch 2.x asks per Lt matmul
    uint64_t cudnn_context_bytes = 0;      // cuDNN handle and kernels, outside the allocator,
                                           // in a job that runs convolutions
    int multiprocessors = 0; // streaming multiprocessors; 0: not in the catalog (optional key)
    std::map<std::string, std::string> sources; // numeric key -> where the number is from
};

// NCCL's own device memory in each rank of a multi-GPU job, for the NCCL releases from
// `version` on (the catalog's `nccl` list, docs/estimate.md, "Ranks"): buffers NCCL
// allocates with cudaMalloc, outside PyTorch's allocator.
struct NcclTerm {
    int major = 0, minor = 0; // the first NCCL release the term applies to
    uint64_t bytes = 0;
    std::string source;
};

// The numeric keys of GPU whose source says "uncalibrated" (a budget, not a measurement):
// the estimate marks them so a guessed context term is not read as a measured one.
std::vector<std::string> uncalibrated_terms(const GpuSpec &gpu);

class Catalog
{
  public:
    // Parses FILE strictly; the first problem found is the error.
    static Result<Catalog> load(const std::string &path);
    // Same, from text (for tests); `name` stands in for the file name in errors.
    static Result<Catalog> parse(const std::string &text, const std::string &name);

    // Case-insensitive match of name or alias; the error lists the known names.
    Result<GpuSpec> find(const std::string &name) const;
    // find() for a name a user typed (xmem estimate --gpu): a name that is a full name or
    // an alias standing for one full name only is accepted; one that begins several full
    // names (A100 -> A100-40GB, A100-80GB) is ambiguous, even where it is listed as an alias,
    // and the error lists the candidates. H100 and V100 stay valid: one full name each.
    Result<GpuSpec> find_unambiguous(const std::string &name) const;
    const std::vector<GpuSpec> &gpus() const { return m_gpus; }
    // The NCCL term for the job's NCCL VERSION ("2.30.7"): the entry of the newest release
    // at or below it; an unknown or older version gets the newest entry. None listed: 0 B.
    NcclTerm nccl_for(const std::string &version) const;
    const std::string &path() const { return m_path; }
    // A catalog of already-checked entries (parse() uses it; tests may too).
    static Catalog from(std::vector<GpuSpec> gpus, std::string path,
                        std::vector<NcclTerm> nccl = {});

  private:
    std::vector<GpuSpec> m_gpus;
    std::vector<NcclTerm> m_nccl; // newest release first
    std::string m_path;
};

// Where the catalog is: `explicit_path` if given; else $XMEM_CATALOG; else, when the
// executable runs from a build tree, the source tree's etc/gpus.yaml; else
// XMEM_SYSCONFDIR/xmem/gpus.yaml. Returns the first that exists (or the explicit one).
Result<std::string> locate_catalog(const std::string &explicit_path);

} // namespace xmem::analysis
