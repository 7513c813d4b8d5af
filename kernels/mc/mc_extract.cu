// CUDA marching cubes with shared vertices, one z-slab per call (a single
// pass is the slab [0, Z)). Same function as gt_mc_slab_cpu (lib/mc/mc_cpu.c):
// the vertices and triangles come out in the CPU's order.
//
// This file is the driver: the context, uploads and downloads, and the
// slab's five stages on one stream (mc_stages.h lists the files that hold
// them, each with its launch shape):
//  1. bits: the volume packed to one "in" bit per point (mc_bits.cu);
//  2. count: per word of 32 points, its vertices and triangles (mc_count.cu);
//  3. scan: exclusive scans (CUB, 64-bit) of both -> word offsets, totals
//     (here); one scan of V | T << 32 when the slab is small enough that
//     neither total can reach 2^32 (512^3: 4.2M words; the limit is 11.1M);
//  4. vertices (mc_verts.cu); 5. triangles (mc_tris.cu).
// The index logic is mc_words.h's (tests/mc/test_mc_words.c checks it on the
// host against the CPU numbering), the per-vertex math lib/mc/mc_math.h's.
#include <cstdint>
#include <cstdlib>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/mc/mc_cuda.h"
#include "kernels/mc/mc_stages.h"

namespace {

// bytes of one pinned staging slot: large enough that the threaded reader
// gets 8 chunks of 8 MiB per call, small enough to pin quickly
constexpr size_t kStageBytes = (size_t)64 << 20;

// the slab's totals in one place, so that one small copy brings them to the host
__global__ void k_totals(Geo g, const uint64_t *offV, const uint64_t *offT, uint64_t nown, uint64_t nwc, uint64_t *tot)
{
    tot[0] = gt_mcw_offv(&g, offV, nown);
    tot[1] = gt_mcw_offv(&g, offV, nwc);
    tot[2] = gt_mcw_offt(&g, offV, offT, nwc);
}

} // namespace

struct gt_mc_cuda {
    gt_mc_geom g;
    int64_t cap_planes;
    float *d_buf;
    const float *d_vol;
    int64_t zb, nzb;
    uint32_t *d_bits;           // in bits, cap_planes * Y * W words
    uint64_t *d_offV, *d_offT;  // per-word counts, then offsets (cap_planes * Y * W + 1)
    uint64_t *d_tot;            // own vertices, all counted vertices, triangles
    float *d_xyz, *d_nrm;
    int32_t *d_tris;
    uint64_t cap_v, cap_t;
    uint64_t nv, nt; // last slab
    bool two_scans;  // never pack the word counts (tests)
    gt_arena arena;
    void *stream;
    // pinned staging for the overlapped upload (gt_mc_cuda_stage_*)
    float *h_stage[2];
    cudaEvent_t stage_done[2]; // the slot's last copy has finished
    int64_t stage_planes;      // planes per slot
    int stage_next;            // slot handed out next
};

static size_t words_of(const gt_mc_geom *g, int64_t planes)
{
    return (size_t)((g->dims[0] + 31) / 32) * (size_t)g->dims[1] * (size_t)planes;
}

extern "C" size_t gt_mc_cuda_base_bytes(const gt_mc_geom *g, int64_t planes)
{
    const size_t words = words_of(g, planes);
    return (size_t)planes * (size_t)g->dims[0] * (size_t)g->dims[1] * sizeof(float) + words * sizeof(uint32_t) +
           (words + 1) * 2 * sizeof(uint64_t);
}

static gt_status create_inner(gt_mc_cuda *c, size_t words)
{
    const gt_mc_table *t = gt_mc_table_get();
    GT_TRY(mc_count_table(t));
    GT_TRY(mc_tris_table(t));
    GT_TRY(gt_cu_stream_create(&c->stream));
    GT_TRY(gt_cu_malloc((void **)&c->d_bits, (words ? words : 1) * sizeof(uint32_t), "mc in bits"));
    GT_TRY(gt_cu_malloc((void **)&c->d_offV, (words + 1) * sizeof(uint64_t), "mc word vertex offsets"));
    GT_TRY(gt_cu_malloc((void **)&c->d_offT, (words + 1) * sizeof(uint64_t), "mc word triangle offsets"));
    GT_TRY(gt_cu_malloc((void **)&c->d_tot, 3 * sizeof(uint64_t), "mc totals"));
    return GT_OK;
}

extern "C" gt_status gt_mc_cuda_create(const gt_mc_geom *g, int64_t max_planes, gt_mc_cuda **out)
{
    *out = nullptr;
    gt_mc_cuda *c = (gt_mc_cuda *)calloc(1, sizeof *c);
    if (!c) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    c->g = *g;
    c->cap_planes = max_planes;
    gt_arena_init(&c->arena);
    const gt_status st = create_inner(c, words_of(g, max_planes));
    if (st != GT_OK) {
        gt_mc_cuda_destroy(c);
        return st;
    }
    *out = c;
    return GT_OK;
}

extern "C" void gt_mc_cuda_destroy(gt_mc_cuda *c)
{
    if (!c) return;
    if (c->stream) cudaStreamSynchronize((cudaStream_t)c->stream);
    gt_cu_free(c->d_buf);
    gt_cu_free(c->d_bits);
    gt_cu_free(c->d_offV);
    gt_cu_free(c->d_offT);
    gt_cu_free(c->d_tot);
    gt_cu_free(c->d_xyz);
    gt_cu_free(c->d_nrm);
    gt_cu_free(c->d_tris);
    gt_arena_release(&c->arena);
    for (int i = 0; i < 2; i++) {
        gt_cu_pinned_free(c->h_stage[i]);
        if (c->stage_done[i]) cudaEventDestroy(c->stage_done[i]);
    }
    if (c->stream) gt_cu_stream_destroy(c->stream);
    free(c);
}

extern "C" void gt_mc_cuda_force_two_scans(gt_mc_cuda *c, bool on) { c->two_scans = on; }

extern "C" void gt_mc_cuda_use_device_volume(gt_mc_cuda *c, const float *d_vol)
{
    c->d_vol = d_vol;
    c->zb = 0;
    c->nzb = c->g.dims[2];
}

static gt_status ensure_dbuf(gt_mc_cuda *c, size_t plane)
{
    if (!c->d_buf) GT_TRY(gt_cu_malloc((void **)&c->d_buf, (size_t)c->cap_planes * plane * sizeof(float), "mc volume slab"));
    return GT_OK;
}

extern "C" gt_status gt_mc_cuda_upload(gt_mc_cuda *c, const float *host, int64_t zb, int64_t nzb, gt_timings *tm)
{
    const size_t plane = (size_t)c->g.dims[0] * (size_t)c->g.dims[1];
    if (nzb > c->cap_planes) return gt_fail(GT_ERR_RUNTIME, "internal: slab of %lld planes > %lld", (long long)nzb, (long long)c->cap_planes);
    GT_TRY(ensure_dbuf(c, plane));
    gt_timer t;
    gt_timer_start(&t, true, c->stream);
    GT_TRY(gt_cu_memcpy_h2d(c->d_buf, host, (size_t)nzb * plane * sizeof(float), c->stream));
    const double ms = gt_timer_stop(&t);
    if (tm) gt_timings_add(tm, "transfers", ms);
    c->d_vol = c->d_buf;
    c->zb = zb;
    c->nzb = nzb;
    return GT_OK;
}

extern "C" gt_status gt_mc_cuda_stage_begin(gt_mc_cuda *c, int64_t zb, int64_t nzb, int64_t *have_end)
{
    const size_t plane = (size_t)c->g.dims[0] * (size_t)c->g.dims[1];
    if (nzb > c->cap_planes) return gt_fail(GT_ERR_RUNTIME, "internal: slab of %lld planes > %lld", (long long)nzb, (long long)c->cap_planes);
    GT_TRY(ensure_dbuf(c, plane));
    *have_end = zb;
    if (c->d_vol == c->d_buf && c->nzb > 0 && zb >= c->zb && zb < c->zb + c->nzb) {
        // the last slab's top planes are this one's bottom: move them down a
        // plane at a time (each copy's source and destination are disjoint;
        // the stream runs them in order)
        const int64_t shift = zb - c->zb, keep = c->zb + c->nzb - zb < nzb ? c->zb + c->nzb - zb : nzb;
        if (shift > 0)
            for (int64_t i = 0; i < keep; i++)
                GT_TRY(gt_cu_memcpy_d2d(c->d_buf + (size_t)i * plane, c->d_buf + (size_t)(i + shift) * plane,
                                        plane * sizeof(float), c->stream));
        *have_end = zb + keep;
    }
    c->d_vol = c->d_buf;
    c->zb = zb;
    c->nzb = nzb;
    return GT_OK;
}

extern "C" int64_t gt_mc_cuda_stage_planes(gt_mc_cuda *c)
{
    if (!c->stage_planes) {
        const size_t plane_bytes = (size_t)c->g.dims[0] * (size_t)c->g.dims[1] * sizeof(float);
        int64_t p = (int64_t)(kStageBytes / plane_bytes);
        // test hook: small slots, so that small volumes take several pieces
        const char *e = getenv("GT_MC_STAGE_PLANES");
        if (e && atoll(e) > 0) p = atoll(e);
        if (p < 1) p = 1;
        c->stage_planes = p < c->cap_planes ? p : c->cap_planes;
    }
    return c->stage_planes;
}

extern "C" gt_status gt_mc_cuda_stage_buffer(gt_mc_cuda *c, float **host)
{
    *host = nullptr;
    const int i = c->stage_next;
    const int64_t p = gt_mc_cuda_stage_planes(c);
    if (!c->h_stage[i]) {
        const size_t bytes = (size_t)p * (size_t)c->g.dims[0] * (size_t)c->g.dims[1] * sizeof(float);
        GT_TRY(gt_cu_pinned_alloc((void **)&c->h_stage[i], bytes, "mc pinned upload staging"));
        GT_CU(cudaEventCreateWithFlags(&c->stage_done[i], cudaEventDisableTiming));
    } else {
        GT_CU(cudaEventSynchronize(c->stage_done[i])); // its last copy is done
    }
    *host = c->h_stage[i];
    return GT_OK;
}

extern "C" gt_status gt_mc_cuda_stage_upload(gt_mc_cuda *c, const float *host, int64_t z, int64_t nz)
{
    const int i = c->stage_next;
    if (host != c->h_stage[i] || nz > c->stage_planes || z < c->zb || z + nz > c->zb + c->nzb)
        return gt_fail(GT_ERR_RUNTIME, "internal: staged planes [%lld,%lld) outside the slab or the staging slot",
                       (long long)z, (long long)(z + nz));
    const size_t plane = (size_t)c->g.dims[0] * (size_t)c->g.dims[1];
    GT_TRY(gt_cu_memcpy_h2d(c->d_buf + (size_t)(z - c->zb) * plane, host, (size_t)nz * plane * sizeof(float), c->stream));
    GT_CU(cudaEventRecord(c->stage_done[i], (cudaStream_t)c->stream));
    c->stage_next = 1 - i;
    return GT_OK;
}

extern "C" gt_status gt_mc_cuda_stage_wait(gt_mc_cuda *c)
{
    return gt_cu_stream_sync(c->stream);
}

extern "C" gt_status gt_mc_cuda_slab(gt_mc_cuda *c, int64_t z0, int64_t z1, uint64_t vbase, uint64_t *nv_out,
                                     uint64_t *nt_out, gt_timings *tm)
{
    const gt_mc_geom *G = &c->g;
    const int64_t X = G->dims[0], Y = G->dims[1], Z = G->dims[2];
    cudaStream_t s = (cudaStream_t)c->stream;
    if (!(z0 < z1 && c->zb <= (z0 > 0 ? z0 - 1 : 0) && c->zb + c->nzb >= (z1 + 2 < Z ? z1 + 2 : Z)))
        return gt_fail(GT_ERR_RUNTIME, "internal: bad slab [%lld,%lld)", (long long)z0, (long long)z1);
    Geo g;
    uint64_t nwc, nown; // counted and own point words
    gt_mcw_geo_init(&g, G, c->d_vol, c->zb, z0, z1, c->two_scans, &nwc, &nown);
    const int64_t kb = z1 + 2 < Z ? z1 + 2 : Z; // bit planes [z0, kb)
    if (kb - z0 > c->cap_planes) return gt_fail(GT_ERR_RUNTIME, "internal: slab planes exceed the context");
    const uint64_t nbrows = (uint64_t)(kb - z0) * (uint64_t)Y;         // rows of bits
    const uint64_t nsegs = nbrows * (uint64_t)((X + kSeg - 1) / kSeg); // k_bits work items
    gt_timer t = {};

    if (tm) gt_timer_start(&t, true, s);
    {
        const bool vec = X % 4 == 0 && ((uintptr_t)(g.vol + (z0 - g.zb) * Y * X) & 15u) == 0;
        GT_TRY(mc_bits(g, nbrows, nsegs, vec, c->d_bits, s));
    }
    if (tm) gt_timings_add(tm, "bits", gt_timer_stop(&t));

    if (tm) gt_timer_start(&t, true, s);
    GT_TRY(mc_count(g, c->d_bits, nwc, c->d_offV, c->d_offT, s));
    if (tm) gt_timings_add(tm, "count", gt_timer_stop(&t));

    if (tm) gt_timer_start(&t, true, s);
    GT_CU(cudaMemsetAsync(c->d_offV + nwc, 0, sizeof(uint64_t), s));
    GT_TRY(gt_cu_scan_exclusive_u64(c->d_offV, c->d_offV, nwc + 1, &c->arena, c->stream));
    if (!g.packed) {
        GT_CU(cudaMemsetAsync(c->d_offT + nwc, 0, sizeof(uint64_t), s));
        GT_TRY(gt_cu_scan_exclusive_u64(c->d_offT, c->d_offT, nwc + 1, &c->arena, c->stream));
    }
    k_totals<<<1, 1, 0, s>>>(g, c->d_offV, c->d_offT, nown, nwc, c->d_tot);
    GT_CU_LAUNCH("k_totals");
    uint64_t tot[3] = {0, 0, 0};
    GT_CU(cudaMemcpyAsync(tot, c->d_tot, sizeof tot, cudaMemcpyDeviceToHost, s));
    GT_CU(cudaStreamSynchronize(s));
    const uint64_t vown = tot[0], vall = tot[1], ntri = tot[2];
    if (tm) gt_timings_add(tm, "scan", gt_timer_stop(&t));
    if (vbase + vall > (uint64_t)INT32_MAX)
        return gt_fail(GT_ERR_RUNTIME, "mesh too large: %llu vertices exceed the PLY int index range",
                       (unsigned long long)(vbase + vall));

    // outputs
    if (vown > c->cap_v) {
        gt_cu_free(c->d_xyz);
        gt_cu_free(c->d_nrm);
        c->d_xyz = c->d_nrm = nullptr;
        c->cap_v = 0;
        GT_TRY(gt_cu_malloc((void **)&c->d_xyz, vown * 3 * sizeof(float), "mc vertices"));
        if (G->normals) GT_TRY(gt_cu_malloc((void **)&c->d_nrm, vown * 3 * sizeof(float), "mc normals"));
        c->cap_v = vown;
    }
    if (ntri > c->cap_t) {
        gt_cu_free(c->d_tris);
        c->d_tris = nullptr;
        c->cap_t = 0;
        GT_TRY(gt_cu_malloc((void **)&c->d_tris, ntri * 3 * sizeof(int32_t), "mc triangles"));
        c->cap_t = ntri;
    }

    if (tm) gt_timer_start(&t, true, s);
    if (vown > 0) GT_TRY(mc_verts(g, c->d_bits, nown, c->d_offV, c->d_xyz, G->normals ? c->d_nrm : nullptr, s));
    if (tm) gt_timings_add(tm, "vertices", gt_timer_stop(&t));

    if (tm) gt_timer_start(&t, true, s);
    if (ntri > 0) GT_TRY(mc_tris(g, c->d_bits, nown, c->d_offV, c->d_offT, vbase, c->d_tris, s));
    // no host sync: the results stay on the stream; gt_mc_cuda_download (same
    // stream) synchronises and reports any fault of the kernels
    if (tm) gt_timings_add(tm, "triangles", gt_timer_stop(&t));

    c->nv = vown;
    c->nt = ntri;
    if (nv_out) *nv_out = vown;
    if (nt_out) *nt_out = ntri;
    return GT_OK;
}

extern "C" gt_status gt_mc_cuda_download(gt_mc_cuda *c, gt_mc_mesh *m, gt_timings *tm)
{
    GT_TRY(gt_mc_mesh_reserve(m, (size_t)c->nv, (size_t)c->nt, c->g.normals));
    gt_timer t;
    gt_timer_start(&t, true, c->stream);
    if (c->nv) {
        GT_TRY(gt_cu_memcpy_d2h(m->xyz + 3 * m->nvert, c->d_xyz, c->nv * 3 * sizeof(float), c->stream));
        if (c->g.normals)
            GT_TRY(gt_cu_memcpy_d2h(m->nrm + 3 * m->nvert, c->d_nrm, c->nv * 3 * sizeof(float), c->stream));
    }
    if (c->nt) GT_TRY(gt_cu_memcpy_d2h(m->tris + 3 * m->ntri, c->d_tris, c->nt * 3 * sizeof(int32_t), c->stream));
    GT_TRY(gt_cu_stream_sync(c->stream));
    const double ms = gt_timer_stop(&t);
    if (tm) gt_timings_add(tm, "transfers", ms);
    m->nvert += (size_t)c->nv;
    m->ntri += (size_t)c->nt;
    return GT_OK;
}

extern "C" void gt_mc_cuda_results(const gt_mc_cuda *c, const float **xyz, const float **nrm, const int32_t **tris,
                                   uint64_t *nv, uint64_t *nt, void **stream)
{
    *xyz = c->d_xyz;
    *nrm = c->g.normals ? c->d_nrm : nullptr;
    *tris = c->d_tris;
    *nv = c->nv;
    *nt = c->nt;
    *stream = c->stream;
}
