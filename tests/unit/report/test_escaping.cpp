// test-escaping.cpp — CSV, JSON and HTML escaping of names that come from users.
#include "cmocka.hpp"
#include "report.h"
#include "test-list.h"

using namespace xmem::report;

static void csv_quotes_only_when_needed(void **)
{
    assert_string_equal(csv_field("alice").c_str(), "alice");
    assert_string_equal(csv_field("a,b").c_str(), "\"a,b\"");
    assert_string_equal(csv_field("say \"hi\"").c_str(), "\"say \"\"hi\"\"\"");
    assert_string_equal(csv_field("two\nlines").c_str(), "\"two\nlines\"");
}

static void json_escapes_quotes_backslashes_and_controls(void **)
{
    assert_string_equal(json_string("plain").c_str(), "\"plain\"");
    assert_string_equal(json_string("a\"b\\c").c_str(), "\"a\\\"b\\\\c\"");
    assert_string_equal(json_string("t\tn\n\x01").c_str(), "\"t\\tn\\n\\u0001\"");
    assert_string_equal(json_string("h\xc3\xa9").c_str(), "\"h\xc3\xa9\""); // UTF-8 kept
}

static void html_escapes_markup(void **)
{
    assert_string_equal(html_escape("<b x='1'>&\"</b>").c_str(),
                        "&lt;b x=&#39;1&#39;&gt;&amp;&quot;&lt;/b&gt;");
}

int test_group_escaping(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_quotes_only_when_needed),
        cmocka_unit_test(json_escapes_quotes_backslashes_and_controls),
        cmocka_unit_test(html_escapes_markup),
    };
    return cmocka_run_group_tests_name("escaping", tests, nullptr, nullptr);
}
