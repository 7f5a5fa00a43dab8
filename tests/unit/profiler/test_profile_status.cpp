// The profile-status contract has two spellings, daemon/contract/profile_status.h and its
// Python twin daemon/profiler/python/xmem_profile_status.py: every exit number, every status
// line's word, and the exit each giving-up line ends with must be the same in both.
#include <map>
#include <regex>
#include <sstream> // before CMocka's fail() macro

#include "contract/profile_status.h"
#include "test-list.h"

namespace
{

struct Table {
    std::map<std::string, int> exits;          // NAME -> number
    std::map<std::string, std::string> lines;  // NAME -> word
    std::map<std::string, std::string> gives;  // giving-up line NAME -> exit NAME
    std::map<std::string, std::string> limits; // limit line NAME -> exit NAME
};

Table header_table()
{
    Table t;
#define XMEM_EXIT_ROW_(num, name, text) t.exits[#name] = num;
    XMEM_PROFILE_EXITS(XMEM_EXIT_ROW_)
#undef XMEM_EXIT_ROW_
    std::map<int, std::string> exit_name;
    for (const auto &e : t.exits)
        exit_name[e.second] = e.first;
#define XMEM_LINE_ROW_(name, word, exit, text)                                                     \
    t.lines[#name] = word;                                                                         \
    if ((exit) >= 0)                                                                               \
        t.gives[#name] = exit_name[exit];
    XMEM_PROFILE_STATUS_LINES(XMEM_LINE_ROW_)
#undef XMEM_LINE_ROW_
#define XMEM_LIMIT_ROW_(name, word, exit, text)                                                    \
    t.lines[#name] = word;                                                                         \
    t.limits[#name] = exit_name[exit];
    XMEM_PROFILE_LIMIT_LINES(XMEM_LIMIT_ROW_)
#undef XMEM_LIMIT_ROW_
    return t;
}

Table python_table()
{
    Table t;
    std::istringstream in(xmem_test_read_file(XMEM_SRC "/daemon/profiler/python/"
                                                       "xmem_profile_status.py"));
    std::regex exit_row(R"(^EXIT_([A-Z_]+) = (\d+)$)");
    std::regex line_row(R"re(^LINE_([A-Z_]+) = "([a-z-]+)"$)re");
    std::regex dict_start(R"(^([A-Z_]+) = \{$)");
    std::regex dict_row(R"(^    LINE_([A-Z_]+): EXIT_([A-Z_]+),$)");
    std::map<std::string, std::string> *dict = nullptr; // GIVE_UP_EXIT or LIMIT_EXIT
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_match(line, m, exit_row))
            t.exits[m[1]] = std::stoi(m[2]);
        else if (std::regex_match(line, m, line_row))
            t.lines[m[1]] = m[2];
        else if (std::regex_match(line, m, dict_start))
            dict = m[1] == "GIVE_UP_EXIT" ? &t.gives : m[1] == "LIMIT_EXIT" ? &t.limits : nullptr;
        else if (dict && std::regex_match(line, m, dict_row))
            (*dict)[m[1]] = m[2];
    }
    return t;
}

template <typename Map> void assert_same(const Map &header, const Map &python, const char *what)
{
    if (header == python)
        return;
    print_error("%s differ between profile_status.h and xmem_profile_status.py\n", what);
    fail();
}

void python_twin_matches_header(void **)
{
    Table h = header_table(), p = python_table();
    assert_true(h.exits.size() >= 8 && h.lines.size() >= 9 && h.gives.size() >= 3 &&
                h.limits.size() >= 2);
    assert_same(h.exits, p.exits, "exit statuses");
    assert_same(h.lines, p.lines, "status lines");
    assert_same(h.gives, p.gives, "the exit each giving-up line ends with");
    assert_same(h.limits, p.limits, "the exit each limit line leads to");
}

// Read by xmem-estimate and by scripts: changing one is a breaking change.
void exit_numbers_are_fixed(void **)
{
    assert_int_equal(XMEM_PROFILE_EXIT_UNSUPPORTED, 3);
    assert_int_equal(XMEM_PROFILE_EXIT_ENVIRONMENT, 4);
    assert_int_equal(XMEM_PROFILE_EXIT_MEMORY, 5);
    assert_int_equal(XMEM_PROFILE_EXIT_NO_MEMORY, 6);
    assert_int_equal(XMEM_PROFILE_EXIT_NO_PROCESSES, 7);
}

} // namespace

int xmem_test_group_profile_status(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(python_twin_matches_header),
        cmocka_unit_test(exit_numbers_are_fixed),
    };
    return cmocka_run_group_tests_name("profile_status", tests, nullptr, nullptr);
}
