// The inline script that draws a timeline's stacked layers (recorder.h) in the page.
//
// It reads the JSON in <script id="xmem-data" type="application/json"> (html.cpp writes it)
// and draws, with no network and no library: one stacked area chart per group of layers
// (by category, by module), each with the allocated peak marked, a tooltip naming the
// layers' bytes under the pointer, and a bar of the storages live at the peak whose tooltip
// names each one's module, op and size. It writes the top of each stack at its peak mark
// into <output id="stacked-peak-GROUP"> so a test (or a reader) can compare it with the
// report, and any script error into <pre id="page-errors">.
#pragma once

namespace xmem::timeline
{

extern const char *const k_stack_script;

} // namespace xmem::timeline
