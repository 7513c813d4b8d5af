/* The derivatives of the 3DGS forward math of gs_math.h (the backward pass
 * of diff-gaussian-rasterization, Kerbl et al. 2023, derived anew), written
 * once for the CPU reference (lib/gs/gs_backward.c) and the CUDA backward
 * (kernels/gs/gs_backward.cu):
 *
 *   gs_replay_*       a pixel replayed back to front: dL/dalpha and
 *                     dL/dcolour of each contributor
 *   gs_blend_grad     one (Gaussian, pixel) term: dL/dalpha -> dL/d(opacity,
 *                     2-D mean, conic), through alpha = min(0.99, o e^power)
 *   gs_sh_grad        SH colour -> SH coefficients and the view direction
 *                     (clamped channels, colour < 0, get none)
 *   gs_gauss_grad     the per-Gaussian chain from dL/d(2-D mean, conic,
 *                     effective opacity, colour) to the raw parameters:
 *                     conic -> filtered 2-D covariance (+0.3, antialias
 *                     compensation) -> EWA (with the Jacobian's clamping of
 *                     x/z, y/z at 1.3 tan(fov/2)) -> 3-D covariance ->
 *                     log-scale and quaternion (normalisation included);
 *                     2-D mean -> 3-D mean; SH direction -> 3-D mean;
 *                     opacity through the sigmoid
 *
 * Where the reference approximates (it passes gradients through the 0.99
 * clamp of alpha, and differentiates the clamped J entries in z as if the
 * clamped x/z times z were constant) this follows the function that is
 * rendered, so that finite differences agree (tests/gs/test_gs_backward.c);
 * with ref (gt_gs_params.ref_grad) it does as the reference, for comparisons
 * with diff-gaussian-rasterization. Float throughout. */
#ifndef GT_GS_MATH_GRAD_H
#define GT_GS_MATH_GRAD_H

#include <string.h>

#include "gs/gs.h"
#include "gs/gs_math.h"

/* The camera as the per-Gaussian backward needs it (plain values, passed by
 * value to kernels). */
typedef struct gs_gcam {
    float R[9], t[3], campos[3];
    float fx, fy, cx, cy; /* cx, cy: the principal point (gt_gs_camera's) */
    int w, h;
} gs_gcam;

/* c as the backward's camera (host code of the CPU and GPU paths) */
static inline gs_gcam gs_gcam_of(const gt_gs_camera *c)
{
    gs_gcam g;
    memcpy(g.R, c->R, sizeof g.R);
    memcpy(g.t, c->t, sizeof g.t);
    memcpy(g.campos, c->campos, sizeof g.campos);
    g.fx = c->fx, g.fy = c->fy, g.cx = c->cx, g.cy = c->cy;
    g.w = c->width, g.h = c->height;
    return g;
}

/* The back-to-front replay of one pixel (the reference's recursion): with
 * C = sum_i c_i a_i T_i + T_final bg, dC/dc_i = a_i T_i and dC/da_i =
 * T_i (c_i - rest_i) - T_final bg / (1 - a_i), rest_i the colour of what
 * lies behind i normalised by T_(i+1), rebuilt as the replay goes; T_i is
 * recovered from T_final by dividing by (1 - a). */
typedef struct gs_replay {
    float T, T_final, bg_dot, last_alpha;
    float rest[3], last_rgb[3], dpix[3];
} gs_replay;

GT_HD void gs_replay_init(gs_replay *r, float T_final, const float dpix[3], const float bg[3])
{
    r->T = r->T_final = T_final;
    r->last_alpha = 0.0f;
    for (int ch = 0; ch < 3; ch++) {
        r->rest[ch] = r->last_rgb[ch] = 0.0f;
        r->dpix[ch] = dpix[ch];
    }
    r->bg_dot = bg[0] * dpix[0] + bg[1] * dpix[1] + bg[2] * dpix[2];
}

/* The next contributor towards the front, with alpha and colour rgb:
 * returns dL/dalpha and sets drgb = dL/dcolour. One division a step: the
 * transmittance and the background's term share 1 / (1 - alpha). */
GT_HD float gs_replay_step(gs_replay *r, float alpha, const float rgb[3], float drgb[3])
{
    const float inv = 1.0f / (1.0f - alpha);
    r->T = r->T * inv;
    float wgt = alpha * r->T, dl_dalpha = 0.0f;
    for (int ch = 0; ch < 3; ch++) {
        r->rest[ch] = r->last_alpha * r->last_rgb[ch] + (1.0f - r->last_alpha) * r->rest[ch];
        r->last_rgb[ch] = rgb[ch];
        dl_dalpha += (rgb[ch] - r->rest[ch]) * r->dpix[ch];
        drgb[ch] = wgt * r->dpix[ch];
    }
    dl_dalpha *= r->T;
    r->last_alpha = alpha;
    return dl_dalpha - r->T_final * inv * r->bg_dot;
}

/* One blended term at a pixel: the Gaussian with effective opacity o and
 * conic (a b c) at offset (dx, dy) = mean - pixel, value G there (gs_exp of
 * gs_power, as its alpha was computed), whose alpha got dL/dalpha =
 * dl_dalpha. Adds dL/do, dL/d(mean x, y) and dL/dconic. A clamped alpha
 * (0.99) passes nothing, unless ref (the reference passes it through). */
GT_HD void gs_blend_grad(float o, float a, float b, float c, float dx, float dy, float G, float dl_dalpha,
                         int ref, float *dl_do, float dl_dmean[2], float dl_dconic[3])
{
    if (!ref && o * G >= 0.99f) return; /* alpha clamped: no gradient */
    *dl_do += G * dl_dalpha;
    float dl_dpow = o * G * dl_dalpha;
    dl_dmean[0] += dl_dpow * (-a * dx - b * dy);
    dl_dmean[1] += dl_dpow * (-c * dy - b * dx);
    dl_dconic[0] += dl_dpow * (-0.5f * dx * dx);
    dl_dconic[1] += dl_dpow * (-dx * dy);
    dl_dconic[2] += dl_dpow * (-0.5f * dy * dy);
}

/* The SH basis (16 values) at unit direction (x, y, z) and its partial
 * derivatives in x, y, z; coefficient k of gs_sh_eval multiplies b[k]. */
GT_HD void gs_sh_basis(float x, float y, float z, float b[16], float bx[16], float by[16], float bz[16])
{
    float xx = x * x, yy = y * y, zz = z * z;
    for (int k = 0; k < 16; k++) bx[k] = by[k] = bz[k] = 0.0f;
    b[0] = GS_SH_C0;
    b[1] = -GS_SH_C1 * y, by[1] = -GS_SH_C1;
    b[2] = GS_SH_C1 * z, bz[2] = GS_SH_C1;
    b[3] = -GS_SH_C1 * x, bx[3] = -GS_SH_C1;
    b[4] = GS_SH_C2_0 * x * y, bx[4] = GS_SH_C2_0 * y, by[4] = GS_SH_C2_0 * x;
    b[5] = GS_SH_C2_1 * y * z, by[5] = GS_SH_C2_1 * z, bz[5] = GS_SH_C2_1 * y;
    b[6] = GS_SH_C2_2 * (2.0f * zz - xx - yy), bx[6] = GS_SH_C2_2 * -2.0f * x, by[6] = GS_SH_C2_2 * -2.0f * y,
    bz[6] = GS_SH_C2_2 * 4.0f * z;
    b[7] = GS_SH_C2_3 * x * z, bx[7] = GS_SH_C2_3 * z, bz[7] = GS_SH_C2_3 * x;
    b[8] = GS_SH_C2_4 * (xx - yy), bx[8] = GS_SH_C2_4 * 2.0f * x, by[8] = GS_SH_C2_4 * -2.0f * y;
    b[9] = GS_SH_C3_0 * y * (3.0f * xx - yy), bx[9] = GS_SH_C3_0 * 6.0f * x * y,
    by[9] = GS_SH_C3_0 * (3.0f * xx - 3.0f * yy);
    b[10] = GS_SH_C3_1 * x * y * z, bx[10] = GS_SH_C3_1 * y * z, by[10] = GS_SH_C3_1 * x * z,
    bz[10] = GS_SH_C3_1 * x * y;
    b[11] = GS_SH_C3_2 * y * (4.0f * zz - xx - yy), bx[11] = GS_SH_C3_2 * -2.0f * x * y,
    by[11] = GS_SH_C3_2 * (4.0f * zz - xx - 3.0f * yy), bz[11] = GS_SH_C3_2 * 8.0f * y * z;
    b[12] = GS_SH_C3_3 * z * (2.0f * zz - 3.0f * xx - 3.0f * yy), bx[12] = GS_SH_C3_3 * -6.0f * x * z,
    by[12] = GS_SH_C3_3 * -6.0f * y * z, bz[12] = GS_SH_C3_3 * (6.0f * zz - 3.0f * xx - 3.0f * yy);
    b[13] = GS_SH_C3_4 * x * (4.0f * zz - xx - yy), bx[13] = GS_SH_C3_4 * (4.0f * zz - 3.0f * xx - yy),
    by[13] = GS_SH_C3_4 * -2.0f * x * y, bz[13] = GS_SH_C3_4 * 8.0f * x * z;
    b[14] = GS_SH_C3_5 * z * (xx - yy), bx[14] = GS_SH_C3_5 * 2.0f * x * z, by[14] = GS_SH_C3_5 * -2.0f * y * z,
    bz[14] = GS_SH_C3_5 * (xx - yy);
    b[15] = GS_SH_C3_6 * x * (xx - 3.0f * yy), bx[15] = GS_SH_C3_6 * (3.0f * xx - 3.0f * yy),
    by[15] = GS_SH_C3_6 * -6.0f * x * y;
}

/* Backward of gs_sh_eval(deg, sh, dir): adds dL/dsh (sh_k*3, coefficient
 * major, into dsh) and returns dL/ddir in ddir, for dL/drgb = drgb. A
 * channel whose colour was clamped (sum + 0.5 < 0) passes nothing. */
GT_HD void gs_sh_grad(int deg, const float *sh, const float dir[3], const float drgb[3], float *dsh,
                      float ddir[3])
{
    float b[16], bx[16], by[16], bz[16];
    gs_sh_basis(dir[0], dir[1], dir[2], b, bx, by, bz);
    int nk = (deg + 1) * (deg + 1);
    ddir[0] = ddir[1] = ddir[2] = 0.0f;
    for (int ch = 0; ch < 3; ch++) {
        float r = 0.5f;
        for (int k = 0; k < nk; k++) r += b[k] * sh[3 * k + ch];
        if (r < 0.0f) continue;
        float g = drgb[ch];
        for (int k = 0; k < nk; k++) {
            float s = sh[3 * k + ch];
            dsh[3 * k + ch] += b[k] * g;
            ddir[0] += bx[k] * s * g;
            ddir[1] += by[k] * s * g;
            ddir[2] += bz[k] * s * g;
        }
    }
}

/* dL/dq for the raw quaternion q (any length) given dL/dRq (row-major) of
 * the rotation matrix of q/|q|. */
GT_HD void gs_quat_grad(const float q[4], const float dR[9], float dq[4])
{
    float l = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(l > 0.0f) || !isfinite(l)) { /* rendered as the identity: constant */
        dq[0] = dq[1] = dq[2] = dq[3] = 0.0f;
        return;
    }
    float r = q[0] / l, x = q[1] / l, y = q[2] / l, z = q[3] / l;
    float g[4];
    g[0] = 2.0f * (-z * dR[1] + y * dR[2] + z * dR[3] - x * dR[5] - y * dR[6] + x * dR[7]);
    g[1] = 2.0f * (y * dR[1] + z * dR[2] + y * dR[3] - 2.0f * x * dR[4] - r * dR[5] + z * dR[6] + r * dR[7] -
                   2.0f * x * dR[8]);
    g[2] = 2.0f * (-2.0f * y * dR[0] + x * dR[1] + r * dR[2] + x * dR[3] + z * dR[5] - r * dR[6] + z * dR[7] -
                   2.0f * y * dR[8]);
    g[3] = 2.0f * (-2.0f * z * dR[0] - r * dR[1] + x * dR[2] + r * dR[3] - 2.0f * z * dR[4] + y * dR[5] +
                   x * dR[6] + y * dR[7]);
    float dot = r * g[0] + x * g[1] + y * g[2] + z * g[3];
    float u[4] = {r, x, y, z};
    for (int k = 0; k < 4; k++) dq[k] = (g[k] - u[k] * dot) / l;
}

/* The activated values of raw parameters: unit quaternion (identity for a
 * zero or non-finite one, as the readers do), scale, opacity. */
GT_HD void gs_activate(const float *rq, const float *ls, float logit, float q[4], float s[3], float *o)
{
    for (int k = 0; k < 4; k++) q[k] = rq[k];
    gs_quat_normalize(q);
    for (int k = 0; k < 3; k++) s[k] = expf(ls[k]);
    *o = 1.0f / (1.0f + expf(-logit));
}

/* The per-Gaussian backward of Gaussian (pos, raw log-scale ls, raw
 * quaternion rq, logit, sh) projected for camera c: from dL/d(2-D mean in
 * pixels) dmean, dL/dconic dconic, dL/d(effective opacity) dop, dL/dcolour
 * drgb, to the raw parameters, added into dpos[3], dls[3], drot[4],
 * *dlogit, dsh[sh_k*3]. The caller calls it only for Gaussians the forward
 * kept (in front of the near plane, det != 0, on screen). ref: the
 * reference's z-derivative of a clamped Jacobian entry (twice the exact one). */
GT_HD void gs_gauss_grad(const gs_gcam *c, float mod, int antialias, int ref, int deg, const float *pos, const float *ls,
                         const float *rq, float logit, const float *sh, const float dmean[2],
                         const float dconic[3], float dop, const float drgb[3], float *dpos, float *dls,
                         float *drot, float *dlogit, float *dsh)
{
    float q[4], sc[3], o;
    gs_activate(rq, ls, logit, q, sc, &o);
    float v[3];
    gs_view(c->R, c->t, pos[0], pos[1], pos[2], v);
    float tz = v[2], txtz = v[0] / tz, tytz = v[1] / tz;
    float lim[4];
    gs_frustum_lims((float)c->w, (float)c->h, c->fx, c->fy, c->cx, c->cy, lim);
    float S[6], cov[3], det0;
    gs_cov3(q, sc, mod, S);
    gs_cov2(c->R, c->fx, c->fy, lim, txtz, tytz, tz, S, cov);
    float a0 = cov[0], b0 = cov[1], c0 = cov[2];
    float det = gs_filter(cov, &det0);
    float A = cov[0], B = cov[1], C = cov[2];
    float aa = antialias ? gs_aa_scale(det0, det) : 1.0f;

    /* opacity: effective = sigmoid(logit) * aa */
    *dlogit += dop * aa * o * (1.0f - o);
    /* conic -> filtered covariance */
    float id2 = 1.0f / (det * det);
    float dA = id2 * (-C * C * dconic[0] + B * C * dconic[1] - B * B * dconic[2]);
    float dB = id2 * (2.0f * B * C * dconic[0] - (det + 2.0f * B * B) * dconic[1] + 2.0f * A * B * dconic[2]);
    float dC = id2 * (-B * B * dconic[0] + A * B * dconic[1] - A * A * dconic[2]);
    /* antialias compensation sqrt(det0 / det) */
    if (antialias && aa > 0.0f) {
        float k = dop * o * 0.5f / aa; /* dL/d(det0/det) */
        float id = 1.0f / det;
        dA += k * (c0 * id - det0 * C * id * id);
        dB += k * (-2.0f * b0 * id + det0 * 2.0f * B * id * id);
        dC += k * (a0 * id - det0 * A * id * id);
    }
    /* 2-D covariance -> 3-D covariance (symmetric dS) and the EWA matrix T */
    float T0[3], T1[3];
    gs_ewa_T(c->R, c->fx, c->fy, lim, txtz, tytz, tz, T0, T1);
    float Sf[9] = {S[0], S[1], S[2], S[1], S[3], S[4], S[2], S[4], S[5]};
    float dS[9], ST0[3], ST1[3];
    for (int i = 0; i < 3; i++) {
        ST0[i] = Sf[3 * i] * T0[0] + Sf[3 * i + 1] * T0[1] + Sf[3 * i + 2] * T0[2];
        ST1[i] = Sf[3 * i] * T1[0] + Sf[3 * i + 1] * T1[1] + Sf[3 * i + 2] * T1[2];
        for (int j = 0; j < 3; j++)
            dS[3 * i + j] = dA * T0[i] * T0[j] + 0.5f * dB * (T0[i] * T1[j] + T1[i] * T0[j]) + dC * T1[i] * T1[j];
    }
    float dT0[3], dT1[3];
    for (int i = 0; i < 3; i++) {
        dT0[i] = 2.0f * dA * ST0[i] + dB * ST1[i];
        dT1[i] = 2.0f * dC * ST1[i] + dB * ST0[i];
    }
    const float *R = c->R;
    float dj00 = dT0[0] * R[0] + dT0[1] * R[1] + dT0[2] * R[2];
    float dj02 = dT0[0] * R[6] + dT0[1] * R[7] + dT0[2] * R[8];
    float dj11 = dT1[0] * R[3] + dT1[1] * R[4] + dT1[2] * R[5];
    float dj12 = dT1[0] * R[6] + dT1[1] * R[7] + dT1[2] * R[8];
    /* J -> camera-space mean (the clamped x/z, y/z of gs_ewa_T) */
    float dv[3] = {0.0f, 0.0f, 0.0f};
    float iz = 1.0f / tz, iz2 = iz * iz;
    dv[2] += -c->fx * iz2 * dj00 - c->fy * iz2 * dj11;
    if (txtz < -lim[0] || txtz > lim[1]) {
        float L = txtz < -lim[0] ? -lim[0] : lim[1]; /* j02 = -fx L / tz */
        dv[2] += (ref ? 2.0f : 1.0f) * c->fx * L * iz2 * dj02;
    } else { /* j02 = -fx tx / tz^2 */
        dv[0] += -c->fx * iz2 * dj02;
        dv[2] += 2.0f * c->fx * v[0] * iz2 * iz * dj02;
    }
    if (tytz < -lim[2] || tytz > lim[3]) {
        float L = tytz < -lim[2] ? -lim[2] : lim[3];
        dv[2] += (ref ? 2.0f : 1.0f) * c->fy * L * iz2 * dj12;
    } else {
        dv[1] += -c->fy * iz2 * dj12;
        dv[2] += 2.0f * c->fy * v[1] * iz2 * iz * dj12;
    }
    /* 2-D mean: px = fx x/z + cx */
    dv[0] += dmean[0] * c->fx * iz;
    dv[1] += dmean[1] * c->fy * iz;
    dv[2] += -(dmean[0] * c->fx * v[0] + dmean[1] * c->fy * v[1]) * iz2;
    /* 3-D covariance Rq diag(m s)^2 Rq^T -> scale and rotation */
    float Rq[9];
    gs_rotmat(q, Rq);
    float dRq[9];
    for (int k = 0; k < 3; k++) {
        float vk = mod * sc[k], d2 = vk * vk;
        float dSR[3]; /* (dS Rq)_ik, column k */
        for (int i = 0; i < 3; i++)
            dSR[i] = dS[3 * i] * Rq[k] + dS[3 * i + 1] * Rq[3 + k] + dS[3 * i + 2] * Rq[6 + k];
        float rdr = Rq[k] * dSR[0] + Rq[3 + k] * dSR[1] + Rq[6 + k] * dSR[2];
        dls[k] += 2.0f * vk * rdr * mod * sc[k];
        for (int i = 0; i < 3; i++) dRq[3 * i + k] = 2.0f * dSR[i] * d2;
    }
    float dq[4];
    gs_quat_grad(rq, dRq, dq);
    for (int k = 0; k < 4; k++) drot[k] += dq[k];
    /* colour: SH coefficients and the direction campos -> mean */
    float dd[3] = {pos[0] - c->campos[0], pos[1] - c->campos[1], pos[2] - c->campos[2]};
    float dir[3], ddir[3];
    gs_view_dir(dd[0], dd[1], dd[2], dir);
    gs_sh_grad(deg, sh, dir, drgb, dsh, ddir);
    float len = sqrtf(dd[0] * dd[0] + dd[1] * dd[1] + dd[2] * dd[2]);
    float ddot = dir[0] * ddir[0] + dir[1] * ddir[1] + dir[2] * ddir[2];
    /* mean: camera space (R^T dv) plus the view direction */
    for (int k = 0; k < 3; k++)
        dpos[k] += R[k] * dv[0] + R[3 + k] * dv[1] + R[6 + k] * dv[2] + (ddir[k] - dir[k] * ddot) / len;
}

#endif
