// json_fields.h — reads the fields of a JSON object that came over a pipe or the socket
// without throwing (no exceptions on the request path): a missing or mistyped field leaves a
// default and the first such problem is kept as "KEY: expected WHAT".
#ifndef XMEMD_JSON_FIELDS_H
#define XMEMD_JSON_FIELDS_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace xmem::server
{

class Fields
{
  public:
    explicit Fields(const nlohmann::json &j) : m_j(j) {}

    uint64_t u64(const char *key)
    {
        const nlohmann::json *v = get(key, "a non-negative number");
        if (!v || !v->is_number() || v->get<double>() < 0)
            return wrong(key, "a non-negative number"), 0;
        return v->is_number_unsigned() || v->is_number_integer() ? v->get<uint64_t>()
                                                                 : (uint64_t)v->get<double>();
    }
    int64_t integer(const char *key)
    {
        const nlohmann::json *v = get(key, "an integer");
        return v && v->is_number_integer() ? v->get<int64_t>() : (wrong(key, "an integer"), 0);
    }
    double real(const char *key)
    {
        const nlohmann::json *v = get(key, "a number");
        return v && v->is_number() ? v->get<double>() : (wrong(key, "a number"), 0.0);
    }
    bool flag(const char *key)
    {
        const nlohmann::json *v = get(key, "true or false");
        return v && v->is_boolean() ? v->get<bool>() : (wrong(key, "true or false"), false);
    }
    std::string text(const char *key)
    {
        const nlohmann::json *v = get(key, "a string");
        return v && v->is_string() ? v->get<std::string>() : (wrong(key, "a string"), "");
    }
    // Present, of any type (a JSON null counts); nullptr when missing.
    const nlohmann::json *get(const char *key, const char *what)
    {
        auto it = m_j.find(key);
        if (it == m_j.end()) {
            wrong(key, what);
            return nullptr;
        }
        return &*it;
    }
    const std::string &error() const { return m_error; }

  private:
    void wrong(const char *key, const char *what)
    {
        if (m_error.empty())
            m_error = std::string(key) + ": expected " + what;
    }

    const nlohmann::json &m_j;
    std::string m_error;
};

// True when `text` nests objects and arrays at most `max_depth` deep. A pre-scan over the
// bytes (skipping strings and their escapes) that builds nothing: it runs before a parser,
// so text from a profile or a client can never make a DOM deep enough to overflow the stack
// when it is copied, compared or dumped. Malformed text is left for the parser to refuse.
inline bool json_depth_within(const std::string &text, int max_depth)
{
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); i++) {
        char ch = text[i];
        if (in_string) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '{' || ch == '[') {
            if (++depth > max_depth)
                return false;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    return true;
}

} // namespace xmem::server
#endif
