#include "analysis/categorize.h"

#include <unordered_map>

namespace xmem::analysis
{

const char *category_name(Category c)
{
    switch (c) {
    case Category::weights:
        return "weights";
    case Category::gradients:
        return "gradients";
    case Category::optimizer_state:
        return "optimizer_state";
    case Category::activations:
        return "activations";
    case Category::inputs:
        return "inputs";
    case Category::workspaces:
        return "workspaces";
    case Category::other:
        return "other";
    }
    return "other";
}

namespace
{

struct FreeAt {
    bool freed = false;
    uint32_t iteration = 0;
    Phase phase = Phase::setup;
};

Category classify(const Workload &work, const TraceEvent &a, const FreeAt &f)
{
    if (work.inserted_by_xmem(a) &&
        work.ctx_text(a.ctx).find("_workspace") != std::string_view::npos)
        return Category::workspaces;
    bool outlives_iteration = !f.freed || f.iteration > a.iteration;
    switch (a.phase) {
    case Phase::data:
        return Category::inputs;
    case Phase::backward:
        return outlives_iteration || f.phase != Phase::backward ? Category::gradients
                                                                : Category::activations;
    case Phase::optimizer:
        return outlives_iteration ? Category::optimizer_state : Category::other;
    case Phase::forward:
        return Category::activations;
    default:
        break;
    }
    if (a.iteration == 0 && outlives_iteration)
        return Category::weights;
    return Category::other;
}

} // namespace

std::vector<Category> categorize(const Workload &work)
{
    const auto &events = work.events;
    std::vector<FreeAt> free_of(events.size());
    std::unordered_map<uint64_t, size_t> live;
    for (size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &ev = events[i];
        if (ev.kind == EventKind::alloc) {
            live[ev.id] = i;
        } else if (ev.kind == EventKind::free) {
            auto it = live.find(ev.id);
            if (it == live.end())
                continue;
            free_of[it->second] = {true, ev.iteration, ev.phase};
            live.erase(it);
        }
    }
    std::vector<Category> out(events.size(), Category::other);
    for (size_t i = 0; i < events.size(); ++i)
        if (events[i].kind == EventKind::alloc)
            out[i] = classify(work, events[i], free_of[i]);
    return out;
}

} // namespace xmem::analysis
