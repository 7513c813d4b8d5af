/* Reading raw YUV and Y4M streams (see yuv.h), a frame at a time.
 *
 * Y4M reading rules: the header line is "YUV4MPEG2" followed by tags W<width>
 * H<height> F<num>:<den> I<p|t|b|m|?> A<num>:<den> C<colourspace> X<anything>
 * (unknown tags are ignored, as the format asks); C420jpeg, C420mpeg2,
 * C420paldv and C420 map to yuv420p (the chroma siting differs, the layout
 * does not), C422 to yuv422p, C444 to yuv444p; mono and high-bit-depth
 * colourspaces are rejected. No C tag means 4:2:0. Each frame starts with a
 * "FRAME" line whose parameters are ignored. Header lines are capped at
 * 4 KiB, dimensions at 32768 and frames at 1 GiB, so a lying header cannot make
 * the caller allocate a giant frame buffer. Errors are GT_ERR_DATA with
 * "<what> (<file>: byte <offset>)"; errors inside a stream name the frame
 * (counted from 1). Reading never seeks, so pipes work; skipping seeks in a
 * regular file and reads and drops on anything else. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/yuv.h"

#define Y4M_MAGIC "YUV4MPEG2"
#define Y4M_MAX_LINE 4096
#define Y4M_MAX_DIM 32768
#define MAX_FRAME_BYTES ((size_t)1 << 30)

struct gt_yuv_reader {
    FILE *f;
    char *name;
    int w, h;
    gt_pixfmt fmt;
    bool y4m;
    int fps_num, fps_den;
    size_t frame_bytes;
    long frames;
    long long off;          /* bytes consumed so far */
    unsigned char pre[16];  /* bytes read while sniffing, handed out first */
    size_t npre, ppre;
};

/* read up to n bytes; returns the count (short only at EOF or error) */
static size_t rd(gt_yuv_reader *r, void *buf, size_t n)
{
    size_t got = 0;
    unsigned char *b = buf;
    while (got < n && r->ppre < r->npre) b[got++] = r->pre[r->ppre++];
    if (got < n) got += fread(b + got, 1, n - got, r->f);
    r->off += (long long)got;
    return got;
}

static int rd_byte(gt_yuv_reader *r)
{
    unsigned char c;
    return rd(r, &c, 1) == 1 ? c : EOF;
}

static gt_status read_error(gt_yuv_reader *r)
{
    return gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", gt_in_name(r->name), strerror(errno));
}

/* Read the rest of a text line (after the magic) into buf, without '\n'. */
static gt_status read_line(gt_yuv_reader *r, char *buf, size_t cap, const char *what)
{
    size_t n = 0;
    for (;;) {
        int c = rd_byte(r);
        if (c == EOF) {
            if (ferror(r->f)) return read_error(r);
            return gt_fail_at_byte(GT_ERR_DATA, r->name, r->off, "%s ends before its newline", what);
        }
        if (c == '\n') break;
        if (c == 0) return gt_fail_at_byte(GT_ERR_DATA, r->name, r->off - 1, "NUL byte in %s", what);
        if (n + 1 >= cap)
            return gt_fail_at_byte(GT_ERR_DATA, r->name, r->off, "%s longer than %zu bytes", what, cap - 1);
        buf[n++] = (char)c;
    }
    buf[n] = 0;
    return GT_OK;
}

static bool parse_int(const char *s, const char **end, long *v)
{
    char *e;
    errno = 0;
    if (!(*s >= '0' && *s <= '9')) return false;
    long x = strtol(s, &e, 10);
    if (errno == ERANGE) return false;
    *v = x;
    *end = e;
    return true;
}

static bool parse_ratio(const char *s, long *n, long *d)
{
    const char *e;
    if (!parse_int(s, &e, n) || *e != ':') return false;
    if (!parse_int(e + 1, &e, d)) return false;
    return *e == 0;
}

static gt_status parse_y4m_header(gt_yuv_reader *r)
{
    char line[Y4M_MAX_LINE];
    long long base = r->off, hdr_start = 0;
    GT_TRY(read_line(r, line, sizeof line, "Y4M header"));
    long w = -1, h = -1, fn = 25, fd = 1;
    int fmt = GT_PIX_YUV420P;
    char *save = NULL;
    for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        const char *e;
        long v, a, b;
        hdr_start = base + (t - line); /* byte offset of the tag, for messages */
        switch (t[0]) {
        case 'W':
        case 'H':
            if (!parse_int(t + 1, &e, &v) || *e)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start, "bad Y4M %s tag '%.40s'",
                                       t[0] == 'W' ? "width" : "height", t);
            if (v <= 0 || v > Y4M_MAX_DIM)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "Y4M %s %ld out of range 1..%d", t[0] == 'W' ? "width" : "height", v,
                                       Y4M_MAX_DIM);
            if (t[0] == 'W') w = v;
            else h = v;
            break;
        case 'F':
            if (!parse_ratio(t + 1, &a, &b) || a <= 0 || b <= 0 || a > INT_MAX || b > INT_MAX)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "bad Y4M frame rate '%.40s' (expected F<num>:<den>, both positive)", t);
            fn = a;
            fd = b;
            break;
        case 'A':
            if (!parse_ratio(t + 1, &a, &b))
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "bad Y4M aspect ratio '%.40s' (expected A<num>:<den>)", t);
            break;
        case 'I':
            if (!strchr("ptbm?", t[1]) || t[1] == 0 || t[2])
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "bad Y4M interlacing tag '%.40s' (expected Ip, It, Ib or Im)", t);
            break;
        case 'C':
            if (strcmp(t, "C420jpeg") == 0 || strcmp(t, "C420mpeg2") == 0 ||
                strcmp(t, "C420paldv") == 0 || strcmp(t, "C420") == 0)
                fmt = GT_PIX_YUV420P;
            else if (strcmp(t, "C422") == 0) fmt = GT_PIX_YUV422P;
            else if (strcmp(t, "C444") == 0) fmt = GT_PIX_YUV444P;
            else if (strncmp(t, "Cmono", 5) == 0)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "Y4M colourspace '%.40s' (greyscale) is not supported; use 4:2:0, 4:2:2 or 4:4:4", t);
            else
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "Y4M colourspace '%.40s' is not supported (C420jpeg, C420mpeg2, C420paldv, C420, C422, C444)",
                                       t);
            break;
        default: /* X extensions and unknown tags are ignored */
            break;
        }
    }
    hdr_start = 0;
    if (w < 0 || h < 0)
        return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start, "Y4M header lacks the %s tag",
                               w < 0 ? "W (width)" : "H (height)");
    if (gt_pixfmt_check_size((gt_pixfmt)fmt, (int)w, (int)h) != GT_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", gt_errmsg()); /* the message buffer is reused */
        return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start, "Y4M frame size: %s", why);
    }
    r->w = (int)w;
    r->h = (int)h;
    r->fmt = (gt_pixfmt)fmt;
    r->fps_num = (int)fn;
    r->fps_den = (int)fd;
    return GT_OK;
}

/* Bytes of a regular file not yet handed out (the sniffed bytes included),
 * or -1 when the stream is not a regular file (a pipe, a terminal). */
static long long bytes_left(gt_yuv_reader *r)
{
    struct stat sb;
    off_t pos = ftello(r->f);
    if (pos < 0 || fstat(fileno(r->f), &sb) != 0 || !S_ISREG(sb.st_mode)) return -1;
    return (long long)sb.st_size - (long long)pos + (long long)(r->npre - r->ppre);
}

/* A regular file too short for its first frame is bad data at open, before
 * the caller allocates and plans for frames of this size (a 44-byte Y4M that
 * claims 16000x16000 cost a minute and 6 GB before its first read). Raw: the
 * message the first read would give. Y4M: for frames of 1 MiB and more; a
 * smaller first frame is cheap to read, and its read names the exact fault
 * (a bad FRAME line, or the bytes present). */
static gt_status check_first_frame(gt_yuv_reader *r)
{
    long long left = bytes_left(r);
    if (left <= 0) return GT_OK; /* not a regular file, or no frames: a clean end */
    if (!r->y4m && left < (long long)r->frame_bytes)
        return gt_fail_at_byte(GT_ERR_DATA, r->name, left, "stream ends inside frame 1 (%lld of %zu bytes)", left,
                               r->frame_bytes);
    if (r->y4m && r->frame_bytes >= ((size_t)1 << 20) && left < (long long)r->frame_bytes + 6)
        return gt_fail_at_byte(GT_ERR_DATA, r->name, r->off + left,
                               "stream ends inside frame 1: the header says %dx%d %s, %zu bytes a frame, and "
                               "%lld bytes follow it",
                               r->w, r->h, gt_pixfmt_name(r->fmt), r->frame_bytes, left);
    return GT_OK;
}

gt_status gt_yuv_open(const char *path, int w, int h, int fmt, gt_yuv_reader **out)
{
    *out = NULL;
    gt_status st;
    gt_yuv_reader *r = gt_calloc(1, sizeof *r, "YUV reader");
    if (!r) return GT_ERR_RUNTIME;
    r->name = strdup(path ? path : "-");
    r->f = gt_in_open(path, &st);
    if (!r->f || !r->name) {
        if (r->f) {
            gt_in_close(r->f);
            st = gt_fail(GT_ERR_RUNTIME, "out of memory");
        }
        free(r->name);
        free(r);
        return st;
    }
    r->fps_num = 25;
    r->fps_den = 1;
    /* sniff the magic without seeking: keep the bytes for a raw stream */
    size_t magic = strlen(Y4M_MAGIC) + 1;
    r->npre = fread(r->pre, 1, magic, r->f);
    if (r->npre < magic && ferror(r->f)) {
        st = read_error(r);
        goto fail;
    }
    if (r->npre == magic && memcmp(r->pre, Y4M_MAGIC " ", magic) == 0) {
        r->ppre = r->npre;
        r->off = (long long)magic;
        r->y4m = true;
        st = parse_y4m_header(r);
        if (st != GT_OK) goto fail;
    } else {
        if (r->npre == magic && memcmp(r->pre, Y4M_MAGIC "\n", magic) == 0) {
            st = gt_fail_at_byte(GT_ERR_DATA, r->name, (long long)magic - 1, "Y4M header has no tags (W and H are required)");
            goto fail;
        }
        if (fmt < 0 || w <= 0 || h <= 0) {
            st = gt_fail(GT_ERR_USAGE, "'%s' is raw YUV (no YUV4MPEG2 header): give its size and pixel format",
                         gt_in_name(path));
            goto fail;
        }
        if ((st = gt_pixfmt_check_size((gt_pixfmt)fmt, w, h)) != GT_OK) goto fail;
        r->w = w;
        r->h = h;
        r->fmt = (gt_pixfmt)fmt;
    }
    r->frame_bytes = gt_pixfmt_frame_bytes(r->fmt, r->w, r->h);
    if (r->frame_bytes > MAX_FRAME_BYTES) {
        st = r->y4m ? gt_fail_at_byte(GT_ERR_DATA, r->name, 0, "Y4M frame of %zu bytes is larger than the 1 GiB limit", r->frame_bytes)
                    : gt_fail(GT_ERR_USAGE, "frame of %zu bytes is larger than the 1 GiB limit", r->frame_bytes);
        goto fail;
    }
    if ((st = check_first_frame(r)) != GT_OK) goto fail;
    *out = r;
    return GT_OK;
fail:
    gt_yuv_close(r);
    return st;
}

int gt_yuv_width(const gt_yuv_reader *r) { return r->w; }
int gt_yuv_height(const gt_yuv_reader *r) { return r->h; }
gt_pixfmt gt_yuv_pixfmt(const gt_yuv_reader *r) { return r->fmt; }
bool gt_yuv_is_y4m(const gt_yuv_reader *r) { return r->y4m; }
void gt_yuv_rate(const gt_yuv_reader *r, int *num, int *den)
{
    *num = r->fps_num;
    *den = r->fps_den;
}
size_t gt_yuv_frame_bytes(const gt_yuv_reader *r) { return r->frame_bytes; }
long gt_yuv_frames_read(const gt_yuv_reader *r) { return r->frames; }

/* Y4M: the FRAME line that starts frame fno. *got = false at a clean end
 * between frames. */
static gt_status read_frame_marker(gt_yuv_reader *r, long fno, bool *got)
{
    *got = false;
    char mark[5];
    long long at = r->off;
    size_t n = rd(r, mark, 5);
    if (n == 0) {
        if (ferror(r->f)) return read_error(r);
        return GT_OK; /* clean end between frames */
    }
    if (n < 5 || memcmp(mark, "FRAME", n) != 0) {
        if (ferror(r->f)) return read_error(r);
        if (memcmp(mark, "FRAME", n) == 0)
            return gt_fail_at_byte(GT_ERR_DATA, r->name, at, "FRAME marker of frame %ld cut short", fno);
        return gt_fail_at_byte(GT_ERR_DATA, r->name, at, "expected a FRAME marker at frame %ld", fno);
    }
    int c = rd_byte(r);
    if (c == ' ') {
        char params[Y4M_MAX_LINE];
        gt_status st = read_line(r, params, sizeof params, "FRAME line");
        if (st != GT_OK) {
            gt_errmsg_prefix("frame %ld", fno);
            return st;
        }
    } else if (c != '\n') {
        if (c == EOF && ferror(r->f)) return read_error(r);
        return gt_fail_at_byte(GT_ERR_DATA, r->name, at,
                               c == EOF ? "FRAME marker of frame %ld cut short" : "bad FRAME marker at frame %ld",
                               fno);
    }
    *got = true;
    return GT_OK;
}

/* Pass over n bytes of frame data: seek in a regular file that holds them
 * (left: bytes_left), else read them into a scratch buffer and drop them.
 * *done: the bytes passed (fewer than n only at the end of the stream). */
static gt_status pass_bytes(gt_yuv_reader *r, size_t n, long long left, size_t *done)
{
    *done = 0;
    if (left >= (long long)n) {
        while (r->ppre < r->npre && *done < n) r->ppre++, (*done)++;
        if (fseeko(r->f, (off_t)(n - *done), SEEK_CUR) != 0) return read_error(r);
        r->off += (long long)n;
        *done = n;
        return GT_OK;
    }
    unsigned char scratch[1 << 16];
    while (*done < n) {
        size_t want = n - *done < sizeof scratch ? n - *done : sizeof scratch;
        size_t got = rd(r, scratch, want);
        *done += got;
        if (got < want) return ferror(r->f) ? read_error(r) : GT_OK;
    }
    return GT_OK;
}

/* The next frame into buf, or passed over when buf is NULL (seeked when
 * `seek` and the file holds it). *got = false at a clean end of stream. */
static gt_status next_frame(gt_yuv_reader *r, void *buf, bool seek, bool *got)
{
    *got = false;
    long fno = r->frames + 1;
    if (r->y4m) {
        bool marked;
        GT_TRY(read_frame_marker(r, fno, &marked));
        if (!marked) return GT_OK;
    }
    long long at = r->off;
    size_t n;
    if (buf) n = rd(r, buf, r->frame_bytes);
    else GT_TRY(pass_bytes(r, r->frame_bytes, seek ? bytes_left(r) : -1, &n));
    if (n < r->frame_bytes) {
        if (ferror(r->f)) return read_error(r);
        if (n == 0 && !r->y4m) return GT_OK; /* clean end of a raw stream */
        return gt_fail_at_byte(GT_ERR_DATA, r->name, at + (long long)n,
                               "stream ends inside frame %ld (%zu of %zu bytes)", fno, n, r->frame_bytes);
    }
    r->frames++;
    *got = true;
    return GT_OK;
}

gt_status gt_yuv_read_frame(gt_yuv_reader *r, void *buf, bool *got) { return next_frame(r, buf, false, got); }

gt_status gt_yuv_skip_frames(gt_yuv_reader *r, long n, long *skipped)
{
    *skipped = 0;
    if (n <= 0) return GT_OK;
    long long left = bytes_left(r);
    if (!r->y4m && left >= 0) { /* a raw file: the whole frames it holds, in one seek */
        long long whole = left / (long long)r->frame_bytes;
        long k = whole < n ? (long)whole : n;
        size_t done;
        GT_TRY(pass_bytes(r, r->frame_bytes * (size_t)k, left, &done));
        r->frames += k;
        *skipped = k; /* short: the next read finds the end, or names the cut frame */
        return GT_OK;
    }
    bool got = true;
    while (got && *skipped < n) { /* frame by frame: Y4M, or a pipe */
        GT_TRY(next_frame(r, NULL, left >= 0, &got));
        *skipped += got;
    }
    return GT_OK;
}

void gt_yuv_close(gt_yuv_reader *r)
{
    if (!r) return;
    if (r->f) gt_in_close(r->f);
    free(r->name);
    free(r);
}
