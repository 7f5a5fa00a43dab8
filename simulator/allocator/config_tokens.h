// Tokenisers for PYTORCH_CUDA_ALLOC_CONF (allocator.md 2.2, 2.3) and the small value
// readers the key handlers share. Internal to config.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "allocator/version.h"

namespace xmem::sim::conf
{

// 2.x lexer: ',' ':' '[' ']' are tokens of their own, spaces are dropped, everything else
// accumulates into words. 1.13: options split on [\s,]+, each option on [:]+, and each
// option is re-emitted as "key : value ," so one parser serves both grammars.
Result<std::vector<std::string>> tokenize(std::string_view conf, ConfGrammar grammar);

// "xmem: PYTORCH_CUDA_ALLOC_CONF: <key>: <what>"
Error conf_error(std::string_view key, const std::string &what);

// Whole-token non-negative integer; false on anything else (PyTorch's stoi accepts
// trailing junk, we do not: "25abc" is far more likely a typo than intent).
bool parse_uint(std::string_view token, uint64_t *out);
bool parse_double(std::string_view token, double *out);
bool is_power_of_two(uint64_t v);

} // namespace xmem::sim::conf
