// redact.cpp — the ledger's secret rule (redact.h).
#include "redact.h"

#include "contract/request_env.h"

#include <cctype>
#include <cstring>

namespace xmem::server
{
namespace
{

const char *const k_hidden = "***";

// Whether `name` contains one of the secret words, in any case.
bool names_secret(const std::string &name)
{
    return xmem_request_env_secret(name.data(), name.size()) != 0;
}

// `scheme://user:pass@host...` → `scheme://***@host...`, every occurrence.
std::string hide_url_credentials(std::string s)
{
    for (std::size_t at = s.find("://"); at != std::string::npos; at = s.find("://", at + 3)) {
        std::size_t start = at + 3;
        std::size_t end = start;
        while (end < s.size() && s[end] != '@' && s[end] != '/' &&
               !std::isspace((unsigned char)s[end]))
            ++end;
        if (end < s.size() && s[end] == '@' && end > start)
            s.replace(start, end - start, k_hidden);
    }
    return s;
}

bool is_name_char(char c)
{
    return std::isalnum((unsigned char)c) || c == '_' || c == '-';
}

// `--name=value` with a secret name → `--name=***`; returns whether `word` was such an
// option without a value (its value is the next word).
bool hide_option(std::string &word)
{
    if (word.size() < 2 || word[0] != '-')
        return false;
    std::size_t eq = word.find('=');
    std::string name = word.substr(0, eq);
    if (!names_secret(name))
        return false;
    if (eq == std::string::npos)
        return true;
    word.replace(eq + 1, std::string::npos, k_hidden);
    return false;
}

// `NAME=value` with a secret NAME (a shell assignment, `export NAME=...`) → `NAME=***`.
void hide_assignment(std::string &word)
{
    std::size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0 || word[0] == '-')
        return;
    for (std::size_t i = 0; i < eq; ++i)
        if (!is_name_char(word[i]))
            return;
    if (names_secret(word.substr(0, eq)))
        word.replace(eq + 1, std::string::npos, k_hidden);
}

std::vector<std::string> split_words(const std::string &text)
{
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t j = i;
        while (j < text.size() && !std::isspace((unsigned char)text[j]))
            ++j;
        words.push_back(text.substr(i, j - i));
        if (j < text.size())
            words.push_back(std::string(1, text[j])); // the separator, kept as it was
        i = j + 1;
    }
    return words;
}

std::string redact_words(std::vector<std::string> words, bool separators)
{
    bool next_is_value = false;
    std::string out;
    for (std::string &w : words) {
        bool blank = separators && w.size() == 1 && std::isspace((unsigned char)w[0]);
        if (!blank) {
            if (next_is_value && !w.empty() && w[0] != '-')
                w = k_hidden;
            next_is_value = hide_option(w);
            hide_assignment(w);
            w = hide_url_credentials(w);
        }
        if (!separators && !out.empty())
            out += ' ';
        out += w;
    }
    return out;
}

} // namespace

std::string redact_argv(const std::vector<std::string> &argv)
{
    return redact_words(argv, false);
}

std::string redact_text(const std::string &text)
{
    return redact_words(split_words(text), true);
}

} // namespace xmem::server
