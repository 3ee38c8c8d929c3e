/* timing.c - the two clocks of suite.md.
 *
 * A step is one call of the case through the public API (tc_run), or for
 * a foreach case (an optimizer over many tensors) one tc_run_foreach over
 * all of them.  Throughput cases are timed both ways and the lower figure
 * is reported:
 *
 *   event   CUDA events recorded on the stream around one step, after
 *           warm-up; the median of EVENT_ITERS steps.  GPU time, host
 *           overhead only where it leaves the GPU idle between launches.
 *   wall    `wall_calls` steps back to back, synchronized once at the end,
 *           divided by their number: what a caller looping over the API
 *           sees.  Enough steps to fill about WALL_TARGET_MS.
 *
 * Host time: the wall clock around each event-timed step's calls, which
 * only enqueue work; the stream is idle when each starts (the previous
 * step's end event was waited for), so it is the API's own cost per step,
 * reported as the median.
 *
 * Latency cases are wall time per call of 2000 back-to-back calls (the
 * suite's definition; events are kept as a second figure).  Everything is
 * on the default stream, as the peers' PyTorch work is.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

enum { WARMUP = 3, LAT_WARMUP = 20, EVENT_ITERS = 50, LAT_CALLS = 2000 };
#define WALL_TARGET_MS 250.0

tc_status run_step(const bench_step *s)
{
    if (s->lists)
        return tc_run_foreach(s->p, s->fn, (size_t)s->ngroups, s->lists, (size_t)s->nlists, NULL);
    for (int i = 0; i < s->ninst; i++) {
        tc_status st = tc_run(s->p, s->fn, s->inst[i].targs, (size_t)s->inst[i].ntargs, NULL);
        if (st != TC_OK)
            return st;
    }
    return TC_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *run_error(const bench_step *s, tc_status st)
{
    return msgf("tc_run failed: %s: %s", tc_status_str(st), tc_errmsg(s->ctx));
}

tc_ctx *dev_open(tc_device_info *info, char **err)
{
    tc_ctx *dev = NULL;
    if (tc_ctx_create(&dev) != TC_OK) {
        *err = msgf("out of memory");
        return NULL;
    }
    tc_status st = tc_device_open(dev, 0, info);
    if (st != TC_OK) {
        *err = dev_error(dev, st);
        tc_ctx_free(dev);
        return NULL;
    }
    return dev;
}

char *dev_error(const tc_ctx *dev, tc_status st)
{
    /* an unlocated error's full text is "error: MESSAGE\n" */
    const char *m = tc_errmsg(dev);
    if (!*m)
        return msgf("%s", tc_status_str(st));
    if (!strncmp(m, "error: ", 7))
        m += 7;
    size_t n = strlen(m);
    return msgf("%.*s", (int)(n && m[n - 1] == '\n' ? n - 1 : n), m);
}

static char *dev_fail(const char *what, tc_status st, const tc_ctx *dev)
{
    char *m = dev_error(dev, st), *r = msgf("%s: %s", what, m);
    free(m);
    return r;
}

/* Event-timed median of iters calls of step(arg); *us gets it, and *host_us
 * (when not NULL) the median host time of the step() calls themselves. */
static bool event_median(tc_ctx *dev, tc_status (*step)(const void *), const void *arg,
                         int iters, double *us, double *host_us, tc_status *step_st, char **err)
{
    void *e0 = NULL, *e1 = NULL;
    double *v = calloc((size_t)iters, sizeof *v), *h = calloc((size_t)iters, sizeof *h);
    tc_status st = v && h ? TC_OK : TC_ERR_NOMEM;
    *step_st = TC_OK;
    if (st == TC_OK && (st = tc_event_create(dev, &e0)) == TC_OK)
        st = tc_event_create(dev, &e1);
    for (int i = 0; st == TC_OK && i < iters; i++) {
        float ms = 0;
        if ((st = tc_event_record(dev, e0, NULL)) != TC_OK)
            break;
        double t0 = now_ms();
        if ((*step_st = step(arg)) != TC_OK)
            break;
        h[i] = 1e3 * (now_ms() - t0);
        if ((st = tc_event_record(dev, e1, NULL)) == TC_OK &&
            (st = tc_event_elapsed(dev, e0, e1, &ms)) == TC_OK)
            v[i] = 1e3 * ms;
    }
    bool ok = st == TC_OK && *step_st == TC_OK;
    if (st != TC_OK)
        *err = dev_fail("event timing", st, dev);
    if (ok)
        *us = median(v, iters);
    if (ok && host_us)
        *host_us = median(h, iters);
    if (e0)
        tc_event_destroy(dev, e0);
    if (e1)
        tc_event_destroy(dev, e1);
    free(v);
    free(h);
    return ok;
}

static tc_status step_thunk(const void *arg)
{
    return run_step(arg);
}

bool time_steps(tc_ctx *dev, const bench_step *s, bool latency, bool quick, timing *t,
                char **err)
{
    *t = (timing){0};
    tc_status st = TC_OK, sst = TC_OK;
    bool ok = true;
    int warm = latency ? LAT_WARMUP : WARMUP;
    for (int i = 0; i < warm && st == TC_OK; i++)
        st = run_step(s);
    if (st != TC_OK) {
        *err = run_error(s, st);
        ok = false;
    } else if ((st = tc_device_sync(dev, NULL)) != TC_OK) {
        *err = dev_fail("after warm-up", st, dev);
        ok = false;
    }

    t->event_iters = latency ? 200 : s->ninst > 1 && !s->lists ? 20 : quick ? 20 : EVENT_ITERS;
    if (ok && !event_median(dev, step_thunk, s, t->event_iters, &t->event_us, &t->host_us, &sst, err)) {
        if (sst != TC_OK)
            *err = run_error(s, sst);
        ok = false;
    }

    if (latency) {
        t->wall_calls = quick ? 200 : LAT_CALLS;
    } else if (ok) {
        double n = t->event_us > 0 ? WALL_TARGET_MS * 1e3 / t->event_us : 20;
        t->wall_calls = n < 20 ? 20 : n > 1000 ? 1000 : (int)n;
        if (quick && t->wall_calls > 50)
            t->wall_calls = 50;
    }
    if (ok && (st = tc_device_sync(dev, NULL)) != TC_OK) {
        *err = dev_fail("before the wall-clock loop", st, dev);
        ok = false;
    }
    if (ok) {
        double t0 = now_ms();
        for (int i = 0; i < t->wall_calls && st == TC_OK; i++)
            st = run_step(s);
        if (st != TC_OK) {
            *err = run_error(s, st);
            ok = false;
        } else if ((st = tc_device_sync(dev, NULL)) != TC_OK) {
            *err = dev_fail("after the wall-clock loop", st, dev);
            ok = false;
        } else {
            t->wall_us = (now_ms() - t0) * 1e3 / t->wall_calls;
        }
    }
    return ok;
}

bool time_replay(tc_ctx *dev, const bench_step *s, bool quick, replay_timing *t, char **err)
{
    *t = (replay_timing){0};
    if (s->lists || s->ninst != 1) {
        *err = msgf("replay is measured for one tc_run per step");
        return false;
    }
    tc_replay *r = NULL;
    const bench_inst *in = &s->inst[0];
    tc_status st = tc_capture(s->p, s->fn, in->targs, (size_t)in->ntargs, &r);
    if (st != TC_OK) {
        *err = msgf("tc_capture failed: %s: %s", tc_status_str(st), tc_errmsg(s->ctx));
        return false;
    }
    t->kernels = tc_replay_kernels(r);
    t->calls = quick ? 200 : LAT_CALLS;
    for (int i = 0; i < LAT_WARMUP && st == TC_OK; i++)
        st = tc_replay_run(r, NULL, 0, NULL);
    if (st == TC_OK)
        st = tc_device_sync(dev, NULL);
    double t0 = now_ms();
    for (int i = 0; i < t->calls && st == TC_OK; i++)
        st = tc_replay_run(r, NULL, 0, NULL);
    if (st == TC_OK)
        st = tc_device_sync(dev, NULL);
    double us = (now_ms() - t0) * 1e3 / t->calls;
    if (st != TC_OK)
        *err = msgf("tc_replay_run failed: %s: %s", tc_status_str(st), tc_errmsg(s->ctx));
    else
        t->us = us;
    tc_replay_free(r);
    return st == TC_OK;
}

typedef struct {
    tc_ctx *dev;
    void *dst, *src;
    size_t bytes;
} copy_arg;

static tc_status copy_thunk(const void *arg)
{
    const copy_arg *c = arg;
    return tc_device_copy(c->dev, c->dst, c->src, c->bytes, TC_COPY_ON_DEVICE, NULL);
}

bool time_copy(tc_ctx *dev, void *dst, void *src, size_t bytes, int iters, double *us,
               char **err)
{
    copy_arg c = {dev, dst, src, bytes};
    tc_status st = TC_OK, sst;
    for (int i = 0; i < WARMUP && st == TC_OK; i++)
        st = copy_thunk(&c);
    bool ok = st == TC_OK;
    if (!ok)
        *err = dev_fail("device-to-device copy", st, dev);
    else if (!event_median(dev, copy_thunk, &c, iters, us, NULL, &sst, err)) {
        if (sst != TC_OK)
            *err = dev_fail("device-to-device copy", sst, dev);
        ok = false;
    }
    return ok;
}
