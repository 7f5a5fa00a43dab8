// cmocka.hpp — CMocka's headers in the order it needs, for C++ test files. CMocka defines a
// fail() macro that breaks std::basic_ios::fail(), so standard headers come first.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}
