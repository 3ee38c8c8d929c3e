/* cugraph.h - CUDA graphs through the driver API: capture a stream's work
 * once, launch it again and again (tc_capture / tc_replay_run).
 *
 * The graph entry points (cuStreamBeginCapture_v2, cuStreamEndCapture,
 * cuGraphInstantiateWithFlags, cuGraphLaunch, ...) are looked up in the
 * libcuda that driver.c already loaded, on first use, apart from driver.c's
 * table: they are optional (a driver without them still runs everything
 * else), and a missing one is said by name (TC_ERR_UNSUPPORTED).
 *
 * Capture uses a stream of its own (non-blocking, made and destroyed
 * here) in thread-local mode, so nothing the caller does on other streams
 * or threads is captured by mistake.  A graph is instantiated at once;
 * the graph itself is kept only where its kernel nodes are to be updated
 * (drv_graph_end_kept, drv_graph_chain, drv_graph_set_kernel: a remembered
 * call's new scalars, api_run_memo.h; entry points a driver may lack).
 */
#ifndef TC_CUGRAPH_H
#define TC_CUGRAPH_H

#include "driver.h"

/*! drv_graph_begin(): a new stream of dev's context, capturing; enqueue the
 *  work on *stream, then drv_graph_end.  TC_ERR_UNSUPPORTED when the driver
 *  has no graph API (the message names the missing entry point). */
tc_status drv_graph_begin(drv_device *dev, void **stream, tc_diag *d);
/*! drv_graph_end(): end the capture on stream, instantiate the graph into
 *  *exec and destroy stream.  On error the stream is destroyed too. */
tc_status drv_graph_end(drv_device *dev, void *stream, void **exec, tc_diag *d);
/*! drv_graph_end_kept(): drv_graph_end that also hands back the graph
 *  (*graph; destroy with drv_graph_destroy, after exec's last update). */
tc_status drv_graph_end_kept(drv_device *dev, void *stream, void **exec, void **graph,
                             tc_diag *d);
/*! drv_graph_updatable(): whether the driver can update a kernel node's
 *  launch in an executable graph (and walk the graph to find it). */
bool drv_graph_updatable(void);
/*! drv_graph_chain(): graph's nodes, captured from one stream, first to
 *  last, into nodes[0..n): their number, or -1 when the graph is not a chain
 *  of n nodes whose kernels are where kernel[] says (the driver's graph is
 *  not the recording one thinks it is: update nothing). */
int drv_graph_chain(drv_device *dev, void *graph, void **nodes, const bool *kernel, int n);
/*! drv_graph_set_kernel(): kernel node `node` (of the graph exec was made
 *  from) launches fn with these arguments from exec's next launch on;
 *  launches already enqueued keep theirs (the driver's rule). */
tc_status drv_graph_set_kernel(drv_device *dev, void *exec, void *node, drv_fn fn,
                               const unsigned grid[3], const unsigned block[3], unsigned shmem,
                               void **args, tc_diag *d);
/*! drv_graph_destroy(): destroy a graph drv_graph_end_kept kept (NULL: a
 *  no-op). */
void drv_graph_destroy(drv_device *dev, void *graph);
/*! drv_graph_launch(): enqueue exec on stream (NULL: the default stream). */
tc_status drv_graph_launch(drv_device *dev, void *exec, void *stream, tc_diag *d);
/*! drv_graph_usable(): whether the driver has the graph API (looked up
 *  now if it was not yet). */
bool drv_graph_usable(void);
/*! drv_stream_capturing(): whether work enqueued on stream now would be
 *  captured into someone's graph: 1 yes, 0 no, -1 the driver cannot say
 *  (or refuses: the legacy stream while another thread captures). */
int drv_stream_capturing(drv_device *dev, void *stream);
/*! drv_graph_free(): destroy exec (NULL is a no-op; one in flight is
 *  freed when it completes, the driver says). */
void drv_graph_free(drv_device *dev, void *exec);

#endif
