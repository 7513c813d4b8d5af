/* Writing raw YUV and Y4M streams (see yuv.h): Y4M gets its header and a
 * FRAME line per frame, formats Y4M cannot carry are converted (NV12 to
 * yuv420p, packed 4:2:2 to yuv422p); regular files are written through the
 * mmap appender, the rest through stdio; the output is atomic. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/mapout.h"
#include "common/output.h"
#include "io/yuv.h"

struct gt_yuv_writer {
    gt_out o;
    bool y4m;
    int w, h;
    gt_pixfmt fmt, file_fmt;
    size_t in_bytes, out_bytes;
    uint8_t *tmp;
    gt_mapout *map; /* regular-file output: parallel mmap appends (else stdio) */
};

/* Regular files get the mmap appender (see common/mapout.h): on tmpfs one
 * write() of a 15 MB frame is bound by a single core allocating, zeroing
 * and copying pages. Pipes, terminals and stdout keep stdio, and so does
 * everything when GT_NO_MMAP_WRITE is set (tests compare the two). */
static void try_map(gt_yuv_writer *wr)
{
    const char *no = getenv("GT_NO_MMAP_WRITE");
    if (wr->o.is_stdout || (no && *no && strcmp(no, "0") != 0)) return;
    if (fflush(wr->o.fp) != 0) return; /* the stdio path reports it */
    off_t at = ftello(wr->o.fp);
    if (at < 0) return;
    wr->map = gt_mapout_open(fileno(wr->o.fp), at, 0, 0);
}

gt_status gt_yuv_create(const char *path, bool y4m, int w, int h, gt_pixfmt fmt, int fps_num,
                        int fps_den, gt_yuv_writer **out)
{
    *out = NULL;
    GT_TRY(gt_pixfmt_check_size(fmt, w, h));
    if (y4m && (fps_num <= 0 || fps_den <= 0))
        return gt_fail(GT_ERR_USAGE, "frame rate %d/%d: both must be positive", fps_num, fps_den);
    gt_yuv_writer *wr = gt_calloc(1, sizeof *wr, "YUV writer");
    if (!wr) return GT_ERR_RUNTIME;
    wr->y4m = y4m;
    wr->w = w;
    wr->h = h;
    wr->fmt = fmt;
    wr->file_fmt = fmt;
    if (y4m) {
        if (fmt == GT_PIX_NV12) wr->file_fmt = GT_PIX_YUV420P;
        else if (fmt == GT_PIX_YUYV422 || fmt == GT_PIX_UYVY422) wr->file_fmt = GT_PIX_YUV422P;
    }
    wr->in_bytes = gt_pixfmt_frame_bytes(fmt, w, h);
    wr->out_bytes = gt_pixfmt_frame_bytes(wr->file_fmt, w, h);
    if (wr->file_fmt != fmt && !(wr->tmp = gt_malloc(wr->out_bytes, "frame conversion buffer"))) {
        free(wr);
        return GT_ERR_RUNTIME;
    }
    gt_status st = gt_out_open(&wr->o, path);
    if (st != GT_OK) {
        free(wr->tmp);
        free(wr);
        return st;
    }
    if (y4m) {
        const char *cs = wr->file_fmt == GT_PIX_YUV420P   ? "420jpeg"
                         : wr->file_fmt == GT_PIX_YUV422P ? "422"
                                                          : "444";
        fprintf(wr->o.fp, "YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 C%s\n", w, h, fps_num, fps_den, cs);
    }
    try_map(wr);
    *out = wr;
    return GT_OK;
}

gt_status gt_yuv_write_frame(gt_yuv_writer *wr, const void *frame)
{
    const void *data = frame;
    if (wr->tmp) {
        GT_TRY(gt_yuv_convert(frame, wr->fmt, wr->tmp, wr->file_fmt, wr->w, wr->h));
        data = wr->tmp;
    }
    if (wr->map) {
        if (wr->y4m) GT_TRY(gt_mapout_write(wr->map, "FRAME\n", 6, wr->o.path));
        return gt_mapout_write(wr->map, data, wr->out_bytes, wr->o.path);
    }
    if ((wr->y4m && fputs("FRAME\n", wr->o.fp) == EOF) ||
        fwrite(data, 1, wr->out_bytes, wr->o.fp) != wr->out_bytes)
        return gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s", wr->o.path, strerror(errno));
    return GT_OK;
}

gt_status gt_yuv_finish(gt_yuv_writer *wr, bool ok)
{
    if (!wr) return GT_OK;
    gt_status st = GT_OK;
    if (wr->map) {
        st = gt_mapout_close(wr->map, ok, wr->o.path);
        if (st) ok = false;
    }
    if (ok) st = gt_out_commit(&wr->o);
    else gt_out_abort(&wr->o);
    free(wr->tmp);
    free(wr);
    return st;
}
