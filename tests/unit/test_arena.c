/* test_arena.c - the bump allocator, the string builder and the hash table (hset.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "arena.h"
#include "diag.h"
#include "hset.h"

#include <limits.h>

static void test_alloc_aligned_zeroed(void **state)
{
    (void)state;
    tc_arena *a = arena_new(NULL);
    assert_non_null(a);
    assert_int_equal(arena_bytes(a), 0);
    size_t sizes[] = {1, 3, 16, 17, 100, 4096, 70000, 1, 200000, 5};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = arena_alloc(a, sizes[i]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        for (size_t k = 0; k < sizes[i]; k++)
            if (p[k] != 0)
                fail_msg("byte %zu of allocation %zu is not zero", k, i);
        memset(p, 0xAB, sizes[i]); /* dirty it: the next allocation must still be zero */
        total += (sizes[i] + 15) & ~(size_t)15;
        assert_int_equal(arena_bytes(a), total);
    }
    /* reuse after dirtying inside one chunk */
    int *xs = ARENA_ARRAY(a, int, 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(xs[i], 0);
    struct pt { double x, y; } *pt = ARENA_NEW(a, struct pt);
    assert_true(pt->x == 0 && pt->y == 0);
    arena_free(a);
    arena_free(NULL); /* fine */
}

static void test_strings(void **state)
{
    (void)state;
    tc_arena *a = arena_new(NULL);
    char *s = arena_strdup(a, "hello");
    assert_string_equal(s, "hello");
    char *t = arena_strndup(a, "hello world", 5);
    assert_string_equal(t, "hello");
    assert_ptr_not_equal(s, t);
    assert_string_equal(arena_strndup(a, "abc", 0), "");
    assert_string_equal(arena_printf(a, "%s=%d", "N", 64), "N=64");
    assert_string_equal(arena_printf(a, "%s", ""), "");
    arena_free(a);
}

static void test_buf_growth(void **state)
{
    (void)state;
    tc_arena *a = arena_new(NULL);
    tc_buf b;
    buf_init(&b, a);
    assert_string_equal(buf_str(&b), "");
    assert_int_equal(b.len, 0);
    buf_puts(&b, "ab");
    buf_putc(&b, 'c');
    buf_printf(&b, "%d-%s", 42, "x");
    assert_string_equal(buf_str(&b), "abc42-x");
    assert_int_equal(b.len, 7);
    /* grow far past the first 64 bytes, through every entry point */
    char line[300];
    memset(line, 'z', sizeof line - 1);
    line[sizeof line - 1] = 0;
    buf_puts(&b, line);
    assert_int_equal(b.len, 7 + 299);
    for (int i = 0; i < 1000; i++)
        buf_putc(&b, (char)('0' + i % 10));
    buf_printf(&b, "%s|%05d", line, 7);
    size_t want = 7 + 299 + 1000 + 299 + 6;
    assert_int_equal(b.len, want);
    assert_int_equal(strlen(buf_str(&b)), want);
    assert_true(b.cap > b.len);
    const char *s = buf_str(&b);
    assert_memory_equal(s, "abc42-x", 7);
    assert_int_equal(s[7 + 299], '0');
    assert_int_equal(s[7 + 299 + 999], '9');
    assert_string_equal(s + want - 6, "|00007");
    /* one printf larger than any doubling step */
    tc_buf c;
    buf_init(&c, a);
    buf_printf(&c, "%5000s", "end");
    assert_int_equal(c.len, 5000);
    assert_string_equal(buf_str(&c) + 4997, "end");
    arena_free(a);
}

/* arena_grow: n pushes keep every element, capacity starts at `first` and
 * doubles only when full, the array is the same while it has room, and
 * the new room is zeroed (callers relied on ARENA_ARRAY's zeroing). */
static void test_grow(void **state)
{
    (void)state;
    tc_arena *a = arena_new(NULL);
    struct item { int64_t k; char tag; } *v = NULL;
    int n = 0, cap = 0, grows = 0;
    for (int i = 0; i < 10000; i++) {
        struct item *before = v;
        int cap_before = cap;
        ARENA_GROW(a, v, n, cap, 5);
        if (n < cap_before) {
            assert_ptr_equal(v, before); /* room left: no new block */
            assert_int_equal(cap, cap_before);
        } else {
            grows++;
            assert_int_equal(cap, cap_before ? 2 * cap_before : 5);
            assert_int_equal((uintptr_t)v % 16, 0);
            for (int k = n; k < cap; k++)
                assert_true(v[k].k == 0 && v[k].tag == 0);
        }
        v[n++] = (struct item){(int64_t)i * 7919, (char)i};
    }
    assert_int_equal(grows, 12); /* 5, 10, ..., 10240 */
    for (int i = 0; i < n; i++)
        if (v[i].k != (int64_t)i * 7919 || v[i].tag != (char)i)
            fail_msg("element %d lost", i);
    /* first <= 0 still gives room for one */
    int *w = NULL, wn = 0, wcap = 0;
    ARENA_GROW(a, w, wn, wcap, 0);
    assert_int_equal(wcap, 1);
    w[wn++] = 3;
    arena_free(a);
}

static void grow_past_int(void *arg)
{
    tc_arena *a = arg;
    char *v = NULL;
    int cap = INT_MAX / 2 + 1;
    ARENA_GROW(a, v, cap, cap, 8);  /* would need 2^31 elements */
}

/* A capacity past INT_MAX is an out-of-memory error, not a wrapped int. */
static void test_grow_overflow(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    tc_arena *a = arena_new(&d);
    assert_int_equal(diag_protect(&d, grow_past_int, a), TC_ERR_NOMEM);
    assert_non_null(strstr(d.msg, "out of memory"));
    diag_release(&d);
    arena_free(a);
}

static bool int_eq(const void *elem, const void *key)
{
    return *(const int *)elem == *(const int *)key;
}

/* The hash table finds what was added and nothing else, through growth
 * and through collisions (every key of a few hashes shares a probe run). */
static void test_hset(void **state)
{
    (void)state;
    tc_arena *a = arena_new(NULL);
    enum { N = 5000 };
    int *v = ARENA_ARRAY(a, int, N);
    for (int hashes = 1; hashes <= 1024; hashes *= 32) {
        tc_hset s;
        hset_init(&s, a, hashes == 1 ? 0 : 8);
        for (int i = 0; i < N; i++) {
            v[i] = i;
            uint64_t h = (uint64_t)(i % hashes) * 0x9e3779b97f4a7c15ull;
            if (i % 7 == 0) /* look before adding, as the users do */
                assert_null(hset_find(&s, h, int_eq, &v[i]));
            hset_add(&s, a, h, &v[i]);
            assert_true(2 * s.n <= s.cap);
        }
        assert_int_equal(s.n, N);
        for (int i = 0; i < N; i++) {
            uint64_t h = (uint64_t)(i % hashes) * 0x9e3779b97f4a7c15ull;
            int key = i;
            assert_ptr_equal(hset_find(&s, h, int_eq, &key), &v[i]);
            key = N + i; /* equal hash, no equal element */
            assert_null(hset_find(&s, h, int_eq, &key));
        }
    }
    tc_hset empty = {0};
    int k = 1;
    assert_null(hset_find(&empty, 1, int_eq, &k));
    arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_aligned_zeroed),
        cmocka_unit_test(test_hset),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_buf_growth),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_grow_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
