/* PLY property types: their sizes and names, and the bulk conversion of a
 * column of fixed-size binary records to floats (the per-value conversions
 * are inline in ply_internal.h). */
#include <string.h>

#include "io/ply_internal.h"

const size_t ply_tsize[8] = {1, 1, 2, 2, 4, 4, 4, 8};
static const char *const tname[] = {"char", "uchar", "short", "ushort",
                                    "int", "uint", "float", "double"};
static const char *const tname2[] = {"int8", "uint8", "int16", "uint16",
                                     "int32", "uint32", "float32", "float64"};

const char *gt_ply_type_name(gt_ply_type t)
{
    return (unsigned)t < 8 ? tname[t] : "?";
}

bool ply_parse_type(const char *s, gt_ply_type *t)
{
    for (int i = 0; i < 8; i++)
        if (strcmp(s, tname[i]) == 0 || strcmp(s, tname2[i]) == 0) {
            *t = (gt_ply_type)i;
            return true;
        }
    return false;
}

/* one loop per (type, byte order): the switch is outside the rows */
#define CONV_LOOP(T, EXPR)                                                   \
    for (size_t r = 0; r < nrow; r++) {                                      \
        T v;                                                                 \
        memcpy(&v, src + r * rs, sizeof v);                                  \
        out[r * (size_t)np] = (float)(EXPR);                                 \
    }

void ply_convert_col(const unsigned char *src, size_t rs, size_t nrow, gt_ply_type t, bool swap,
                     float *out, int np)
{
    switch (t) {
    case GT_PLY_INT8: CONV_LOOP(int8_t, v) break;
    case GT_PLY_UINT8: CONV_LOOP(uint8_t, v) break;
    case GT_PLY_INT16:
        if (swap) { CONV_LOOP(uint16_t, (int16_t)ply_bs16(v)) } else { CONV_LOOP(int16_t, v) }
        break;
    case GT_PLY_UINT16:
        if (swap) { CONV_LOOP(uint16_t, ply_bs16(v)) } else { CONV_LOOP(uint16_t, v) }
        break;
    case GT_PLY_INT32:
        if (swap) { CONV_LOOP(uint32_t, (int32_t)ply_bs32(v)) } else { CONV_LOOP(int32_t, v) }
        break;
    case GT_PLY_UINT32:
        if (swap) { CONV_LOOP(uint32_t, ply_bs32(v)) } else { CONV_LOOP(uint32_t, v) }
        break;
    case GT_PLY_FLOAT32:
        if (swap) {
            for (size_t r = 0; r < nrow; r++) {
                uint32_t v;
                memcpy(&v, src + r * rs, 4);
                v = ply_bs32(v);
                memcpy(&out[r * (size_t)np], &v, 4);
            }
        } else {
            CONV_LOOP(float, v)
        }
        break;
    case GT_PLY_FLOAT64:
        if (swap) {
            for (size_t r = 0; r < nrow; r++) {
                uint64_t v;
                double d;
                memcpy(&v, src + r * rs, 8);
                v = ply_bs64(v);
                memcpy(&d, &v, 8);
                out[r * (size_t)np] = (float)d;
            }
        } else {
            CONV_LOOP(double, v)
        }
        break;
    }
}
