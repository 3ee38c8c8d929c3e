/* test_json.c - the JSON writer (src/base/json.h): separators and nesting
 * placed by the writer, strings escaped as RFC 8259 wants, numbers that
 * read back exactly, NaN and infinities as null. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *quoted(tc_arena *a, const char *s)
{
    tc_buf b;
    buf_init(&b, a);
    jw_quote(&b, s);
    return buf_str(&b);
}

static void test_escapes(void **state)
{
    (void)state;
    tc_arena *a = arena_new(NULL);
    assert_string_equal(quoted(a, "plain"), "\"plain\"");
    assert_string_equal(quoted(a, "a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_string_equal(quoted(a, "l1\nl2\tx\r"), "\"l1\\nl2\\tx\\r\"");
    assert_string_equal(quoted(a, "\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
    assert_string_equal(quoted(a, "µs é"), "\"µs é\""); /* UTF-8 passes through */
    assert_string_equal(quoted(a, ""), "\"\"");
    arena_free(a);
}

static void test_document(void **state)
{
    (void)state;
    tc_arena *a = arena_new(NULL);
    tc_buf b;
    buf_init(&b, a);
    tc_json j;
    jw_init(&j, &b);
    jw_obj(&j);
    jw_key(&j, "n");
    jw_int(&j, -42);
    jw_key(&j, "x");
    jw_num(&j, 0.1);
    jw_key(&j, "big");
    jw_int(&j, INT64_MAX);
    jw_key(&j, "nan");
    jw_num(&j, NAN);
    jw_key(&j, "inf");
    jw_num(&j, -INFINITY);
    jw_key(&j, "empty");
    jw_arr(&j);
    jw_end(&j);
    jw_key(&j, "list");
    jw_arr(&j);
    jw_bool(&j, true);
    jw_null(&j);
    jw_str(&j, NULL);
    jw_obj(&j);
    jw_end(&j);
    jw_end(&j);
    jw_end(&j);
    assert_string_equal(buf_str(&b), "{\n"
                                     "  \"n\": -42,\n"
                                     "  \"x\": 0.1,\n"
                                     "  \"big\": 9223372036854775807,\n"
                                     "  \"nan\": null,\n"
                                     "  \"inf\": null,\n"
                                     "  \"empty\": [],\n"
                                     "  \"list\": [\n"
                                     "    true,\n"
                                     "    null,\n"
                                     "    null,\n"
                                     "    {}\n"
                                     "  ]\n"
                                     "}\n");
    arena_free(a);
}

static void test_numbers_read_back(void **state)
{
    (void)state;
    tc_arena *a = arena_new(NULL);
    const double vs[] = {0.1, 1.0 / 3, 1e-300, 123456789.125, -2.5e17, 5e-324, 1.7976931348623157e308};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        tc_buf b;
        buf_init(&b, a);
        tc_json j;
        jw_init(&j, &b);
        jw_num(&j, vs[i]);
        assert_true(strtod(buf_str(&b), NULL) == vs[i]);
    }
    arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_document),
        cmocka_unit_test(test_numbers_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
