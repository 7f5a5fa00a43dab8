// A restricted reader of PyTorch's pickled memory snapshot (torch.cuda.memory._dump_snapshot),
// so `xmem sim --from-pickle FILE` needs no Python. A snapshot holds only dicts, lists,
// tuples, strings, numbers, booleans and None, so that is all this reader builds: it runs no
// code, imports nothing, and refuses any opcode that would (GLOBAL, STACK_GLOBAL, REDUCE,
// BUILD, INST, OBJ, NEWOBJ, persistent ids, extensions) with one line naming what the file
// asked for. Protocols 2 to 5 (and the binary opcodes of 0 and 1) are read.
//
// The result is the same snapshot as JSON text, which the snapshot reader then streams.
// Every read is bounds-checked; nesting deeper than k_max_pickle_depth is refused.
#pragma once

#include "common/result.h"

#include <cstddef>
#include <cstdio>
#include <string>

namespace xmem::trace
{

// Deeper than any snapshot (frames are lists of dicts: depth 6); stops hostile recursion.
constexpr size_t k_max_pickle_depth = 256;

// Errors: "xmem: NAME: byte N: <what>".
Result<std::string> pickle_snapshot_to_json(std::FILE *file, const std::string &name);

} // namespace xmem::trace
