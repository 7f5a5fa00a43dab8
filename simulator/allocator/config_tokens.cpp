#include "allocator/config_tokens.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace xmem::sim::conf
{

namespace
{

std::vector<std::string> lex_v2(std::string_view conf)
{
    std::vector<std::string> tokens;
    std::string word;
    auto flush = [&] {
        if (!word.empty())
            tokens.push_back(std::move(word));
        word.clear();
    };
    for (char c : conf) {
        if (c == ',' || c == ':' || c == '[' || c == ']') {
            flush();
            tokens.emplace_back(1, c);
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            continue; // 2.x drops spaces, also inside words ("max_split _size" = "max_split_size")
        } else {
            word.push_back(c);
        }
    }
    flush();
    return tokens;
}

std::vector<std::string_view> split_any(std::string_view s, std::string_view separators)
{
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (start < s.size()) {
        const size_t end = s.find_first_of(separators, start);
        const size_t stop = end == std::string_view::npos ? s.size() : end;
        if (stop > start)
            parts.push_back(s.substr(start, stop - start));
        start = stop + 1;
    }
    return parts;
}

Result<std::vector<std::string>> lex_v1_13(std::string_view conf)
{
    std::vector<std::string> tokens;
    for (std::string_view option : split_any(conf, " \t\n\r\f\v,")) {
        const std::vector<std::string_view> kv = split_any(option, ":");
        if (kv.size() != 2) {
            const std::string key(kv.empty() ? option : kv[0]);
            return Result<std::vector<std::string>>::fail(
                conf_error(key, "expected key:value (got '" + std::string(option) + "')"));
        }
        tokens.emplace_back(kv[0]);
        tokens.emplace_back(":");
        tokens.emplace_back(kv[1]);
        tokens.emplace_back(",");
    }
    if (!tokens.empty())
        tokens.pop_back(); // no trailing separator
    return Result<std::vector<std::string>>::ok(std::move(tokens));
}

} // namespace

Result<std::vector<std::string>> tokenize(std::string_view conf, ConfGrammar grammar)
{
    if (grammar == ConfGrammar::v1_13)
        return lex_v1_13(conf);
    return Result<std::vector<std::string>>::ok(lex_v2(conf));
}

Error conf_error(std::string_view key, const std::string &what)
{
    return Error{"xmem: PYTORCH_CUDA_ALLOC_CONF: " + std::string(key) + ": " + what};
}

bool parse_uint(std::string_view token, uint64_t *out)
{
    if (token.empty())
        return false;
    auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
    return ec == std::errc() && p == token.data() + token.size();
}

bool parse_double(std::string_view token, double *out)
{
    if (token.empty())
        return false;
    const std::string s(token);
    char *end = nullptr;
    *out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
}

bool is_power_of_two(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

} // namespace xmem::sim::conf
