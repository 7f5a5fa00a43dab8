#include "analysis/conv_workspace.h"

#include <algorithm>
#include <charconv>

namespace xmem::analysis
{
namespace
{

std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> out;
    for (;;) {
        size_t at = s.find(sep);
        out.push_back(s.substr(0, at));
        if (at == std::string_view::npos)
            return out;
        s.remove_prefix(at + 1);
    }
}

bool parse_list(std::string_view text, std::vector<uint64_t> &out)
{
    out.clear();
    for (std::string_view part : split(text, ',')) {
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (ec != std::errc() || end != part.data() + part.size())
            return false;
        out.push_back(v);
    }
    return true;
}

uint64_t product(const std::vector<uint64_t> &v, size_t from = 0)
{
    uint64_t p = 1;
    for (size_t i = from; i < v.size(); ++i)
        p *= v[i];
    return p;
}

bool all_equal(const std::vector<uint64_t> &v, uint64_t value)
{
    return std::all_of(v.begin(), v.end(), [value](uint64_t e) { return e == value; });
}

bool set_field(ConvGeometry &g, std::string_view key, std::string_view value)
{
    std::vector<uint64_t> one;
    if (key == "x")
        return parse_list(value, g.x);
    if (key == "w")
        return parse_list(value, g.w);
    if (key == "s")
        return parse_list(value, g.stride);
    if (key == "d")
        return parse_list(value, g.dilation);
    if (key == "p") {
        if (value == "same" || value == "valid") {
            g.pad_same = value == "same";
            g.padding.clear();
            return true;
        }
        return parse_list(value, g.padding);
    }
    if (key == "g" || key == "e" || key == "t") {
        if (!parse_list(value, one) || one.size() != 1)
            return false;
        if (key == "g")
            g.groups = one[0];
        else if (key == "e")
            g.elem = one[0];
        else
            g.transposed = one[0] != 0;
        return true;
    }
    return true; // unknown keys: newer captures may add some
}

} // namespace

uint64_t ConvGeometry::input_numel() const
{
    return product(x);
}
uint64_t ConvGeometry::weight_numel() const
{
    return product(w);
}

uint64_t ConvGeometry::output_channels() const
{
    if (w.size() < 2)
        return 0;
    return transposed ? w[1] * groups : w[0];
}

uint64_t ConvGeometry::output_numel() const
{
    if (x.size() < 3 || w.size() != x.size())
        return 0;
    size_t dims = x.size() - 2;
    uint64_t n = x[0] * output_channels();
    for (size_t i = 0; i < dims; ++i) {
        uint64_t in = x[2 + i], k = w[2 + i];
        uint64_t s = i < stride.size() ? stride[i] : 1, d = i < dilation.size() ? dilation[i] : 1;
        uint64_t p = i < padding.size() ? padding[i] : 0;
        uint64_t span = d * (k - 1) + 1;
        uint64_t out;
        if (transposed)
            out = (in - 1) * s + span - std::min(2 * p, (in - 1) * s + span);
        else if (pad_same)
            out = in;
        else
            out = in + 2 * p >= span ? (in + 2 * p - span) / s + 1 : 0;
        n *= out;
    }
    return n;
}

bool ConvGeometry::large_workspace_eligible() const
{
    if (x.size() < 3 || w.size() != x.size() || groups != 1)
        return false;
    bool kernel_above_1x1 = std::any_of(w.begin() + 2, w.end(), [](uint64_t k) { return k > 1; });
    return x[1] >= k_conv_min_input_channels && kernel_above_1x1 && all_equal(stride, 1) &&
           all_equal(dilation, 1);
}

std::optional<ConvGeometry> parse_conv_record(std::string_view text)
{
    auto fields = split(text, ' ');
    if (fields.size() < 3 || fields[1] != "conv")
        return std::nullopt;
    ConvGeometry g;
    g.module = std::string(fields[0]);
    for (size_t i = 2; i < fields.size(); ++i) {
        size_t eq = fields[i].find('=');
        if (eq == std::string_view::npos ||
            !set_field(g, fields[i].substr(0, eq), fields[i].substr(eq + 1)))
            return std::nullopt;
    }
    if (g.x.size() < 3 || g.w.size() != g.x.size() || g.groups == 0)
        return std::nullopt;
    return g;
}

uint64_t conv_workspace_bytes(const ConvGeometry &g, uint64_t elem, double factor,
                              uint64_t cap_bytes)
{
    if (factor <= 0 || !g.large_workspace_eligible())
        return 0;
    double bytes = factor * double(elem) * double(g.input_numel() + g.output_numel());
    return std::min<uint64_t>(static_cast<uint64_t>(bytes), cap_bytes);
}

} // namespace xmem::analysis
