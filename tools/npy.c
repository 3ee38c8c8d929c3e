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
 * Values go to ref_tensor's lanes: integers and bool to int64 (exact, i64
 * included), floats to doubles (exact for every float type).  f16 is decoded
 * from its bits exactly; on the way out a value is
 * first rounded to f16 with dtype_round (round to nearest even, overflow to
 * inf) and the result, now exactly representable, is encoded bit for bit.
 *
 * Writing produces version 1.0 with the header padded so the data starts at
 * a multiple of 64 bytes, byte for byte what numpy.save writes, through
 * outfile.h: a private temporary renamed over PATH once whole (a reader
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
static const char *npy_code(tc_dtype dt)
{
    switch (dt) {
    case TC_F32: case TC_BF16: return "f4";
    case TC_F64: return "f8";
    case TC_F16: return "f2";
    case TC_I32: return "i4";
    case TC_I64: return "i8";
    case TC_BOOL: return "b1";
    default: return NULL;
    }
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

/* A float element (ref_tensor's double lane). */
static double decode(tc_dtype dt, const unsigned char *p)
{
    switch (dt) {
    case TC_F16:
        return dtype_f16_value((uint16_t)get_le(p, 2));
    case TC_F32: {
        uint32_t u = (uint32_t)get_le(p, 4);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case TC_F64: {
        uint64_t u = get_le(p, 8);
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    default:
        return 0;
    }
}

/* An integer or bool element (ref_tensor's int64 lane). */
static int64_t decode_int(tc_dtype dt, const unsigned char *p)
{
    switch (dt) {
    case TC_BOOL: return p[0] != 0;
    case TC_I32: return (int32_t)(uint32_t)get_le(p, 4);
    default: return (int64_t)get_le(p, 8);
    }
}

static void encode_int(tc_dtype dt, int64_t v, unsigned char *p)
{
    switch (dt) {
    case TC_BOOL: p[0] = v != 0; break;
    case TC_I32: put_le(p, (uint32_t)(int32_t)dtype_wrap(dt, v), 4); break;
    default: put_le(p, (uint64_t)v, 8); break;
    }
}

static void encode(tc_dtype dt, double v, unsigned char *p)
{
    switch (dt) {
    case TC_F16:
        put_le(p, dtype_f16_bits(v), 2);
        break;
    case TC_F32: case TC_BF16: { /* a bf16 value is an f32 exactly */
        float f = (float)dtype_round(dt, v);
        uint32_t u;
        memcpy(&u, &f, 4);
        put_le(p, u, 4);
        break;
    }
    case TC_F64: {
        uint64_t u;
        memcpy(&u, &v, 8);
        put_le(p, u, 8);
        break;
    }
    default:
        break;
    }
}

/* --- reading the header dict ---------------------------------------------- */

typedef struct {
    const char *p, *end;
    const char *path;
    tc_diag *d;
} hdr;

static tc_status bad(hdr *h, const char *what)
{
    return diag_set(h->d, TC_ERR_INVALID_ARG, (tc_loc){0},
                    "'%s' is not a valid .npy file: %s", h->path, what);
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
static tc_status parse_descr(hdr *h, const char *s, tc_dtype *dt)
{
    static const struct { const char *code; tc_dtype dt; } types[] = {
        {"f4", TC_F32}, {"f8", TC_F64}, {"f2", TC_F16},
        {"i4", TC_I32}, {"i8", TC_I64}, {"b1", TC_BOOL},
    };
    char order = s[0];
    const char *code = (order == '<' || order == '>' || order == '|' || order == '=') ? s + 1 : s;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strcmp(code, types[i].code) != 0)
            continue;
        bool one_byte = types[i].dt == TC_BOOL;
        /* '=' is native order; every host tensorc runs on is little-endian,
         * but check rather than assume. */
        const uint16_t probe = 1;
        bool little = *(const unsigned char *)&probe == 1;
        if (order == '>' && !one_byte)
            return diag_set(h->d, TC_ERR_INVALID_ARG, (tc_loc){0},
                            "'%s' holds big-endian data ('%s'), which is not supported: "
                            "save it little-endian (a.astype(a.dtype.newbyteorder('<')))",
                            h->path, s);
        if (order == '=' && !little && !one_byte)
            return bad(h, "native byte order of a big-endian writer");
        *dt = types[i].dt;
        return TC_OK;
    }
    return diag_set(h->d, TC_ERR_INVALID_ARG, (tc_loc){0},
                    "'%s' holds elements of type '%s', which tensorc does not support "
                    "(supported: <f4 <f8 <f2 <i4 <i8 |b1; bf16 travels as <f4)", h->path, s);
}

/* {'descr': D, 'fortran_order': B, 'shape': (d0, d1, ...)} in any key order. */
static tc_status parse_header(hdr *h, ref_tensor *t)
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
                return diag_set(h->d, TC_ERR_INVALID_ARG, (tc_loc){0},
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
                if (t->rank == TC_MAX_RANK)
                    return diag_set(h->d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                    "'%s' has more than %d dimensions, the most tensorc supports",
                                    h->path, TC_MAX_RANK);
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
        return diag_set(h->d, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "'%s' is in Fortran order, which is not supported: "
                        "save np.ascontiguousarray(a)", h->path);
    return TC_OK;
}

/* --- reading ---------------------------------------------------------------- */

static tc_status io_error(tc_diag *d, const char *verb, const char *path, int err)
{
    return diag_set(d, TC_ERR_IO, (tc_loc){0}, "cannot %s '%s': %s", verb, path, strerror(err));
}

static tc_status truncated(tc_diag *d, const char *path, const char *what)
{
    return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                    "'%s' is not a valid .npy file: it ends inside %s", path, what);
}

/* Read exactly n bytes; false on a short read (errno tells a real error). */
static bool read_exact(FILE *f, void *buf, size_t n)
{
    errno = 0;
    return fread(buf, 1, n, f) == n;
}

static tc_status read_file(FILE *f, const char *path, ref_tensor *t, tc_diag *d)
{
    /* The file's size bounds every length read from it. */
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0)
        return io_error(d, "read", path, errno);
    if (S_ISDIR(sb.st_mode))
        return io_error(d, "read", path, EISDIR);
    if (!S_ISREG(sb.st_mode))
        return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "'%s' is not a regular file", path);
    uint64_t fsize = (uint64_t)sb.st_size;

    unsigned char pre[12];
    if (fsize < 10 || !read_exact(f, pre, 10) || memcmp(pre, MAGIC, 6) != 0) {
        if (ferror(f))
            return io_error(d, "read", path, errno ? errno : EIO);
        return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "'%s' is not a .npy file (it does not start with \\x93NUMPY)", path);
    }
    int major = pre[6], minor = pre[7];
    if ((major < 1 || major > 3) || minor != 0)
        return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "'%s' is .npy format version %d.%d; tensorc reads 1.0, 2.0 and 3.0",
                        path, major, minor);
    uint64_t hlen, start;
    if (major == 1) {
        hlen = get_le(pre + 8, 2);
        start = 10;
    } else {
        if (fsize < 12 || !read_exact(f, pre + 10, 2))
            return truncated(d, path, "the header length");
        hlen = get_le(pre + 8, 4);
        start = 12;
    }
    if (hlen > NPY_MAX_HEADER || hlen > fsize - start)
        return truncated(d, path, "the header");
    char *text = malloc(hlen + 1);
    if (!text)
        return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory reading '%s'", path);
    if (!read_exact(f, text, hlen)) {
        free(text);
        return truncated(d, path, "the header");
    }
    text[hlen] = 0;
    hdr h = {text, text + hlen, path, d};
    ref_tensor r = {0};
    tc_status st = parse_header(&h, &r);
    free(text);
    if (st != TC_OK)
        return st;

    /* Count elements with overflow checks before trusting the shape. */
    uint64_t n = 1, esize = (uint64_t)dtype_size(r.dtype);
    for (int i = 0; i < r.rank; i++) {
        uint64_t s = (uint64_t)r.shape[i];
        if (s != 0 && n > UINT64_MAX / s)
            return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                            "'%s' has a shape whose size overflows", path);
        n *= s;
    }
    uint64_t avail = fsize - start - hlen;
    if (n > avail / esize) {
        if (n > UINT64_MAX / esize)
            return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                            "'%s' has a shape whose size overflows", path);
        return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "'%s' is truncated: its shape needs %llu bytes of data, but it has %llu",
                        path, (unsigned long long)(n * esize), (unsigned long long)avail);
    }
    if (n > SIZE_MAX / sizeof(double))
        return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "'%s' is too large to load", path);

    /* At least one slot, so an empty array still has a distinct pointer;
     * the lane of the dtype's class (ref.h). */
    bool is_int = ref_is_int(r.dtype);
    if (is_int)
        r.idata = malloc((n ? n : 1) * sizeof(int64_t));
    else
        r.data = malloc((n ? n : 1) * sizeof(double));
    unsigned char *buf = malloc(NPY_CHUNK * (size_t)esize);
    if (!(is_int ? (void *)r.idata : (void *)r.data) || !buf) {
        ref_free(&r);
        free(buf);
        return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory reading '%s'", path);
    }
    for (uint64_t i = 0; i < n;) {
        size_t k = n - i < NPY_CHUNK ? (size_t)(n - i) : NPY_CHUNK;
        if (!read_exact(f, buf, k * (size_t)esize)) {
            int err = errno;
            ref_free(&r);
            free(buf);
            return ferror(f) ? io_error(d, "read", path, err ? err : EIO)
                             : truncated(d, path, "the data");
        }
        for (size_t j = 0; j < k; j++) {
            if (is_int)
                r.idata[i + j] = decode_int(r.dtype, buf + j * (size_t)esize);
            else
                r.data[i + j] = decode(r.dtype, buf + j * (size_t)esize);
        }
        i += k;
    }
    free(buf);
    *t = r;
    return TC_OK;
}

tc_status npy_read(const char *path, ref_tensor *t, tc_diag *d)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return io_error(d, "read", path, errno);
    tc_status st = read_file(f, path, t, d);
    fclose(f);
    return st;
}

/* --- writing ---------------------------------------------------------------- */

/* The v1.0 preamble and header for t: data starts at a multiple of 64. */
static size_t make_header(const ref_tensor *t, char *out, size_t cap)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     t->dtype == TC_BOOL ? '|' : '<', npy_code(t->dtype));
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

static bool write_all(FILE *f, const ref_tensor *t, int64_t n)
{
    char head[1024];
    size_t hl = make_header(t, head, sizeof head);
    if (!hl || fwrite(head, 1, hl, f) != hl)
        return false;
    int esize = (t->dtype == TC_BF16) ? 4 : dtype_size(t->dtype);
    unsigned char *buf = malloc(NPY_CHUNK * (size_t)esize);
    if (!buf) {
        errno = ENOMEM;
        return false;
    }
    for (int64_t i = 0; i < n;) {
        size_t k = n - i < NPY_CHUNK ? (size_t)(n - i) : NPY_CHUNK;
        for (size_t j = 0; j < k; j++) {
            if (t->idata)
                encode_int(t->dtype, t->idata[i + (int64_t)j], buf + j * (size_t)esize);
            else
                encode(t->dtype, t->data[i + (int64_t)j], buf + j * (size_t)esize);
        }
        if (fwrite(buf, (size_t)esize, k, f) != k) {
            free(buf);
            return false;
        }
        i += (int64_t)k;
    }
    free(buf);
    return true;
}

tc_status npy_write_to(tc_outset *s, int index, const char *path, const ref_tensor *t,
                       tc_diag *d)
{
    if (!npy_code(t->dtype) || t->rank < 0 || t->rank > TC_MAX_RANK)
        return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "cannot write '%s': a tensor of type %s and rank %d has no .npy form",
                        path, dtype_name(t->dtype), t->rank);
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i] < 0 || (t->shape[i] && n > INT64_MAX / t->shape[i]))
            return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                            "cannot write '%s': invalid shape", path);
        n *= t->shape[i];
    }
    int fd;
    tc_status st = outset_open(s, index, &fd, d);
    if (st != TC_OK)
        return st;
    /* stdio on a second descriptor: outset_done syncs and closes the first */
    int fd2 = dup(fd);
    FILE *f = fd2 >= 0 ? fdopen(fd2, "wb") : NULL;
    if (!f) {
        int err = errno;
        if (fd2 >= 0)
            close(fd2);
        return outset_done(s, index, false, err, d);
    }
    errno = 0;
    bool ok = write_all(f, t, n);
    int err = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    return outset_done(s, index, ok, err ? err : EIO, d);
}

tc_status npy_write(const char *path, const ref_tensor *t, tc_diag *d)
{
    tc_outset *s = outset_new();
    if (!s)
        return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory writing '%s'", path);
    int i;
    tc_status st = outset_add(s, path, "", &i, d);
    if (st == TC_OK)
        st = npy_write_to(s, i, path, t, d);
    if (st == TC_OK)
        st = outset_commit(s, d);
    outset_free(s);
    return st;
}
