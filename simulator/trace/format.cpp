#include "trace/format.h"

namespace xmem::trace
{

TraceFormat detect_format(std::FILE *file)
{
    int c;
    bool skipped = false;
    while ((c = std::getc(file)) == ' ' || c == '\t' || c == '\n' || c == '\r')
        skipped = true;
    if (c == EOF)
        return TraceFormat::empty;
    std::ungetc(c, file);
    if (c == '#' && !skipped)
        return TraceFormat::compact;
    if (c == '{' || c == '[')
        return TraceFormat::snapshot_json;
    if (c == 0x80)
        return TraceFormat::snapshot_pickle;
    return TraceFormat::unknown;
}

} // namespace xmem::trace
