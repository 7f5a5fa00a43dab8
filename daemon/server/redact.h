// redact.h — what the ledger keeps of a request's text, without the secrets in it.
//
// The ledger is root's and mode 0600, but reports and backups read it, so a token in a
// job's argv or batch script must not reach it (issue 26, L5). The rule, applied only to what
// is stored (the profile itself runs with the real argv and environment):
// - an argv option whose name contains a secret word (contract/request_env.h,
//   XMEM_REQUEST_ENV_SECRET_WORDS, any case: `--api-key`, `--hf_token`, `--password`) keeps
//   its name and loses its value, given as `--opt=VALUE` or as the next argument;
// - a shell assignment `NAME=VALUE` whose name contains a secret word loses its value;
// - a URL's credentials (`scheme://user:pass@host`) become `scheme://***@host`.
// A removed value reads `***`.
#ifndef XMEMD_REDACT_H
#define XMEMD_REDACT_H

#include <string>
#include <vector>

namespace xmem::server
{

// argv joined by spaces, each secret value replaced.
std::string redact_argv(const std::vector<std::string> &argv);
// One line of a batch script, or a variable's value: secret values and URL credentials
// replaced.
std::string redact_text(const std::string &text);

} // namespace xmem::server
#endif
