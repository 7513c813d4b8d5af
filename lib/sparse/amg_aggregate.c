/* AMG set-up, stage 2: aggregation by a parallel distance-2 (or distance-1)
 * maximal independent set (Bell, Dalton & Olson 2012). Every row carries the
 * tuple (state, hash(i), i); each round takes the maximum tuple over the
 * distance-2 neighbourhood (two max-propagation sweeps over S plus the row
 * itself; one for distance 1): an undecided row that is its own maximum becomes a root (IN), one
 * that sees a root becomes OUT. Rounds are synchronous (each reads only the
 * previous round's states), so the GPU, which runs a thread per row, finds
 * the same set. Then the roots are numbered in row order, every non-root
 * row joins the aggregate of its first (lowest column) strong neighbour that
 * is a root, then the rows still out join the aggregate of their first
 * neighbour that has one (again synchronous rounds); rows left with none
 * (none when S is symmetric) become singletons in row order. Each aggregate
 * is connected in S: a row joins through a neighbour already in it. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "sparse/amg.h"

gt_status gt_amg_aggregate(const gt_csr *s, int dist, int32_t *agg, int64_t *nagg, int *rounds)
{
    int64_t n = s->nrows;
    size_t nn = (size_t)(n ? n : 1);
    uint8_t *state = gt_malloc_array(nn, 1, "amg mis states");
    uint64_t *t = gt_malloc_array(nn, 8, "amg mis tuples"), *m1 = gt_malloc_array(nn, 8, "amg mis maxima");
    int32_t *prev = gt_malloc_array(nn, 4, "amg aggregates");
    if (!state || !t || !m1 || !prev) return free(state), free(t), free(m1), free(prev), GT_ERR_RUNTIME;
    memset(state, GT_AMG_UNDECIDED, nn);
    int64_t und = n;
    int r = 0;
    while (und > 0) {
        for (int64_t i = 0; i < n; i++) t[i] = gt_amg_tuple(state[i], (uint32_t)i);
        for (int64_t i = 0; i < n; i++) {
            uint64_t m = t[i];
            for (int64_t p = s->ptr[i]; p < s->ptr[i + 1]; p++) m = t[s->col[p]] > m ? t[s->col[p]] : m;
            m1[i] = m;
        }
        und = 0;
        for (int64_t i = 0; i < n; i++) {
            if (state[i] != GT_AMG_UNDECIDED) continue;
            uint64_t m = m1[i];
            if (dist == 2)
                for (int64_t p = s->ptr[i]; p < s->ptr[i + 1]; p++) m = m1[s->col[p]] > m ? m1[s->col[p]] : m;
            if (m == t[i]) state[i] = GT_AMG_IN;
            else if (gt_amg_tuple_state(m) == GT_AMG_IN) state[i] = GT_AMG_OUT;
            else und++;
        }
        r++;
    }
    /* roots numbered in row order */
    int64_t na = 0;
    for (int64_t i = 0; i < n; i++) agg[i] = state[i] == GT_AMG_IN ? (int32_t)na++ : -1;
    /* join rounds: a row without an aggregate takes the one of its first
       neighbour that had one at the start of the round */
    for (;;) {
        memcpy(prev, agg, nn * 4);
        int64_t joined = 0, left = 0;
        for (int64_t i = 0; i < n; i++) {
            if (prev[i] >= 0) continue;
            for (int64_t p = s->ptr[i]; p < s->ptr[i + 1]; p++)
                if (prev[s->col[p]] >= 0) {
                    agg[i] = prev[s->col[p]], joined++;
                    break;
                }
            left += agg[i] < 0;
        }
        if (left == 0 || joined == 0) break;
    }
    for (int64_t i = 0; i < n; i++)
        if (agg[i] < 0) agg[i] = (int32_t)na++;
    *nagg = na;
    if (rounds) *rounds = r;
    free(state), free(t), free(m1), free(prev);
    return GT_OK;
}
