// assert_contains.hpp — assert_true with both strings printed when a substring is missing, for
// the C++ unit tests whose cmocka.hpp includes this after <cmocka.h> (print_error, fail).
#pragma once
#include <string>

#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        std::string h_ = (hay), n_ = (needle);                                                     \
        if (h_.find(n_) == std::string::npos) {                                                    \
            print_error("'%s' does not contain '%s'\n", h_.c_str(), n_.c_str());                   \
            fail();                                                                                \
        }                                                                                          \
    } while (0)
