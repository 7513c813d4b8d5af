/* The 3DGS constants, one definition for the public API (gs.h), the CPU
 * reference and the CUDA rasterizer (gs_math.h): tile size, near plane,
 * alpha and transmittance cut-offs, and the real SH basis constants of the
 * reference, degrees 0-3. Plain macros, so C, C++ and CUDA all read them. */
#ifndef GT_GS_CONST_H
#define GT_GS_CONST_H

#define GS_TILE 16      /* tile side in pixels (gs.h: GT_GS_TILE) */
#define GS_NEAR 0.2f    /* view-space z below which a Gaussian is culled (GT_GS_NEAR) */
#define GS_ALPHA_MIN (1.0f / 255.0f) /* a Gaussian with less alpha skips the pixel */
#define GS_T_MIN 0.0001f             /* transmittance below which a pixel is done */

/* Real SH basis constants of the reference, degrees 0-3 (gs.h exports C0,
 * C1 under its GT_ names and the arrays gt_gs_sh_c2/c3). */
#define GS_SH_C0 0.28209479177387814f
#define GS_SH_C1 0.4886025119029199f
#define GS_SH_C2_0 1.0925484305920792f
#define GS_SH_C2_1 -1.0925484305920792f
#define GS_SH_C2_2 0.31539156525252005f
#define GS_SH_C2_3 -1.0925484305920792f
#define GS_SH_C2_4 0.5462742152960396f
#define GS_SH_C3_0 -0.5900435899266435f
#define GS_SH_C3_1 2.890611442640554f
#define GS_SH_C3_2 -0.4570457994644658f
#define GS_SH_C3_3 0.3731763325901154f
#define GS_SH_C3_4 -0.4570457994644658f
#define GS_SH_C3_5 1.445305721320277f
#define GS_SH_C3_6 -0.5900435899266435f

#endif
