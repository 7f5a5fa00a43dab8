// Writes a TimelineRecorder as ONE self-contained HTML page: inline SVG, inline CSS, no
// script and no network, so it opens from a login node's scratch dir or a mail attachment.
#pragma once

#include "common/result.h"
#include "timeline/recorder.h"

#include <string>

namespace xmem::timeline
{

struct PageText {
    std::string title;    // e.g. "xmem sim: train.xtrace"
    std::string subtitle; // e.g. "torch 2.6.0, capacity 80.00 GiB"
};

// The page as a string (for tests and for callers that embed it).
std::string render_timeline_html(const TimelineRecorder &timeline, const PageText &text);

// Writes the page to `path`; returns the number of bytes written.
Result<uint64_t> write_timeline_html(const TimelineRecorder &timeline, const PageText &text,
                                     const std::string &path);

} // namespace xmem::timeline
