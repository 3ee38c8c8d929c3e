/* npy.c - NumPy .npy files in and out; see npy.h.
 *
 * The format (numpy/lib/format.py) is a 6-byte magic "\x93NUMPY", a major and
 * minor version byte, a little-endian header length (2 bytes in version 1,
 * 4 bytes in versions 2 and 3), then the header: the text of a Python dict
 *
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 *
 * padded with spaces and a final newline, then the raw elements.  We read the
 * dict with a tiny tokenizer of our own rather than pattern matching, so
 * harmless variations (key order, double quotes, spacing, a trailing comma or
 * none, "(3,)" vs "(3)") are accepted, and anything else is refused with a
 * message that names the file and says what was wrong.
 *
 * Nothing in a file is trusted: the header length is bounded by the file's
 * size, the product of the shape is checked for overflow, and the data must
 * be present in full before anything is allocated for it.  Elements are
 * decoded byte by byte as little-endian, so the code does not depend on the
 * host's byte order.
 *
 * Values stay the bytes they are (cli.h's htensor holds a dtype's own
 * bytes), moved between the file's little-endian order and the host's; a
 * bf16 tensor goes out as the f32 it is exactly.
 *
 * Writing produces version 1.0 with the header padded so the data starts at
 * a multiple of 64 bytes, byte for byte what numpy.save writes, through
 * an output set (tensorc.h's tc_outset): a private temporary renamed over PATH once whole (a reader
 * never sees half a file), or a device or FIFO written in place.
 */
#include "npy.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

enum {
    NPY_MAX_HEADER = 1 << 20, /* far beyond any real header; bounds a hostile one */
    NPY_CHUNK = 1 << 16,      /* elements converted per read or write */
};

/* --- element encodings ---------------------------------------------------- */

/* The npy type string of a dtype, without the byte-order character. */
static const char *npy_code(DLDataType dt)
{
    static const struct { const char *name, *code; } codes[] = {
        {"f32", "f4"}, {"bf16", "f4"}, {"f64", "f8"}, {"f16", "f2"},
        {"i32", "i4"}, {"i64", "i8"}, {"bool", "b1"},
    };
    const char *name = tc_dtype_name(dt);
    for (size_t i = 0; name && i < sizeof codes / sizeof codes[0]; i++)
        if (strcmp(name, codes[i].name) == 0)
            return codes[i].code;
    return NULL;
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (unsigned char)(v & 0xff);
}

/* An n-byte unsigned value in host order at p, and back. */
static void put_host(unsigned char *p, uint64_t v, int n)
{
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;
    memcpy(p, n == 1 ? (void *)&u8 : n == 2 ? (void *)&u16 : n == 4 ? (void *)&u32 : (void *)&v,
           (size_t)n);
}

static uint64_t get_host(const unsigned char *p, int n)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (n) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    default: memcpy(&u64, p, 8); return u64;
    }
}

/* One element of t (index i) as the file stores it: little-endian, bf16
 * widened to its f32 (exact), bool as 0 or 1. */
static void file_elem(const htensor *t, int64_t i, unsigned char *out)
{
    int sz = dt_size(t->dtype);
    const unsigned char *p = t->data + i * sz;
    if (t->dtype.code == kDLBfloat) {
        float f = (float)tc_value_decode(t->dtype, p);
        uint32_t u;
        memcpy(&u, &f, 4);
        put_le(out, u, 4);
    } else if (dt_is_bool(t->dtype)) {
        out[0] = p[0] != 0;
    } else {
        put_le(out, get_host(p, sz), sz);
    }
}

/* --- reading the header dict ---------------------------------------------- */

typedef struct {
    const char *p, *end;
    const char *path;
    char **msg;
} hdr;

static tc_status bad(hdr *h, const char *what)
{
    return tool_error(h->msg, TC_ERR_INVALID_ARG, "'%s' is not a valid .npy file: %s", h->path,
                      what);
}

static void skip_ws(hdr *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static bool eat(hdr *h, char c)
{
    skip_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return true;
    }
    return false;
}

/* A quoted Python string without escapes (all npy keys and descrs are plain). */
static bool read_str(hdr *h, char *out, size_t cap)
{
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return false;
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || n + 1 >= cap)
            return false;
        out[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return false;
    h->p++;
    out[n] = 0;
    return true;
}

static bool read_word(hdr *h, const char *w)
{
    skip_ws(h);
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
        h->p += n;
        return true;
    }
    return false;
}

/* A non-negative Python int, possibly written with an L suffix (Python 2). */
static bool read_dim(hdr *h, int64_t *v)
{
    skip_ws(h);
    if (h->p >= h->end || *h->p < '0' || *h->p > '9')
        return false;
    int64_t x = 0;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
        int digit = *h->p++ - '0';
        if (x > (INT64_MAX - digit) / 10)
            return false;
        x = x * 10 + digit;
    }
    if (h->p < h->end && *h->p == 'L')
        h->p++;
    *v = x;
    return true;
}

/* The descr string: byte order then type code, e.g. "<f4", "|b1". */
static tc_status parse_descr(hdr *h, const char *s, DLDataType *dt)
{
    static const struct { const char *code, *dt; } types[] = {
        {"f4", "f32"}, {"f8", "f64"}, {"f2", "f16"},
        {"i4", "i32"}, {"i8", "i64"}, {"b1", "bool"},
    };
    char order = s[0];
    const char *code = (order == '<' || order == '>' || order == '|' || order == '=') ? s + 1 : s;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strcmp(code, types[i].code) != 0)
            continue;
        bool one_byte = strcmp(types[i].dt, "bool") == 0;
        /* '=' is native order; every host tensorc runs on is little-endian,
         * but check rather than assume. */
        const uint16_t probe = 1;
        bool little = *(const unsigned char *)&probe == 1;
        if (order == '>' && !one_byte)
            return tool_error(h->msg, TC_ERR_INVALID_ARG,
                            "'%s' holds big-endian data ('%s'), which is not supported: "
                            "save it little-endian (a.astype(a.dtype.newbyteorder('<')))",
                            h->path, s);
        if (order == '=' && !little && !one_byte)
            return bad(h, "native byte order of a big-endian writer");
        *dt = dt_parse(types[i].dt);
        return TC_OK;
    }
    return tool_error(h->msg, TC_ERR_INVALID_ARG,
                    "'%s' holds elements of type '%s', which tensorc does not support "
                    "(supported: <f4 <f8 <f2 <i4 <i8 |b1; bf16 travels as <f4)", h->path, s);
}

/* {'descr': D, 'fortran_order': B, 'shape': (d0, d1, ...)} in any key order. */
static tc_status parse_header(hdr *h, htensor *t)
{
    bool have_descr = false, have_order = false, have_shape = false, fortran = false;
    if (!eat(h, '{'))
        return bad(h, "the header is not a dict");
    while (!eat(h, '}')) {
        char key[32];
        if (!read_str(h, key, sizeof key))
            return bad(h, "expected a quoted key in the header dict");
        if (!eat(h, ':'))
            return bad(h, "expected ':' after a key in the header dict");
        if (strcmp(key, "descr") == 0 && !have_descr) {
            char descr[32];
            skip_ws(h);
            if (h->p < h->end && *h->p == '[')
                return tool_error(h->msg, TC_ERR_INVALID_ARG,
                                "'%s' holds a structured array, which is not supported", h->path);
            if (!read_str(h, descr, sizeof descr))
                return bad(h, "'descr' is not a type string");
            tc_status st = parse_descr(h, descr, &t->dtype);
            if (st != TC_OK)
                return st;
            have_descr = true;
        } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
            if (read_word(h, "True"))
                fortran = true;
            else if (!read_word(h, "False"))
                return bad(h, "'fortran_order' is not True or False");
            have_order = true;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if (!eat(h, '('))
                return bad(h, "'shape' is not a tuple");
            t->rank = 0;
            while (!eat(h, ')')) {
                if (t->rank == TC_MAX_DIMS)
                    return tool_error(h->msg, TC_ERR_INVALID_ARG,
                                    "'%s' has more than %d dimensions, the most tensorc supports",
                                    h->path, TC_MAX_DIMS);
                if (!read_dim(h, &t->shape[t->rank]))
                    return bad(h, "'shape' holds something other than non-negative integers");
                t->rank++;
                if (!eat(h, ',')) {
                    if (!eat(h, ')'))
                        return bad(h, "expected ',' or ')' in 'shape'");
                    break;
                }
            }
            have_shape = true;
        } else {
            char msg[96];
            snprintf(msg, sizeof msg, "unexpected or repeated key '%s' in the header", key);
            return bad(h, msg);
        }
        if (!eat(h, ',')) {
            if (!eat(h, '}'))
                return bad(h, "expected ',' or '}' in the header dict");
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape)
        return bad(h, !have_descr ? "the header has no 'descr'"
                      : !have_order ? "the header has no 'fortran_order'"
                                    : "the header has no 'shape'");
    skip_ws(h);
    if (h->p != h->end)
        return bad(h, "unexpected text after the header dict");
    int big = 0; /* dims larger than 1: only then does the order matter */
    for (int i = 0; i < t->rank; i++)
        big += t->shape[i] > 1;
    if (fortran && big > 1)
        return tool_error(h->msg, TC_ERR_INVALID_ARG,
                        "'%s' is in Fortran order, which is not supported: "
                        "save np.ascontiguousarray(a)", h->path);
    return TC_OK;
}

/* --- reading ---------------------------------------------------------------- */

static tc_status io_error(char **msg, const char *verb, const char *path, int err)
{
    return tool_error(msg, TC_ERR_IO, "cannot %s '%s': %s", verb, path, strerror(err));
}

static tc_status truncated(char **msg, const char *path, const char *what)
{
    return tool_error(msg, TC_ERR_INVALID_ARG, "'%s' is not a valid .npy file: it ends inside %s",
                      path, what);
}

/* Read exactly n bytes; false on a short read (errno tells a real error). */
static bool read_exact(FILE *f, void *buf, size_t n)
{
    errno = 0;
    return fread(buf, 1, n, f) == n;
}

static tc_status read_file(FILE *f, const char *path, htensor *t, char **msg)
{
    /* The file's size bounds every length read from it. */
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0)
        return io_error(msg, "read", path, errno);
    if (S_ISDIR(sb.st_mode))
        return io_error(msg, "read", path, EISDIR);
    if (!S_ISREG(sb.st_mode))
        return tool_error(msg, TC_ERR_INVALID_ARG,
                        "'%s' is not a regular file", path);
    uint64_t fsize = (uint64_t)sb.st_size;

    unsigned char pre[12];
    if (fsize < 10 || !read_exact(f, pre, 10) || memcmp(pre, MAGIC, 6) != 0) {
        if (ferror(f))
            return io_error(msg, "read", path, errno ? errno : EIO);
        return tool_error(msg, TC_ERR_INVALID_ARG,
                        "'%s' is not a .npy file (it does not start with \\x93NUMPY)", path);
    }
    int major = pre[6], minor = pre[7];
    if ((major < 1 || major > 3) || minor != 0)
        return tool_error(msg, TC_ERR_INVALID_ARG,
                        "'%s' is .npy format version %d.%d; tensorc reads 1.0, 2.0 and 3.0",
                        path, major, minor);
    uint64_t hlen, start;
    if (major == 1) {
        hlen = get_le(pre + 8, 2);
        start = 10;
    } else {
        if (fsize < 12 || !read_exact(f, pre + 10, 2))
            return truncated(msg, path, "the header length");
        hlen = get_le(pre + 8, 4);
        start = 12;
    }
    if (hlen > NPY_MAX_HEADER || hlen > fsize - start)
        return truncated(msg, path, "the header");
    char *text = malloc(hlen + 1);
    if (!text)
        return tool_error(msg, TC_ERR_NOMEM, "out of memory reading '%s'", path);
    if (!read_exact(f, text, hlen)) {
        free(text);
        return truncated(msg, path, "the header");
    }
    text[hlen] = 0;
    hdr h = {text, text + hlen, path, msg};
    htensor r = {0};
    tc_status st = parse_header(&h, &r);
    free(text);
    if (st != TC_OK)
        return st;

    /* Count elements with overflow checks before trusting the shape. */
    uint64_t n = 1, esize = (uint64_t)dt_size(r.dtype);
    for (int i = 0; i < r.rank; i++) {
        uint64_t s = (uint64_t)r.shape[i];
        if (s != 0 && n > UINT64_MAX / s)
            return tool_error(msg, TC_ERR_INVALID_ARG,
                            "'%s' has a shape whose size overflows", path);
        n *= s;
    }
    uint64_t avail = fsize - start - hlen;
    if (n > avail / esize) {
        if (n > UINT64_MAX / esize)
            return tool_error(msg, TC_ERR_INVALID_ARG,
                            "'%s' has a shape whose size overflows", path);
        return tool_error(msg, TC_ERR_INVALID_ARG,
                        "'%s' is truncated: its shape needs %llu bytes of data, but it has %llu",
                        path, (unsigned long long)(n * esize), (unsigned long long)avail);
    }
    if (n > SIZE_MAX / esize)
        return tool_error(msg, TC_ERR_NOMEM, "'%s' is too large to load", path);

    /* At least one byte, so an empty array still has a distinct pointer. */
    r.data = malloc(n ? (size_t)(n * esize) : 1);
    unsigned char *buf = malloc(NPY_CHUNK * (size_t)esize);
    if (!r.data || !buf) {
        ht_free(&r);
        free(buf);
        return tool_error(msg, TC_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    int sz = (int)esize;
    bool is_bool = dt_is_bool(r.dtype);
    for (uint64_t i = 0; i < n;) {
        size_t k = n - i < NPY_CHUNK ? (size_t)(n - i) : NPY_CHUNK;
        if (!read_exact(f, buf, k * (size_t)esize)) {
            int err = errno;
            ht_free(&r);
            free(buf);
            return ferror(f) ? io_error(msg, "read", path, err ? err : EIO)
                             : truncated(msg, path, "the data");
        }
        for (size_t j = 0; j < k; j++) {
            uint64_t v = get_le(buf + j * esize, sz);
            put_host(r.data + (i + j) * esize, is_bool ? v != 0 : v, sz);
        }
        i += k;
    }
    free(buf);
    *t = r;
    return TC_OK;
}

tc_status npy_read(const char *path, htensor *t, char **msg)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return io_error(msg, "read", path, errno);
    tc_status st = read_file(f, path, t, msg);
    fclose(f);
    return st;
}

/* --- writing ---------------------------------------------------------------- */

/* The v1.0 preamble and header for t: data starts at a multiple of 64. */
static size_t make_header(const htensor *t, char *out, size_t cap)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     dt_is_bool(t->dtype) ? '|' : '<', npy_code(t->dtype));
    for (int i = 0; i < t->rank; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, i ? ", %lld" : "%lld",
                      (long long)t->shape[i]);
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", t->rank == 1 ? "," : "");
    /* numpy (1.23 and later) leaves room for the first dim to grow to 21
     * digits, so a file can be appended to in place; do the same so our files
     * are byte for byte what numpy.save writes. */
    if (t->rank > 0) {
        char digits[24];
        int nd = snprintf(digits, sizeof digits, "%lld", (long long)t->shape[0]);
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%*s", 21 - nd, "");
    }
    size_t total = 10 + (size_t)n + 1;          /* preamble, dict, '\n' */
    total = (total + 63) / 64 * 64;
    if (total > cap)
        return 0;
    memcpy(out, MAGIC, 6);
    out[6] = 1;
    out[7] = 0;
    put_le((unsigned char *)out + 8, total - 10, 2);
    memcpy(out + 10, dict, (size_t)n);
    memset(out + 10 + n, ' ', total - 10 - (size_t)n - 1);
    out[total - 1] = '\n';
    return total;
}

static bool write_all(FILE *f, const htensor *t, int64_t n)
{
    char head[1024];
    size_t hl = make_header(t, head, sizeof head);
    if (!hl || fwrite(head, 1, hl, f) != hl)
        return false;
    int esize = t->dtype.code == kDLBfloat ? 4 : dt_size(t->dtype);
    unsigned char *buf = malloc(NPY_CHUNK * (size_t)esize);
    if (!buf) {
        errno = ENOMEM;
        return false;
    }
    for (int64_t i = 0; i < n;) {
        size_t k = n - i < NPY_CHUNK ? (size_t)(n - i) : NPY_CHUNK;
        for (size_t j = 0; j < k; j++)
            file_elem(t, i + (int64_t)j, buf + j * (size_t)esize);
        if (fwrite(buf, (size_t)esize, k, f) != k) {
            free(buf);
            return false;
        }
        i += (int64_t)k;
    }
    free(buf);
    return true;
}

/* The set's message of a failed call, as ours. */
static tc_status set_failed(tc_outset *s, tc_status st, char **msg)
{
    free(*msg);
    *msg = strdup(tc_outset_errmsg(s));
    return st;
}

tc_status npy_write_to(tc_outset *s, int index, const char *path, const htensor *t, char **msg)
{
    if (!npy_code(t->dtype) || t->rank < 0 || t->rank > TC_MAX_DIMS)
        return tool_error(msg, TC_ERR_INVALID_ARG,
                        "cannot write '%s': a tensor of type %s and rank %d has no .npy form",
                        path, dt_name(t->dtype), t->rank);
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i] < 0 || (t->shape[i] && n > INT64_MAX / t->shape[i]))
            return tool_error(msg, TC_ERR_INVALID_ARG,
                            "cannot write '%s': invalid shape", path);
        n *= t->shape[i];
    }
    int fd;
    tc_status st = tc_outset_open(s, index, &fd);
    if (st != TC_OK)
        return set_failed(s, st, msg);
    /* stdio on a second descriptor: outset_done syncs and closes the first */
    int fd2 = dup(fd);
    FILE *f = fd2 >= 0 ? fdopen(fd2, "wb") : NULL;
    if (!f) {
        int err = errno;
        if (fd2 >= 0)
            close(fd2);
        st = tc_outset_done(s, index, false, err);
        return st == TC_OK ? TC_OK : set_failed(s, st, msg);
    }
    errno = 0;
    bool ok = write_all(f, t, n);
    int err = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    st = tc_outset_done(s, index, ok, err ? err : EIO);
    return st == TC_OK ? TC_OK : set_failed(s, st, msg);
}

tc_status npy_write(const char *path, const htensor *t, char **msg)
{
    tc_outset *s = tc_outset_new();
    if (!s)
        return tool_error(msg, TC_ERR_NOMEM, "out of memory writing '%s'", path);
    int i;
    tc_status st = tc_outset_add(s, path, "", &i);
    if (st != TC_OK)
        st = set_failed(s, st, msg);
    if (st == TC_OK)
        st = npy_write_to(s, i, path, t, msg);
    if (st == TC_OK && (st = tc_outset_commit(s)) != TC_OK)
        st = set_failed(s, st, msg);
    tc_outset_free(s);
    return st;
}
