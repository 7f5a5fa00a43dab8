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
#include "../common/assert_contains.hpp"
