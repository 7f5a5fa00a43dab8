// Streaming parser of docs/trace-format.md. One function per record letter; each returns
// false after storing a one-line error that names the line and what is wrong.
#include "trace/compact_reader.h"

#include "trace/fields.h"
#include "trace/records.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace xmem::trace
{

namespace
{

struct LiveStorage {
    uint64_t bytes = 0;
    uint64_t stream = 0;
    Device dev = Device::gpu;
};

// The event of an A or F line (or an R line, whose stream the caller then sets): the
// storage's id and what it was allocated with. Both parsers, fast and checked, end here.
inline void fill_from_live(TraceEvent &ev, EventKind kind, uint64_t id, const LiveStorage &storage,
                           uint64_t ctx)
{
    ev.kind = kind;
    ev.id = id;
    ev.bytes = storage.bytes;
    ev.dev = storage.dev;
    ev.stream = storage.stream;
    ev.ctx = ctx;
}

// "A record needs 5 fields (A id bytes dev stream ctx)": the shape from trace/records.h.
std::string field_count_message(Record record)
{
    const RecordShape &shape = shape_of(record);
    std::string l(1, letter(record));
    return l + " record needs " + std::to_string(shape.fields) +
           (shape.fields == 1 ? " field (" : " fields (") + l + " " + std::string(shape.names) +
           ")";
}

// Non-printable bytes would garble the one-line error; show at most 24 characters.
std::string printable(std::string_view text)
{
    std::string out;
    for (char c : text.substr(0, 24))
        out += (c >= 0x20 && c < 0x7f) ? c : '?';
    if (text.size() > 24)
        out += "...";
    return out;
}

bool valid_metadata_key(std::string_view key)
{
    if (key.empty())
        return false;
    for (char c : key)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return true;
}

} // namespace

struct CompactTraceReader::State {
    State(std::FILE *f, bool owns, std::string n)
        : name(std::move(n)), file(f), owns_file(owns), lines(f)
    {
    }
    ~State()
    {
        if (owns_file && file)
            std::fclose(file);
    }

    std::string name;
    std::FILE *file;
    bool owns_file;
    LineSource lines;
    std::vector<std::pair<std::string, std::string>> metadata;
    std::vector<std::string> kernels; // K records, text after "K "
    FlatMap<size_t> strings;          // string id → index in texts (checked on every A record)
    std::vector<std::string> texts;
    FlatMap<LiveStorage> live;
    uint64_t allocs = 0, frees = 0, live_bytes = 0;
    uint32_t iteration = 0;
    Phase phase = Phase::setup;
    bool seen_alloc = false;
    bool seen_totals = false; // the Z line has been read
    bool has_pending = false; // a line read by open() waits for next()
    std::string_view pending;
    std::string error; // non-empty once the reader has failed

    bool fail(const std::string &what)
    {
        error = "xmem: " + name + ":" + std::to_string(lines.line_number()) + ": " + what;
        return false;
    }
    bool number(std::string_view record, const char *field, std::string_view text, uint64_t &out);
    bool read_magic();
    bool read_header();
    bool dispatch(std::string_view line, TraceEvent &ev, bool &produced);
    bool on_metadata(std::string_view line);
    bool on_string(std::string_view line);
    bool on_kernel(std::string_view line);
    bool fast_alloc(std::string_view line, TraceEvent &ev);
    bool fast_free(std::string_view line, TraceEvent &ev);
    bool ctx_defined(uint64_t ctx) { return ctx == 0 || strings.find(ctx) != nullptr; }
    bool on_alloc(std::string_view line, TraceEvent &ev);
    bool on_free(std::string_view line, TraceEvent &ev);
    bool on_record_stream(std::string_view line, TraceEvent &ev);
    bool on_iteration(std::string_view line, TraceEvent &ev);
    bool on_phase(std::string_view line, TraceEvent &ev);
    bool on_fraction(std::string_view line, TraceEvent &ev);
    bool on_totals(std::string_view line);
    bool line_error(LineSource::Status status);
};

bool CompactTraceReader::State::number(std::string_view record, const char *field,
                                       std::string_view text, uint64_t &out)
{
    switch (parse_u64(text, out)) {
    case NumberStatus::ok:
        return true;
    case NumberStatus::empty:
        return fail(std::string(record) + " record: " + field +
                    " is empty (fields are separated by exactly one space)");
    case NumberStatus::not_a_number:
        return fail(std::string(record) + " record: " + field + " '" + printable(text) +
                    "' is not an unsigned decimal number");
    case NumberStatus::overflow:
        return fail(std::string(record) + " record: " + field + " '" + printable(text) +
                    "' does not fit in 64 bits");
    }
    return false;
}

bool CompactTraceReader::State::line_error(LineSource::Status status)
{
    switch (status) {
    case LineSource::Status::too_long:
        return fail("line longer than " + std::to_string(LineSource::k_max_line) + " bytes");
    case LineSource::Status::no_newline:
        return fail("last line does not end with a newline (truncated trace?)");
    case LineSource::Status::read_error:
        return fail(std::string("read error: ") + std::strerror(errno));
    default:
        return fail("truncated trace: it ends without the final Z line");
    }
}

bool CompactTraceReader::State::read_magic()
{
    std::string_view line;
    LineSource::Status status = lines.next(line);
    if (status == LineSource::Status::read_error)
        return line_error(status);
    if (status != LineSource::Status::line || line != k_version_line) {
        error = "xmem: " + name + ":1: not an xmem trace (expected '" +
                std::string(k_version_line) + "')";
        return false;
    }
    return true;
}

// Absorbs the leading M and S lines so metadata (torch version...) is known after open().
bool CompactTraceReader::State::read_header()
{
    if (!read_magic())
        return false;
    for (;;) {
        std::string_view line;
        LineSource::Status status = lines.next(line);
        if (status == LineSource::Status::end)
            return fail("truncated trace: it ends without the final Z line");
        if (status != LineSource::Status::line)
            return line_error(status);
        bool header = line.size() >= 2 && line[1] == ' ' &&
                      (line[0] == letter(Record::metadata) || line[0] == letter(Record::string));
        if (!header) {
            pending = line;
            has_pending = true;
            return true;
        }
        if (!(line[0] == letter(Record::metadata) ? on_metadata(line) : on_string(line)))
            return false;
    }
}

bool CompactTraceReader::State::on_metadata(std::string_view line)
{
    if (seen_alloc)
        return fail("M record after the first A record (metadata must come before allocations)");
    std::string_view rest = line.substr(2);
    size_t space = rest.find(' ');
    if (space == std::string_view::npos)
        return fail("M record needs a key and a value ('M key value')");
    std::string_view key = rest.substr(0, space);
    if (!valid_metadata_key(key))
        return fail("M record: key '" + printable(key) + "' must match [a-z0-9_]+");
    metadata.emplace_back(std::string(key), std::string(rest.substr(space + 1)));
    return true;
}

bool CompactTraceReader::State::on_kernel(std::string_view line)
{
    if (line.size() < 3 || line[2] == ' ')
        return fail("K record needs a module path and its kernel's geometry ('K module kind ...')");
    kernels.emplace_back(line.substr(2));
    return true;
}

bool CompactTraceReader::State::on_string(std::string_view line)
{
    std::string_view rest = line.substr(2);
    size_t space = rest.find(' ');
    if (space == std::string_view::npos)
        return fail("S record needs an id and a text ('S id text')");
    uint64_t id = 0;
    if (!number("S", "id", rest.substr(0, space), id))
        return false;
    if (id == 0)
        return fail("S record: string id must be >= 1 (0 means 'no context')");
    if (!strings.insert(id, texts.size()))
        return fail("S record: string id " + std::to_string(id) + " is defined twice");
    texts.emplace_back(rest.substr(space + 1));
    return true;
}

// One pass over the most common record; false (nothing changed) sends the line to the
// checked parser below, which either accepts an unusual but valid line or names the error.
bool CompactTraceReader::State::fast_alloc(std::string_view line, TraceEvent &ev)
{
    if (line.size() < 2)
        return false;
    const char *p = line.data() + 2, *end = line.data() + line.size();
    uint64_t id, bytes, stream, ctx;
    if (!fast_field(p, end, ' ', id) || !fast_field(p, end, ' ', bytes) || end - p < 2 ||
        (p[0] != 'g' && p[0] != 'h') || p[1] != ' ')
        return false;
    Device dev = p[0] == 'g' ? Device::gpu : Device::host;
    p += 2;
    if (!fast_field(p, end, ' ', stream) || !fast_field(p, end, '\0', ctx) || bytes == 0 ||
        !ctx_defined(ctx) || live_bytes + bytes < live_bytes)
        return false;
    LiveStorage storage{bytes, stream, dev};
    if (!live.insert(id, storage))
        return false;
    ++allocs;
    live_bytes += bytes;
    seen_alloc = true;
    fill_from_live(ev, EventKind::alloc, id, storage, ctx);
    return true;
}

bool CompactTraceReader::State::fast_free(std::string_view line, TraceEvent &ev)
{
    if (line.size() < 2)
        return false;
    const char *p = line.data() + 2, *end = line.data() + line.size();
    uint64_t id;
    LiveStorage storage;
    if (!fast_field(p, end, '\0', id) || !live.erase(id, &storage))
        return false;
    ++frees;
    live_bytes -= storage.bytes;
    fill_from_live(ev, EventKind::free, id, storage, 0);
    return true;
}

bool CompactTraceReader::State::on_alloc(std::string_view line, TraceEvent &ev)
{
    constexpr size_t k_fields = shape_of(Record::alloc).fields + 1;
    std::string_view f[k_fields + 1];
    size_t n = split_fields(line, f, k_fields);
    if (n != k_fields)
        return fail(field_count_message(Record::alloc) + ", got " +
                    (n > k_fields ? std::string("more") : std::to_string(n - 1)));
    uint64_t id, bytes, stream, ctx;
    if (!number("A", "id", f[1], id) || !number("A", "bytes", f[2], bytes) ||
        !number("A", "stream", f[4], stream) || !number("A", "ctx", f[5], ctx))
        return false;
    if (bytes == 0)
        return fail("A record: bytes must be >= 1 (zero-byte storages allocate nothing)");
    if (f[3] != "g" && f[3] != "h")
        return fail("A record: dev '" + printable(f[3]) + "' must be g (GPU) or h (host)");
    if (!ctx_defined(ctx))
        return fail("A record: ctx string id " + std::to_string(ctx) +
                    " is not defined (its S line must come first)");
    Device dev = f[3][0] == 'g' ? Device::gpu : Device::host;
    LiveStorage storage{bytes, stream, dev};
    if (!live.insert(id, storage))
        return fail("A record: storage id " + std::to_string(id) + " is already live (missing F?)");
    if (live_bytes + bytes < live_bytes)
        return fail("A record: live bytes overflow 64 bits");
    ++allocs;
    live_bytes += bytes;
    seen_alloc = true;
    fill_from_live(ev, EventKind::alloc, id, storage, ctx);
    return true;
}

bool CompactTraceReader::State::on_free(std::string_view line, TraceEvent &ev)
{
    constexpr size_t k_fields = shape_of(Record::free).fields + 1;
    std::string_view f[k_fields + 1];
    if (split_fields(line, f, k_fields) != k_fields)
        return fail(field_count_message(Record::free));
    uint64_t id;
    if (!number("F", "id", f[1], id))
        return false;
    LiveStorage storage;
    if (!live.erase(id, &storage))
        return fail("F record: storage id " + std::to_string(id) + " is not live");
    ++frees;
    live_bytes -= storage.bytes;
    fill_from_live(ev, EventKind::free, id, storage, 0);
    return true;
}

bool CompactTraceReader::State::on_record_stream(std::string_view line, TraceEvent &ev)
{
    constexpr size_t k_fields = shape_of(Record::record_stream).fields + 1;
    std::string_view f[k_fields + 1];
    if (split_fields(line, f, k_fields) != k_fields)
        return fail(field_count_message(Record::record_stream));
    uint64_t id, stream;
    if (!number("R", "id", f[1], id) || !number("R", "stream", f[2], stream))
        return false;
    const LiveStorage *storage = live.find(id);
    if (!storage)
        return fail("R record: storage id " + std::to_string(id) + " is not live");
    fill_from_live(ev, EventKind::record_stream, id, *storage, 0);
    ev.stream = stream; // the stream the storage is now used on
    return true;
}

bool CompactTraceReader::State::on_iteration(std::string_view line, TraceEvent &ev)
{
    constexpr size_t k_fields = shape_of(Record::iteration).fields + 1;
    std::string_view f[k_fields + 1];
    if (split_fields(line, f, k_fields) != k_fields)
        return fail(field_count_message(Record::iteration));
    uint64_t n;
    if (!number("I", "n", f[1], n))
        return false;
    if (n <= iteration || n > UINT32_MAX)
        return fail("I record: iteration " + std::to_string(n) + " does not follow iteration " +
                    std::to_string(iteration) + " (iterations count up from 1)");
    iteration = static_cast<uint32_t>(n);
    ev.kind = EventKind::iteration;
    return true;
}

bool CompactTraceReader::State::on_phase(std::string_view line, TraceEvent &ev)
{
    constexpr size_t k_fields = shape_of(Record::phase).fields + 1;
    std::string_view f[k_fields + 1];
    if (split_fields(line, f, k_fields) != k_fields)
        return fail(field_count_message(Record::phase));
    if (!parse_phase(f[1], phase))
        return fail("P record: unknown phase '" + printable(f[1]) +
                    "' (setup data forward backward optimizer zero_grad other)");
    ev.kind = EventKind::phase;
    return true;
}

bool CompactTraceReader::State::on_fraction(std::string_view line, TraceEvent &ev)
{
    constexpr size_t k_fields = shape_of(Record::fraction).fields + 1;
    std::string_view f[k_fields + 1];
    if (split_fields(line, f, k_fields) != k_fields || f[1].empty() || f[1].size() > 40)
        return fail(field_count_message(Record::fraction) + ", a decimal in [0, 1]");
    char text[48];
    std::memcpy(text, f[1].data(), f[1].size());
    text[f[1].size()] = '\0';
    char *end = nullptr;
    double value = std::strtod(text, &end);
    bool plain = std::strspn(text, "0123456789.") == f[1].size();
    if (!plain || *end != '\0' || !(value >= 0.0 && value <= 1.0))
        return fail("X record: fraction '" + printable(f[1]) + "' is not a decimal in [0, 1]");
    ev.kind = EventKind::set_fraction;
    ev.fraction = value;
    return true;
}

bool CompactTraceReader::State::on_totals(std::string_view line)
{
    constexpr size_t k_fields = shape_of(Record::totals).fields + 1;
    std::string_view f[k_fields + 1];
    if (split_fields(line, f, k_fields) != k_fields)
        return fail(field_count_message(Record::totals));
    uint64_t want_allocs, want_frees, want_live;
    if (!number("Z", "allocs", f[1], want_allocs) || !number("Z", "frees", f[2], want_frees) ||
        !number("Z", "live_bytes", f[3], want_live))
        return false;
    if (want_allocs != allocs || want_frees != frees || want_live != live_bytes)
        return fail("Z totals disagree with the trace: Z says " + std::to_string(want_allocs) +
                    " allocs, " + std::to_string(want_frees) + " frees, " +
                    std::to_string(want_live) + " live bytes; read " + std::to_string(allocs) +
                    ", " + std::to_string(frees) + ", " + std::to_string(live_bytes) +
                    " (truncated or edited trace?)");
    seen_totals = true;
    return true;
}

// Parses one line; `produced` tells whether it became an event (M, S, Z do not).
bool CompactTraceReader::State::dispatch(std::string_view line, TraceEvent &ev, bool &produced)
{
    produced = false;
    if (line.empty())
        return fail("empty line (the format has none)");
    if (seen_totals)
        return fail("record after the final Z line");
    if (line.size() > 1 && line[1] != ' ')
        return fail("unknown record '" + printable(line.substr(0, line.find(' '))) +
                    "' (records start with one of " + std::string(k_record_letters) +
                    " and a space)");
    ev.line = lines.line_number();
    produced = true;
    bool ok;
    switch (line[0]) {
    case letter(Record::alloc):
        ok = fast_alloc(line, ev) || on_alloc(line, ev);
        break;
    case letter(Record::free):
        ok = fast_free(line, ev) || on_free(line, ev);
        break;
    case letter(Record::record_stream):
        ok = on_record_stream(line, ev);
        break;
    case letter(Record::iteration):
        ok = on_iteration(line, ev);
        break;
    case letter(Record::phase):
        ok = on_phase(line, ev);
        break;
    case letter(Record::fraction):
        ok = on_fraction(line, ev);
        break;
    case letter(Record::empty_cache):
        ok = line.size() == 1 ? true : fail("E record takes no fields");
        ev.kind = EventKind::empty_cache;
        break;
    case letter(Record::metadata):
        produced = false;
        return on_metadata(line);
    case letter(Record::string):
        produced = false;
        return on_string(line);
    case letter(Record::kernel):
        produced = false;
        return on_kernel(line);
    case letter(Record::totals):
        produced = false;
        return on_totals(line);
    default:
        return fail("unknown record '" + printable(line.substr(0, 1)) +
                    "' (records start with one of " + std::string(k_record_letters) + ")");
    }
    ev.iteration = iteration;
    ev.phase = phase;
    return ok;
}

Result<CompactTraceReader> CompactTraceReader::open(const std::string &path)
{
    std::FILE *file = std::fopen(path.c_str(), "rb");
    if (!file)
        return Result<CompactTraceReader>::fail("xmem: " + path +
                                                ": cannot open trace: " + std::strerror(errno));
    auto state = std::make_unique<State>(file, true, path);
    if (!state->read_header())
        return Result<CompactTraceReader>::fail(state->error);
    return Result<CompactTraceReader>::ok(CompactTraceReader(std::move(state)));
}

Result<CompactTraceReader> CompactTraceReader::open(std::FILE *file, const std::string &name)
{
    auto state = std::make_unique<State>(file, false, name);
    if (!state->read_header())
        return Result<CompactTraceReader>::fail(state->error);
    return Result<CompactTraceReader>::ok(CompactTraceReader(std::move(state)));
}

CompactTraceReader::CompactTraceReader(std::unique_ptr<State> state) : m_state(std::move(state)) {}
CompactTraceReader::CompactTraceReader(CompactTraceReader &&) noexcept = default;
CompactTraceReader &CompactTraceReader::operator=(CompactTraceReader &&) noexcept = default;
CompactTraceReader::~CompactTraceReader() = default;

Result<bool> CompactTraceReader::next(TraceEvent &event)
{
    State &s = *m_state;
    if (!s.error.empty())
        return Result<bool>::fail(s.error);
    for (;;) {
        std::string_view line;
        if (s.has_pending) {
            line = s.pending;
            s.has_pending = false;
        } else {
            LineSource::Status status = s.lines.next(line);
            if (status == LineSource::Status::end && s.seen_totals)
                return Result<bool>::ok(false);
            if (status != LineSource::Status::line) {
                s.line_error(status);
                return Result<bool>::fail(s.error);
            }
        }
        bool produced = false;
        if (!s.dispatch(line, event, produced))
            return Result<bool>::fail(s.error);
        if (produced)
            return Result<bool>::ok(true);
    }
}

const std::string &CompactTraceReader::name() const
{
    return m_state->name;
}
const std::vector<std::pair<std::string, std::string>> &CompactTraceReader::metadata() const
{
    return m_state->metadata;
}
const std::string *CompactTraceReader::metadata_value(std::string_view key) const
{
    for (const auto &kv : m_state->metadata)
        if (kv.first == key)
            return &kv.second;
    return nullptr;
}
const std::vector<std::string> &CompactTraceReader::kernels() const
{
    return m_state->kernels;
}
const std::string *CompactTraceReader::string_text(uint64_t id) const
{
    const size_t *index = m_state->strings.find(id);
    return index ? &m_state->texts[*index] : nullptr;
}
uint64_t CompactTraceReader::allocs() const
{
    return m_state->allocs;
}
uint64_t CompactTraceReader::frees() const
{
    return m_state->frees;
}
uint64_t CompactTraceReader::live_bytes() const
{
    return m_state->live_bytes;
}
size_t CompactTraceReader::live_count() const
{
    return m_state->live.size();
}

} // namespace xmem::trace
