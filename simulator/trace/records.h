// The records of docs/trace-format.md, defined once for C++: the version line, each record's
// letter, and (in RecordEncoder) each record's field order and number formats. Every C++
// writer encodes through RecordEncoder (the simulator's CompactTraceWriter, the exact
// capture's spool writer in daemon/profiler/capture) and CompactTraceReader dispatches on the
// same letters, so a record cannot be spelled two ways.
//
// Header-only on purpose: the capture library compiles it with its own flags (hidden symbols,
// no sanitizers in a sanitizer build) and so links nothing of the simulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace xmem::trace
{

// The first line of every trace, without its '\n'.
inline constexpr std::string_view k_version_line = "#xmem-trace 1";
// Every line is at most this many bytes, '\n' not counted.
inline constexpr size_t k_max_line_bytes = 4096;

enum class Record : char {
    metadata = 'M',      // M key value
    string = 'S',        // S id text
    kernel = 'K',        // K module kind fields
    iteration = 'I',     // I n
    phase = 'P',         // P phase
    alloc = 'A',         // A id bytes dev stream ctx
    free = 'F',          // F id
    record_stream = 'R', // R id stream
    empty_cache = 'E',   // E
    fraction = 'X',      // X fraction
    totals = 'Z',        // Z allocs frees live_bytes
};

// Each record's fields after its letter, in order, as docs/trace-format.md's table names
// them. M's value and S's text run to the end of the line and count as one field; K's
// key=value fields after its kind ("...") are not counted.
struct RecordShape {
    Record record;
    size_t fields;
    std::string_view names;
};

inline constexpr RecordShape k_record_shapes[] = {
    {Record::metadata, 2, "key value"},
    {Record::string, 2, "id text"},
    {Record::kernel, 2, "module kind ..."},
    {Record::iteration, 1, "n"},
    {Record::phase, 1, "phase"},
    {Record::alloc, 5, "id bytes dev stream ctx"},
    {Record::free, 1, "id"},
    {Record::record_stream, 2, "id stream"},
    {Record::empty_cache, 0, ""},
    {Record::fraction, 1, "fraction"},
    {Record::totals, 3, "allocs frees live_bytes"},
};

constexpr const RecordShape &shape_of(Record record)
{
    for (const RecordShape &shape : k_record_shapes)
        if (shape.record == record)
            return shape;
    return k_record_shapes[0]; // unreachable: every Record is in the table
}

// The record letters in the format's order, as error messages list them.
inline constexpr std::string_view k_record_letters = "M S K I P A F R E X Z";

constexpr char letter(Record record)
{
    return static_cast<char>(record);
}

// The `dev` field of an A record.
inline constexpr char k_dev_gpu = 'g';
inline constexpr char k_dev_host = 'h';

// Writes the decimal digits of V to OUT (at least 20 bytes); returns how many (1..20).
inline size_t format_u64(uint64_t v, char *out)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; ++i)
        out[i] = tmp[n - 1 - i];
    return n;
}

// Writes FRACTION (in [0, 1]) to OUT (at least 32 bytes) as the plainest decimal the reader
// takes: up to 9 digits after the point, trailing zeros and a bare point dropped ("0.5",
// "1", "0"). Returns how many bytes.
inline size_t format_fraction(double fraction, char *out)
{
    int n = std::snprintf(out, 32, "%.9f", fraction);
    if (n < 0)
        return 0;
    while (n > 1 && out[n - 1] == '0')
        --n;
    if (n > 1 && out[n - 1] == '.')
        --n;
    return static_cast<size_t>(n);
}

// Encodes records into SINK, anything with `void put(std::string_view)`, each with the fields
// of k_record_shapes in their order (tests/unit/trace checks the two agree). It only formats:
// what a record may contain (live ids, single-line text, metadata first) is the writers'
// business, since the simulator's writer refuses a bad record and the capture repairs it.
template <class Sink> class RecordEncoder
{
  public:
    explicit RecordEncoder(Sink &sink) : m_sink(sink) {}

    void version_line()
    {
        m_sink.put(k_version_line);
        m_sink.put("\n");
    }
    void metadata(std::string_view key, std::string_view value)
    {
        begin(Record::metadata);
        text(key);
        text(value);
        end();
    }
    void string(uint64_t id, std::string_view value)
    {
        begin(Record::string);
        number(id);
        text(value);
        end();
    }
    // TEXT is everything after "K ": module, kind and the key=value fields.
    void kernel(std::string_view value)
    {
        begin(Record::kernel);
        text(value);
        end();
    }
    void iteration(uint64_t n)
    {
        begin(Record::iteration);
        number(n);
        end();
    }
    void phase(std::string_view name)
    {
        begin(Record::phase);
        text(name);
        end();
    }
    void alloc(uint64_t id, uint64_t bytes, char dev, uint64_t stream, uint64_t ctx)
    {
        begin(Record::alloc);
        number(id);
        number(bytes);
        text(std::string_view(&dev, 1));
        number(stream);
        number(ctx);
        end();
    }
    void free(uint64_t id)
    {
        begin(Record::free);
        number(id);
        end();
    }
    void record_stream(uint64_t id, uint64_t stream)
    {
        begin(Record::record_stream);
        number(id);
        number(stream);
        end();
    }
    void empty_cache()
    {
        begin(Record::empty_cache);
        end();
    }
    void fraction(double value)
    {
        char digits[32];
        begin(Record::fraction);
        m_sink.put(" ");
        m_sink.put(std::string_view(digits, format_fraction(value, digits)));
        end();
    }
    void totals(uint64_t allocs, uint64_t frees, uint64_t live_bytes)
    {
        begin(Record::totals);
        number(allocs);
        number(frees);
        number(live_bytes);
        end();
    }

  private:
    void begin(Record record)
    {
        char c = letter(record);
        m_sink.put(std::string_view(&c, 1));
    }
    void text(std::string_view value)
    {
        m_sink.put(" ");
        m_sink.put(value);
    }
    void number(uint64_t value)
    {
        char digits[20];
        m_sink.put(" ");
        m_sink.put(std::string_view(digits, format_u64(value, digits)));
    }
    void end() { m_sink.put("\n"); }

    Sink &m_sink;
};

// A sink that collects the encoded records in memory (a header written apart from the events).
struct StringSink {
    std::string text;
    void put(std::string_view s) { text.append(s); }
};

} // namespace xmem::trace
