// cmocka.hpp — CMocka's headers in the order it needs, for C++ test files. CMocka defines a
// fail() macro that breaks std::basic_ios::fail(), so every standard and third-party header
// the tests use is included here first.
#pragma once
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <vector>
#include <yaml-cpp/yaml.h>
// xmem::Result has a fail() member; the GPU catalog is the policy's.
#include "common/result.h"
#include "analysis/catalog.h"
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}
#include <string>
#include "../common/assert_contains.hpp"
