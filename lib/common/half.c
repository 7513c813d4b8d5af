/* Half-precision conversions (half.h). The scalar float -> half rounding:
 * normal results add the rounding bias (half an ulp of the half, less one,
 * plus the kept mantissa's lowest bit for ties to even) to the float's bits
 * and shift; a carry out of the mantissa rightly bumps the exponent, up to
 * infinity. Subnormal results come from one float addition of a magic
 * constant whose ulp is the half's subnormal step, so the FPU's own
 * round-to-nearest-even does the rounding. */
#include <string.h>

#include "common/half.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define GT_HALF_F16C 1
#endif

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t gt_f32_to_f16(float f)
{
    uint32_t u = bits_of(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u >= 0x7f800000u) return (uint16_t)(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (u >= 0x47800000u) return (uint16_t)(sign | 0x7c00u); /* >= 65536: inf */
    if (u < 0x38800000u) {                                  /* below 2^-14: subnormal or zero */
        /* 0.5f: its ulp is 2^-24, the half's subnormal step */
        const float magic = 0.5f;
        float t = float_of(u) + magic;
        return (uint16_t)(sign | (bits_of(t) - bits_of(magic)));
    }
    const uint32_t odd = (u >> 13) & 1u;
    u += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;
    return (uint16_t)(sign | (u >> 13));
}

float gt_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return float_of(sign | 0x7f800000u | (m << 13));
    if (e == 0) { /* subnormal or zero: m * 2^-24, exact */
        float v = (float)m * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return float_of(sign | ((e + 127 - 15) << 23) | (m << 13));
}

#ifdef GT_HALF_F16C
__attribute__((target("avx,f16c"))) static void f16c_array(uint16_t *dst, const float *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), h);
    }
    for (; i < n; i++) dst[i] = gt_f32_to_f16(src[i]);
}
#endif

void gt_f32_to_f16_array(uint16_t *dst, const float *src, size_t n)
{
#ifdef GT_HALF_F16C
    if (__builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx")) {
        f16c_array(dst, src, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) dst[i] = gt_f32_to_f16(src[i]);
}
