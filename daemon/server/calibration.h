/*
 * calibration.h — the calibration file (xmem.yaml key `calibration:`): the margins per GPU
 * type, and optionally per Slurm account, that `xmem calibrate --apply` learnt from the
 * ledger's measured peaks (docs/enforcement.md, "Calibration"). xmemd reads it with its
 * config, on start and on SIGHUP, strictly: any problem refuses the whole config, so a
 * reload keeps the previous one. One definition of the format: the parser and the writer.
 *
 *   version: 1
 *   margins:
 *     A100-40GB:            # a GPU catalog name (an alias is accepted, stored by name)
 *       percent: 12
 *       accounts: {physics: 15}
 */
#ifndef XMEMD_CALIBRATION_H
#define XMEMD_CALIBRATION_H

#include "policy.h"
#include "common/result.h"

#include <string>
#include <vector>

namespace xmem::server
{

// Parses the file's text; `name` stands for the file in errors ("NAME:LINE: KEY: what").
// Every GPU must be in `catalog`; margins come back under the catalog's full names.
Result<std::vector<GpuMargin>> calibration_parse(const std::string &text, const std::string &name,
                                                 const analysis::Catalog &catalog);
// The file at `path`; a file that does not exist is no margins (nothing calibrated yet).
Result<std::vector<GpuMargin>> calibration_load(const std::string &path,
                                                const analysis::Catalog &catalog);
// The file's text for `margins`; `comment` goes first, as '#' lines.
// The one rule for a Slurm account name xmem stores and writes back: 1 to 64 bytes,
// printable, no space, no '"' or '\\' (the calibration file quotes names). job_end refuses
// any other; `xmem calibrate` files rows older than the rule under the site-wide margin only.
bool calibration_account_ok(const std::string &name);

std::string calibration_render(const std::vector<GpuMargin> &margins, const std::string &comment);
// Replaces `path` with `text` atomically (a temporary file in the same directory, fsync,
// mode `mode`, rename), so a reader sees the old file or the new one, never a part.
Result<void> file_replace(const std::string &path, const std::string &text, unsigned mode);

} // namespace xmem::server
#endif
