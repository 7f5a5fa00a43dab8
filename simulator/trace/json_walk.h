// walk_json: hands a JSON document to a handler event by event, SAX-style, without
// recursion (a skipped member may nest arbitrarily deep). The handler provides:
//   bool skipping() const;   // true: the next scalars are not wanted (not decoded)
//   bool null(); bool boolean(bool); bool number_integer(int64_t);
//   bool number_unsigned(uint64_t); bool number_float();  // fraction, exponent, overflow
//   bool string(std::string &); bool key(std::string &);
//   bool start_object(); bool end_object(); bool start_array(); bool end_array();
//   bool syntax_error(size_t byte, const std::string &why);
// A handler returning false stops the walk, which then returns false.
#pragma once

#include "trace/json_lexer.h"

#include <string>
#include <vector>

namespace xmem::trace
{

namespace json_walk_detail
{

// One value at the lexer (skip_space done). A container is opened and pushed; its members
// follow in walk_json's loop.
template <class Handler>
bool value(JsonLexer &lex, Handler &h, std::vector<char> &open, std::string &text)
{
    switch (lex.peek()) {
    case '{':
        lex.advance();
        open.push_back('{');
        return h.start_object();
    case '[':
        lex.advance();
        open.push_back('[');
        return h.start_array();
    case '"':
        if (h.skipping())
            return lex.string(nullptr);
        return lex.string(&text) && h.string(text);
    case 't':
    case 'f':
    case 'n': {
        bool is_null = false, truth = false;
        if (!lex.literal(is_null, truth))
            return false;
        return is_null ? h.null() : h.boolean(truth);
    }
    case '\0':
        if (lex.at_end())
            return lex.fail("unexpected end of input");
        return lex.fail("unexpected byte");
    default: {
        JsonNumber n;
        if (lex.peek() != '-' && (lex.peek() < '0' || lex.peek() > '9'))
            return lex.fail("unexpected byte");
        if (!lex.number(n))
            return false;
        if (n.kind == JsonNumber::unsigned_int)
            return h.number_unsigned(n.value);
        if (n.kind == JsonNumber::negative_int && n.value <= uint64_t{1} << 63)
            return h.number_integer(static_cast<int64_t>(0 - n.value));
        return h.number_float();
    }
    }
}

// After a value inside a container (or right after it opened): closes containers, then
// moves to the next member's value. Returns false on an error; DONE when the document ended.
template <class Handler>
bool next_member(JsonLexer &lex, Handler &h, std::vector<char> &open, std::string &text,
                 bool just_opened, bool &done)
{
    for (;;) {
        if (open.empty()) {
            done = true;
            return true;
        }
        lex.skip_space();
        char close = open.back() == '{' ? '}' : ']';
        if (lex.peek() == close) {
            lex.advance();
            open.pop_back();
            if (!(close == '}' ? h.end_object() : h.end_array()))
                return false;
            just_opened = false;
            continue;
        }
        if (!just_opened) {
            if (lex.peek() != ',')
                return lex.fail(close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
            lex.advance();
            lex.skip_space();
        }
        if (open.back() == '[')
            return true;
        if (lex.peek() != '"')
            return lex.fail("expected a member name in quotes");
        if (!lex.string(&text) || !h.key(text))
            return false;
        lex.skip_space();
        if (lex.peek() != ':')
            return lex.fail("expected ':' after a member name");
        lex.advance();
        lex.skip_space();
        return true;
    }
}

} // namespace json_walk_detail

template <class Handler> bool walk_json(const char *begin, const char *end, Handler &h)
{
    JsonLexer lex(begin, end);
    std::vector<char> open; // '{' or '[' per open container
    std::string text;       // the last string or key, reused
    bool done = false;
    lex.skip_space();
    while (!done) {
        size_t depth = open.size();
        bool ok = json_walk_detail::value(lex, h, open, text) &&
                  json_walk_detail::next_member(lex, h, open, text, open.size() > depth, done);
        if (!ok) {
            if (!lex.error().empty())
                h.syntax_error(lex.error_byte(), lex.error());
            return false;
        }
    }
    lex.skip_space();
    if (!lex.at_end()) {
        lex.fail("unexpected bytes after the document");
        h.syntax_error(lex.error_byte(), lex.error());
        return false;
    }
    return true;
}

} // namespace xmem::trace
