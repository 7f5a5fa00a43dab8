// cmocka.hpp — CMocka's headers in the order it needs, for C++ test files. CMocka defines a
// fail() macro that breaks std::basic_ios::fail() and xmem::Result::fail(), so standard
// headers and the report's own (which use both) come first.
#pragma once
#include "report.h"
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}

// assert_true with both strings printed when a substring is missing.
#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        std::string h_ = (hay), n_ = (needle);                                                     \
        if (h_.find(n_) == std::string::npos) {                                                    \
            print_error("'%s' does not contain '%s'\n", h_.c_str(), n_.c_str());                   \
            fail();                                                                                \
        }                                                                                          \
    } while (0)
