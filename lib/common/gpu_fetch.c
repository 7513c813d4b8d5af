/* Double-buffered piecewise device-to-host downloads into pinned memory (see
 * gpu_fetch.h). Two slots, each with a pinned buffer per array and an event:
 * the slot the caller was given last is refilled (the caller is done with it
 * once it asks for the next piece) with the piece after the one it asks for
 * now, so one copy always runs while the caller works.
 * When every phase fits in one piece there is nothing to overlap: those
 * buffers are plain host memory (against two pinned slots: the same time
 * within the runs' spread, scripts/bench/RESULTS.md 2026-11-29). */
#include "common/gpu_fetch.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/gpu_runtime.h"
#include "common/timer.h"


typedef struct {
    void *h[GT_CU_FETCH_MAX_ARRAYS];
    cudaEvent_t ev;
    bool busy; /* a piece was queued into it */
    int ph;    /* which piece it holds (or is receiving) */
    size_t i0, n;
} slot;

struct gt_cu_fetch {
    gt_cu_fetch_phase ph[GT_CU_FETCH_MAX_PHASES];
    int nph;
    size_t piece_rows;
    size_t buf_bytes[GT_CU_FETCH_MAX_ARRAYS];
    bool pageable; /* one piece per phase: buffers from gt_malloc, not pinned */
    slot slot[2];
    int given; /* slot handed to the caller last, -1 none */
    void *stream;
    double wait_ms;
    size_t bytes;
};

static gt_status queue(gt_cu_fetch *f, int s, int ph, size_t i0, size_t n)
{
    slot *S = &f->slot[s];
    const gt_cu_fetch_phase *P = &f->ph[ph];
    for (int a = 0; a < P->narr; a++) {
        if (!P->d[a]) continue;
        const size_t b = n * P->row_bytes[a];
        GT_CU(cudaMemcpyAsync(S->h[a], (const char *)P->d[a] + i0 * P->row_bytes[a], b, cudaMemcpyDeviceToHost,
                           (cudaStream_t)f->stream));
        f->bytes += b;
    }
    GT_CU(cudaEventRecord(S->ev, (cudaStream_t)f->stream));
    S->busy = true;
    S->ph = ph;
    S->i0 = i0;
    S->n = n;
    return GT_OK;
}

/* the piece after rows [i0, i0+n) of phase ph: false when there is none */
static bool next_piece(const gt_cu_fetch *f, int ph, size_t i0, size_t n, int *nph, size_t *ni0, size_t *nn)
{
    size_t at = i0 + n;
    while (ph < f->nph) {
        if (at < f->ph[ph].rows) {
            *nph = ph;
            *ni0 = at;
            *nn = f->ph[ph].rows - at < f->piece_rows ? f->ph[ph].rows - at : f->piece_rows;
            return true;
        }
        ph++;
        at = 0;
    }
    return false;
}

void gt_cu_fetch_destroy(gt_cu_fetch *f)
{
    if (!f) return;
    if (f->stream) cudaStreamSynchronize((cudaStream_t)f->stream);
    for (int s = 0; s < 2; s++) {
        for (int a = 0; a < GT_CU_FETCH_MAX_ARRAYS; a++) {
            if (f->pageable) free(f->slot[s].h[a]);
            else gt_cu_pinned_free(f->slot[s].h[a]);
        }
        if (f->slot[s].ev) cudaEventDestroy(f->slot[s].ev);
    }
    if (f->stream) gt_cu_stream_destroy(f->stream);
    cudaGetLastError();
    free(f);
}

static gt_status create_inner(gt_cu_fetch *f, void *after)
{
    GT_TRY(gt_cu_stream_create(&f->stream));
    for (int s = 0; s < 2; s++) {
        GT_CU(cudaEventCreateWithFlags(&f->slot[s].ev, cudaEventDisableTiming));
        for (int a = 0; a < GT_CU_FETCH_MAX_ARRAYS; a++)
            if (!f->buf_bytes[a]) continue;
            else if (f->pageable) {
                f->slot[s].h[a] = gt_malloc(f->buf_bytes[a], "mesh download buffer");
                if (!f->slot[s].h[a]) return GT_ERR_RUNTIME;
            } else {
                GT_TRY(gt_cu_pinned_alloc(&f->slot[s].h[a], f->buf_bytes[a], "mesh download buffer"));
            }
    }
    /* the arrays are complete once `after` has run what it holds */
    cudaEvent_t made;
    GT_CU(cudaEventCreateWithFlags(&made, cudaEventDisableTiming));
    cudaError_t e = cudaEventRecord(made, (cudaStream_t)after);
    if (e == cudaSuccess) e = cudaStreamWaitEvent((cudaStream_t)f->stream, made, 0);
    cudaEventDestroy(made);
    GT_CU(e);
    int ph;
    size_t i0, n;
    if (next_piece(f, 0, 0, 0, &ph, &i0, &n)) GT_TRY(queue(f, 0, ph, i0, n));
    return GT_OK;
}

gt_status gt_cu_fetch_create(const gt_cu_fetch_phase *phases, int nphases, size_t piece_rows, void *after,
                             gt_cu_fetch **out)
{
    *out = NULL;
    if (nphases < 1 || nphases > GT_CU_FETCH_MAX_PHASES || piece_rows == 0)
        return gt_fail(GT_ERR_RUNTIME, "internal: gt_cu_fetch_create with %d phases, pieces of %zu rows", nphases,
                       piece_rows);
    gt_cu_fetch *f = calloc(1, sizeof *f);
    if (!f) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    f->nph = nphases;
    f->piece_rows = piece_rows;
    f->given = -1;
    f->pageable = true;
    for (int p = 0; p < nphases; p++) {
        f->ph[p] = phases[p];
        if (phases[p].narr < 0 || phases[p].narr > GT_CU_FETCH_MAX_ARRAYS) {
            free(f);
            return gt_fail(GT_ERR_RUNTIME, "internal: gt_cu_fetch phase of %d arrays", phases[p].narr);
        }
        if (phases[p].rows > piece_rows) f->pageable = false;
        for (int a = 0; a < f->ph[p].narr; a++) {
            const size_t rows = f->ph[p].rows < piece_rows ? f->ph[p].rows : piece_rows;
            const size_t b = f->ph[p].d[a] ? rows * f->ph[p].row_bytes[a] : 0;
            if (b > f->buf_bytes[a]) f->buf_bytes[a] = b;
        }
    }
    const gt_status st = create_inner(f, after);
    if (st != GT_OK) {
        gt_cu_fetch_destroy(f);
        return st;
    }
    *out = f;
    return GT_OK;
}

gt_status gt_cu_fetch_get(gt_cu_fetch *f, int ph, size_t i0, size_t n, void **host)
{
    if (ph < 0 || ph >= f->nph || n > f->piece_rows || i0 + n > f->ph[ph].rows)
        return gt_fail(GT_ERR_RUNTIME, "internal: piece [%zu, +%zu) of phase %d", i0, n, ph);
    int s = -1;
    for (int k = 0; k < 2; k++) {
        const slot *S = &f->slot[k];
        if (S->busy && S->ph == ph && S->i0 == i0 && S->n >= n) s = k;
    }
    if (s < 0) { /* not the guessed piece: fetch it now, into the slot not handed out */
        s = f->given == 0 ? 1 : 0;
        if (f->slot[s].busy) GT_CU(cudaEventSynchronize(f->slot[s].ev));
        GT_TRY(queue(f, s, ph, i0, n));
    }
    const double t0 = gt_now_ms();
    GT_CU(cudaEventSynchronize(f->slot[s].ev));
    f->wait_ms += gt_now_ms() - t0;
    f->given = s;
    /* the other slot held the previous piece, which the caller is done with */
    const int o = s ^ 1;
    int nph;
    size_t ni0, nn;
    if (next_piece(f, ph, i0, n, &nph, &ni0, &nn) &&
        !(f->slot[o].busy && f->slot[o].ph == nph && f->slot[o].i0 == ni0)) {
        if (f->slot[o].busy) GT_CU(cudaEventSynchronize(f->slot[o].ev));
        GT_TRY(queue(f, o, nph, ni0, nn));
    }
    for (int a = 0; a < f->ph[ph].narr; a++) host[a] = f->ph[ph].d[a] ? f->slot[s].h[a] : NULL;
    return GT_OK;
}

double gt_cu_fetch_wait_ms(const gt_cu_fetch *f)
{
    return f ? f->wait_ms : 0;
}

size_t gt_cu_fetch_bytes(const gt_cu_fetch *f)
{
    return f ? f->bytes : 0;
}
