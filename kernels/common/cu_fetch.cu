// Double-buffered piecewise device-to-host downloads into pinned memory (see
// cu_fetch.h). Two slots, each with a pinned buffer per array and an event:
// the slot the caller was given last is refilled (the caller is done with it
// once it asks for the next piece) with the piece after the one it asks for
// now, so one copy always runs while the caller works.
// When every phase fits in one piece there is nothing to overlap: those
// buffers are plain host memory (against two pinned slots: the same time
// within the runs' spread, scripts/bench/RESULTS.md 2026-11-29).
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/alloc.h"
#include "kernels/common/cu_check.h"
#include "kernels/common/cu_fetch.h"
#include "kernels/common/cu_runtime.h"

namespace {
struct Slot {
    void *h[GT_CU_FETCH_MAX_ARRAYS];
    cudaEvent_t ev;
    bool busy;  // a piece was queued into it
    int ph;     // which piece it holds (or is receiving)
    size_t i0, n;
};
} // namespace

struct gt_cu_fetch {
    gt_cu_fetch_phase ph[GT_CU_FETCH_MAX_PHASES];
    int nph;
    size_t piece_rows;
    size_t buf_bytes[GT_CU_FETCH_MAX_ARRAYS];
    bool pageable; // one piece per phase: buffers from gt_malloc, not pinned
    Slot slot[2];
    int given; // slot handed to the caller last, -1 none
    cudaStream_t stream;
    double wait_ms;
    size_t bytes;
};

static gt_status queue(gt_cu_fetch *f, int s, int ph, size_t i0, size_t n)
{
    Slot &S = f->slot[s];
    const gt_cu_fetch_phase &P = f->ph[ph];
    for (int a = 0; a < P.narr; a++) {
        if (!P.d[a]) continue;
        const size_t b = n * P.row_bytes[a];
        GT_CU(cudaMemcpyAsync(S.h[a], (const char *)P.d[a] + i0 * P.row_bytes[a], b, cudaMemcpyDeviceToHost,
                              f->stream));
        f->bytes += b;
    }
    GT_CU(cudaEventRecord(S.ev, f->stream));
    S.busy = true;
    S.ph = ph;
    S.i0 = i0;
    S.n = n;
    return GT_OK;
}

// the piece after rows [i0, i0+n) of phase ph: false when there is none
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

extern "C" void gt_cu_fetch_destroy(gt_cu_fetch *f)
{
    if (!f) return;
    if (f->stream) cudaStreamSynchronize(f->stream);
    for (int s = 0; s < 2; s++) {
        for (int a = 0; a < GT_CU_FETCH_MAX_ARRAYS; a++) {
            if (f->pageable) free(f->slot[s].h[a]);
            else gt_cu_pinned_free(f->slot[s].h[a]);
        }
        if (f->slot[s].ev) cudaEventDestroy(f->slot[s].ev);
    }
    if (f->stream) gt_cu_stream_destroy((void *)f->stream);
    cudaGetLastError();
    free(f);
}

static gt_status create_inner(gt_cu_fetch *f, void *after)
{
    void *st = nullptr;
    GT_TRY(gt_cu_stream_create(&st));
    f->stream = (cudaStream_t)st;
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
    // the arrays are complete once `after` has run what it holds
    cudaEvent_t made;
    GT_CU(cudaEventCreateWithFlags(&made, cudaEventDisableTiming));
    cudaError_t e = cudaEventRecord(made, (cudaStream_t)after);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(f->stream, made, 0);
    cudaEventDestroy(made);
    GT_CU(e);
    int ph;
    size_t i0, n;
    if (next_piece(f, 0, 0, 0, &ph, &i0, &n)) GT_TRY(queue(f, 0, ph, i0, n));
    return GT_OK;
}

extern "C" gt_status gt_cu_fetch_create(const gt_cu_fetch_phase *phases, int nphases, size_t piece_rows, void *after,
                                        gt_cu_fetch **out)
{
    *out = nullptr;
    if (nphases < 1 || nphases > GT_CU_FETCH_MAX_PHASES || piece_rows == 0)
        return gt_fail(GT_ERR_RUNTIME, "internal: gt_cu_fetch_create with %d phases, pieces of %zu rows", nphases,
                       piece_rows);
    gt_cu_fetch *f = (gt_cu_fetch *)calloc(1, sizeof *f);
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

extern "C" gt_status gt_cu_fetch_get(gt_cu_fetch *f, int ph, size_t i0, size_t n, void **host)
{
    if (ph < 0 || ph >= f->nph || n > f->piece_rows || i0 + n > f->ph[ph].rows)
        return gt_fail(GT_ERR_RUNTIME, "internal: piece [%zu, +%zu) of phase %d", i0, n, ph);
    int s = -1;
    for (int k = 0; k < 2; k++) {
        const Slot &S = f->slot[k];
        if (S.busy && S.ph == ph && S.i0 == i0 && S.n >= n) s = k;
    }
    if (s < 0) { // not the guessed piece: fetch it now, into the slot not handed out
        s = f->given == 0 ? 1 : 0;
        if (f->slot[s].busy) GT_CU(cudaEventSynchronize(f->slot[s].ev));
        GT_TRY(queue(f, s, ph, i0, n));
    }
    const auto t0 = std::chrono::steady_clock::now();
    GT_CU(cudaEventSynchronize(f->slot[s].ev));
    f->wait_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    f->given = s;
    // the other slot held the previous piece, which the caller is done with
    const int o = s ^ 1;
    int nph;
    size_t ni0, nn;
    if (next_piece(f, ph, i0, n, &nph, &ni0, &nn) && !(f->slot[o].busy && f->slot[o].ph == nph && f->slot[o].i0 == ni0)) {
        if (f->slot[o].busy) GT_CU(cudaEventSynchronize(f->slot[o].ev));
        GT_TRY(queue(f, o, nph, ni0, nn));
    }
    for (int a = 0; a < f->ph[ph].narr; a++) host[a] = f->ph[ph].d[a] ? f->slot[s].h[a] : nullptr;
    return GT_OK;
}

extern "C" double gt_cu_fetch_wait_ms(const gt_cu_fetch *f) { return f ? f->wait_ms : 0; }
extern "C" size_t gt_cu_fetch_bytes(const gt_cu_fetch *f) { return f ? f->bytes : 0; }

// ---- a device mesh as a gt_ply_trisrc
static gt_status mesh_verts(void *ctx, size_t v0, size_t n, const float **xyz, const float **nrm, const float **extra)
{
    void *h[GT_CU_FETCH_MAX_ARRAYS] = {nullptr, nullptr, nullptr};
    GT_TRY(gt_cu_fetch_get((gt_cu_fetch *)ctx, 0, v0, n, h));
    *xyz = (const float *)h[0];
    *nrm = (const float *)h[1];
    *extra = nullptr;
    return GT_OK;
}

static gt_status mesh_tris(void *ctx, size_t t0, size_t n, const int32_t **tris)
{
    void *h[GT_CU_FETCH_MAX_ARRAYS] = {nullptr, nullptr, nullptr};
    GT_TRY(gt_cu_fetch_get((gt_cu_fetch *)ctx, 1, t0, n, h));
    *tris = (const int32_t *)h[0];
    return GT_OK;
}

extern "C" gt_status gt_cu_fetch_mesh(const float *d_xyz, const float *d_nrm, size_t nvert, const int32_t *d_tris,
                                      size_t ntri, void *after, gt_cu_fetch **f, gt_ply_trisrc *src)
{
    const char *e = getenv("GT_PLY_PIECE_ROWS");
    const long long env_rows = e ? atoll(e) : 0;
    const size_t rows = env_rows > 0 ? (size_t)env_rows : (size_t)1 << 20; // 12 MB per array and piece
    gt_cu_fetch_phase ph[2];
    memset(ph, 0, sizeof ph);
    ph[0].narr = 2;
    ph[0].d[0] = d_xyz;
    ph[0].d[1] = d_nrm;
    ph[0].row_bytes[0] = ph[0].row_bytes[1] = 12;
    ph[0].rows = nvert;
    ph[1].narr = 1;
    ph[1].d[0] = d_tris;
    ph[1].row_bytes[0] = 12;
    ph[1].rows = ntri;
    GT_TRY(gt_cu_fetch_create(ph, 2, rows, after, f));
    memset(src, 0, sizeof *src);
    src->nvert = nvert;
    src->ntri = ntri;
    src->normals = d_nrm != nullptr;
    src->chunk = rows;
    src->verts = mesh_verts;
    src->tris = mesh_tris;
    src->ctx = *f;
    return GT_OK;
}
