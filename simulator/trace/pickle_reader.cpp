// The pickle machine, reduced to the data opcodes. Values live in shared nodes because the
// memo may hold a container that later opcodes keep filling (EMPTY_DICT, MEMOIZE, SETITEMS).
#include "trace/pickle_reader.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <cerrno>
#include <utility>
#include <vector>

namespace xmem::trace
{

namespace
{

struct Node;
using NodePtr = std::shared_ptr<Node>;

struct Node {
    enum Kind { none, boolean, integer, real, text, bytes, list, dict, mark } kind = none;
    int64_t i = 0;
    double f = 0;
    std::string s;
    std::vector<NodePtr> items;                       // list / tuple / set
    std::vector<std::pair<NodePtr, NodePtr>> entries; // dict, in insertion order
};

NodePtr make(Node::Kind kind)
{
    auto n = std::make_shared<Node>();
    n->kind = kind;
    return n;
}

class Machine
{
  public:
    Machine(std::string data, std::string name) : m_data(std::move(data)), m_name(std::move(name))
    {
    }
    Result<std::string> run();

  private:
    bool take(size_t n, const char *&out)
    {
        if (m_data.size() - m_pos < n)
            return false;
        out = m_data.data() + m_pos;
        m_pos += n;
        return true;
    }
    bool uint_le(size_t n, uint64_t &out)
    {
        const char *p = nullptr;
        if (!take(n, p))
            return false;
        out = 0;
        for (size_t k = n; k-- > 0;)
            out = (out << 8) | static_cast<unsigned char>(p[k]);
        return true;
    }
    bool pop(NodePtr &out)
    {
        if (m_stack.empty() || m_stack.back()->kind == Node::mark)
            return false;
        out = m_stack.back();
        m_stack.pop_back();
        return true;
    }
    // The items above the topmost mark, which is removed.
    bool pop_to_mark(std::vector<NodePtr> &out)
    {
        size_t k = m_stack.size();
        while (k > 0 && m_stack[k - 1]->kind != Node::mark)
            --k;
        if (k == 0)
            return false;
        out.assign(m_stack.begin() + static_cast<std::ptrdiff_t>(k), m_stack.end());
        m_stack.resize(k - 1);
        return true;
    }
    // The error of the opcode at m_op: "xmem: NAME: byte N: <what>".
    Result<void> bad(const std::string &what) const
    {
        return Result<void>::fail("xmem: " + m_name + ": byte " + std::to_string(m_op) + ": " +
                                  what);
    }
    static Result<void> done() { return Result<void>::success(); }
    Result<std::string> fail(const std::string &what) const
    {
        return Result<std::string>::fail(bad(what).error());
    }
    Result<void> step(unsigned char op, bool &stop);
    Result<void> push_string(size_t length_bytes, Node::Kind kind);
    Result<void> push_long(size_t length_bytes);
    Result<void> refuse(unsigned char op);
    Result<nlohmann::json> to_json(const NodePtr &n, size_t depth);
    // Values emitted so far: memo references can share containers, so a small hostile file
    // could expand exponentially; a snapshot emits about one value per few bytes.
    uint64_t m_emitted = 0;

    std::string m_data, m_name;
    size_t m_pos = 0, m_op = 0;
    std::vector<NodePtr> m_stack;
    std::map<uint64_t, NodePtr> m_memo;
};

Result<void> Machine::push_string(size_t length_bytes, Node::Kind kind)
{
    uint64_t length = 0;
    const char *p = nullptr;
    if (!uint_le(length_bytes, length) || length > m_data.size() || !take(length, p))
        return bad("a string runs past the end of the file");
    auto n = make(kind);
    n->s.assign(p, length);
    m_stack.push_back(n);
    return done();
}

Result<void> Machine::push_long(size_t length_bytes)
{
    uint64_t length = 0;
    const char *p = nullptr;
    if (!uint_le(length_bytes, length) || length > m_data.size() || !take(length, p))
        return bad("an integer runs past the end of the file");
    if (length > 8)
        return bad("an integer of " + std::to_string(length) + " bytes (a snapshot's fit in 8)");
    uint64_t value = 0;
    for (size_t k = length; k-- > 0;)
        value = (value << 8) | static_cast<unsigned char>(p[k]);
    if (length > 0 && length < 8 && (static_cast<unsigned char>(p[length - 1]) & 0x80))
        value |= ~uint64_t{0} << (8 * length); // sign-extend
    auto n = make(Node::integer);
    n->i = static_cast<int64_t>(value);
    m_stack.push_back(n);
    return done();
}

// What a refused opcode asked for, in words.
Result<void> Machine::refuse(unsigned char op)
{
    std::string what;
    if (op == 'c' || op == 'i') { // GLOBAL / INST: "module\nname\n"
        size_t end1 = m_data.find('\n', m_pos);
        size_t end2 = end1 == std::string::npos ? end1 : m_data.find('\n', end1 + 1);
        if (end2 != std::string::npos && end2 - m_pos < 200)
            what = " '" + m_data.substr(m_pos, end1 - m_pos) + "." +
                   m_data.substr(end1 + 1, end2 - end1 - 1) + "'";
    } else if (op == 0x93 && m_stack.size() >= 2 && m_stack.back()->kind == Node::text &&
               m_stack[m_stack.size() - 2]->kind == Node::text) {
        what = " '" + m_stack[m_stack.size() - 2]->s.substr(0, 100) + "." +
               m_stack.back()->s.substr(0, 100) + "'";
    }
    for (char &c : what)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            c = '?';
    static const std::map<unsigned char, const char *> names = {
        {'c', "GLOBAL"}, {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"},       {'b', "BUILD"},
        {'i', "INST"},   {'o', "OBJ"},           {0x81, "NEWOBJ"},      {0x92, "NEWOBJ_EX"},
        {'P', "PERSID"}, {'Q', "BINPERSID"},     {0x82, "EXT1"},        {0x83, "EXT2"},
        {0x84, "EXT4"},  {0x96, "BYTEARRAY8"},   {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"}};
    auto it = names.find(op);
    char code[8];
    std::snprintf(code, sizeof code, "0x%02x", op);
    if (it == names.end())
        return bad(std::string("unknown pickle opcode ") + code + "; is this a memory snapshot?");
    return bad(std::string("the pickle asks for ") + it->second + what +
               ", which would run code; a memory snapshot holds only dicts, lists, strings and "
               "numbers, so the file is refused (export it to JSON with Python if you trust it)");
}

Result<void> Machine::step(unsigned char op, bool &stop)
{
    const char *p = nullptr;
    uint64_t u = 0;
    NodePtr a, b;
    std::vector<NodePtr> items;
    switch (op) {
    case 0x80: // PROTO
        return take(1, p) ? done() : bad("truncated PROTO");
    case 0x95: // FRAME
        return take(8, p) ? done() : bad("truncated FRAME");
    case '.': // STOP
        stop = true;
        return done();
    case '(':
        m_stack.push_back(make(Node::mark));
        return done();
    case '}':
        m_stack.push_back(make(Node::dict));
        return done();
    case ']':
    case ')':
    case 0x8f: // EMPTY_SET
        m_stack.push_back(make(Node::list));
        return done();
    case 'N':
        m_stack.push_back(make(Node::none));
        return done();
    case 0x88:
    case 0x89: {
        auto n = make(Node::boolean);
        n->i = op == 0x88;
        m_stack.push_back(n);
        return done();
    }
    case 'J':
    case 'K':
    case 'M': {
        size_t width = op == 'J' ? 4 : op == 'K' ? 1 : 2;
        if (!uint_le(width, u))
            return bad("truncated integer");
        auto n = make(Node::integer);
        n->i = op == 'J' ? static_cast<int32_t>(static_cast<uint32_t>(u)) : static_cast<int64_t>(u);
        m_stack.push_back(n);
        return done();
    }
    case 0x8a: // LONG1
        return push_long(1);
    case 0x8b: // LONG4
        return push_long(4);
    case 'G': { // BINFLOAT, big-endian
        if (!take(8, p))
            return bad("truncated float");
        uint64_t bits = 0;
        for (size_t k = 0; k < 8; ++k)
            bits = (bits << 8) | static_cast<unsigned char>(p[k]);
        auto n = make(Node::real);
        std::memcpy(&n->f, &bits, sizeof bits);
        m_stack.push_back(n);
        return done();
    }
    case 'X':
        return push_string(4, Node::text);
    case 0x8c:
        return push_string(1, Node::text);
    case 0x8d:
        return push_string(8, Node::text);
    case 'U':
        return push_string(1, Node::text);
    case 'T':
        return push_string(4, Node::text);
    case 'C':
        return push_string(1, Node::bytes);
    case 'B':
        return push_string(4, Node::bytes);
    case 0x8e:
        return push_string(8, Node::bytes);
    case 0x94: // MEMOIZE
        if (m_stack.empty())
            return bad("MEMOIZE on an empty stack");
        m_memo[m_memo.size()] = m_stack.back();
        return done();
    case 'q':
    case 'r':
        if (!uint_le(op == 'q' ? 1 : 4, u) || m_stack.empty())
            return bad("bad BINPUT");
        m_memo[u] = m_stack.back();
        return done();
    case 'h':
    case 'j': {
        if (!uint_le(op == 'h' ? 1 : 4, u))
            return bad("truncated BINGET");
        auto it = m_memo.find(u);
        if (it == m_memo.end())
            return bad("BINGET of memo " + std::to_string(u) + ", which was never stored");
        m_stack.push_back(it->second);
        return done();
    }
    case '0': // POP
        if (m_stack.empty())
            return bad("POP on an empty stack");
        m_stack.pop_back();
        return done();
    case '1': // POP_MARK
        return pop_to_mark(items) ? done() : bad("POP_MARK without MARK");
    case '2': // DUP
        if (m_stack.empty())
            return bad("DUP on an empty stack");
        m_stack.push_back(m_stack.back());
        return done();
    case 'a': // APPEND
        if (!pop(a) || m_stack.empty() || m_stack.back()->kind != Node::list)
            return bad("APPEND without a list");
        m_stack.back()->items.push_back(a);
        return done();
    case 'e':  // APPENDS
    case 0x90: // ADDITEMS
        if (!pop_to_mark(items) || m_stack.empty() || m_stack.back()->kind != Node::list)
            return bad("APPENDS without a list");
        for (auto &item : items)
            m_stack.back()->items.push_back(item);
        return done();
    case 's': // SETITEM
        if (!pop(b) || !pop(a) || m_stack.empty() || m_stack.back()->kind != Node::dict)
            return bad("SETITEM without a dict");
        m_stack.back()->entries.emplace_back(a, b);
        return done();
    case 'u': // SETITEMS
        if (!pop_to_mark(items) || items.size() % 2 || m_stack.empty() ||
            m_stack.back()->kind != Node::dict)
            return bad("SETITEMS without a dict");
        for (size_t k = 0; k < items.size(); k += 2)
            m_stack.back()->entries.emplace_back(items[k], items[k + 1]);
        return done();
    case 't':   // TUPLE
    case 'l':   // LIST
    case 0x91:  // FROZENSET
    case 'd': { // DICT
        if (!pop_to_mark(items))
            return bad("a container without MARK");
        auto n = make(op == 'd' ? Node::dict : Node::list);
        if (op == 'd') {
            if (items.size() % 2)
                return bad("DICT with an odd number of items");
            for (size_t k = 0; k < items.size(); k += 2)
                n->entries.emplace_back(items[k], items[k + 1]);
        } else {
            n->items = std::move(items);
        }
        m_stack.push_back(n);
        return done();
    }
    case 0x85:
    case 0x86:
    case 0x87: {
        size_t count = op - 0x84u;
        if (m_stack.size() < count)
            return bad("TUPLE on a short stack");
        auto n = make(Node::list);
        for (size_t k = m_stack.size() - count; k < m_stack.size(); ++k) {
            if (m_stack[k]->kind == Node::mark)
                return bad("TUPLE over a MARK");
            n->items.push_back(m_stack[k]);
        }
        m_stack.resize(m_stack.size() - count);
        m_stack.push_back(n);
        return done();
    }
    default:
        return refuse(op);
    }
}

Result<nlohmann::json> Machine::to_json(const NodePtr &n, size_t depth)
{
    using R = Result<nlohmann::json>;
    if (++m_emitted > 4 * m_data.size() + 1024)
        return R::fail("xmem: " + m_name + ": the pickle shares values so much that it would " +
                       "expand beyond 4 values per byte; not a snapshot");
    if (depth > k_max_pickle_depth)
        return R::fail("xmem: " + m_name + ": nested deeper than " +
                       std::to_string(k_max_pickle_depth) + " levels (or a cycle); not a snapshot");
    switch (n->kind) {
    case Node::boolean:
        return R::ok(nlohmann::json(n->i != 0));
    case Node::integer:
        return R::ok(nlohmann::json(n->i));
    case Node::real:
        return R::ok(std::isfinite(n->f) ? nlohmann::json(n->f) : nlohmann::json(nullptr));
    case Node::text:
        return R::ok(nlohmann::json(n->s));
    case Node::list: {
        nlohmann::json out = nlohmann::json::array();
        for (const NodePtr &item : n->items) {
            auto v = to_json(item, depth + 1);
            if (!v.ok())
                return v;
            out.push_back(std::move(v.value()));
        }
        return R::ok(std::move(out));
    }
    case Node::dict: {
        nlohmann::json out = nlohmann::json::object();
        for (const auto &[key, value] : n->entries) {
            std::string k = key->kind == Node::text      ? key->s
                            : key->kind == Node::integer ? std::to_string(key->i)
                                                         : std::string();
            auto v = to_json(value, depth + 1);
            if (!v.ok())
                return v;
            out[k] = std::move(v.value());
        }
        return R::ok(std::move(out));
    }
    default: // None, bytes (a snapshot holds none the simulator reads)
        return R::ok(nlohmann::json(nullptr));
    }
}

Result<std::string> Machine::run()
{
    bool stop = false;
    while (!stop) {
        m_op = m_pos;
        const char *p = nullptr;
        if (!take(1, p))
            return fail("the pickle ends without STOP");
        Result<void> stepped = step(static_cast<unsigned char>(*p), stop);
        if (!stepped.ok())
            return Result<std::string>::fail(stepped.error());
    }
    if (m_stack.size() != 1)
        return fail("the pickle leaves " + std::to_string(m_stack.size()) + " values, not one");
    auto json = to_json(m_stack.back(), 0);
    if (!json.ok())
        return Result<std::string>::fail(json.error());
    // Strings from a hostile file need not be UTF-8: replace what is not, never throw.
    return Result<std::string>::ok(
        json.value().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

} // namespace

Result<std::string> pickle_snapshot_to_json(std::FILE *file, const std::string &name)
{
    std::string data;
    char buffer[1 << 16];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0)
        data.append(buffer, n);
    if (std::ferror(file))
        return Result<std::string>::fail("xmem: " + name + ": read error: " + std::strerror(errno));
    Machine machine(std::move(data), name);
    return machine.run();
}

} // namespace xmem::trace
