# Shared by exhaust.sh and concurrent.sh (sourced, not run): the programs,
# the GPU probe, the inputs, one small but real job per program and variant,
# and the runner that wraps each program run in compute-sanitizer when
# GT_SANITIZE=1.
#
#   gt_start SCALE PROBE PROG... the programs (GT_BIN[name]), exit 77 (skip)
#                                when PROBE finds no usable GPU, a scratch
#                                folder T removed at exit, the inputs in $T/in
#                                (SCALE small: exhaust; large: concurrent)
#   gt_job NAME                  JOB_PROG, JOB_ARGS (outputs relative to the
#                                current directory), JOB_OUT (the main output)
#   gt_run LOG CMD...            run CMD: stdout to LOG.out, stderr to LOG.err,
#                                the sanitizer's report to LOG.san; its status
#   gt_sanitizer_verdict LOG RC  "" when clean, else what the sanitizer found

declare -A GT_BIN
GT_TD=${GT_TESTDATA:-}
[ -d "$GT_TD" ] || GT_TD=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../testdata" && pwd)

# absolute: meson passes paths relative to the build folder, the jobs run elsewhere
gt_abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

gt_jobs_init() {
  GT_PROBE=$(gt_abs "$1")
  shift
  local p
  for p in "$@"; do GT_BIN[$(basename "$p")]=$(gt_abs "$p"); done
  for p in gsrender yuvstitch sparsesolve poissonrec mcmesh stpsfit; do
    [ -n "${GT_BIN[$p]:-}" ] || { echo "FAIL: $p not given to $0"; exit 1; }
  done
  if [ "${GT_SANITIZE:-0}" = 1 ] && ! command -v compute-sanitizer >/dev/null; then
    echo "FAIL: GT_SANITIZE=1 but compute-sanitizer is not on PATH"
    exit 1
  fi
}

gt_start() {
  local scale=$1
  shift
  gt_jobs_init "$@"
  gt_require_gpu
  T=$(mktemp -d)
  trap 'rm -rf "$T"' EXIT
  gt_make_inputs "$T/in" "$scale" || { echo "FAIL: cannot make the inputs"; exit 1; }
}

gt_require_gpu() {
  local why
  why=$("$GT_PROBE" --device cuda 2>&1 >/dev/null)
  if [ $? -ne 0 ]; then
    echo "SKIP: no usable GPU ($why)"
    exit 77
  fi
}

# Two 320x240 yuyv422 camera streams of F frames (a moving pattern, made
# here: the GPU machine need not have ffmpeg), a 2-D Laplacian of side L,
# landmark pairs and a parameter file for the apply jobs.
gt_make_inputs() {
  local dir=$1 scale=$2 frames=3 side=40 npairs=0
  if [ "$scale" = large ]; then frames=30 side=300 npairs=2000; fi
  mkdir -p "$dir"
  python3 - "$dir" "$frames" "$npairs" <<'PY' || return 1
import math, random, sys
d, frames, npairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w, h = 320, 240
for c in (1, 2):
    with open(f"{d}/cam{c}.yuv", "wb") as f:
        for k in range(frames):
            rows = []
            for y in range(h):
                row = bytearray()
                cy = math.cos(y / 31.0)
                for x in range(0, w, 2):
                    v0 = int(128 + 90 * math.sin((x + 240 * (c - 1)) / 23.0 + k / 5) * cy)
                    v1 = int(128 + 90 * math.sin((x + 1 + 240 * (c - 1)) / 23.0 + k / 5) * cy)
                    row += bytes((v0, 100 + 20 * c, v1, 150 - 20 * c))
                rows.append(bytes(row))
            f.write(b"".join(rows))
if npairs:
    r = random.Random(14)
    with open(f"{d}/src.txt", "w") as s, open(f"{d}/dst.txt", "w") as t:
        for _ in range(npairs):
            p = [r.uniform(-1, 1) for _ in range(3)]
            q = [p[0] + 0.1 * math.sin(2 * p[1]), p[1] + 0.1 * math.cos(3 * p[2]), p[2] + 0.05 * p[0] * p[1]]
            s.write("%.17g %.17g %.17g\n" % tuple(p))
            t.write("%.17g %.17g %.17g\n" % tuple(q))
PY
  if [ "$npairs" = 0 ]; then
    cp "$GT_TD/tps/src.txt" "$GT_TD/tps/dst.txt" "$dir/"
  fi
  { echo "%%MatrixMarket matrix coordinate real symmetric"
    awk -v n="$side" 'BEGIN { c = 0
        for (y = 0; y < n; y++) for (x = 0; x < n; x++) { i = y*n + x + 1; e[c++] = i " " i " 4"
            if (x > 0) e[c++] = i " " i-1 " -1"; if (y > 0) e[c++] = i " " i-n " -1" }
        print n*n, n*n, c; for (k = 0; k < c; k++) print e[k] }'; } > "$dir/lap.mtx"
  "${GT_BIN[stpsfit]}" --device cpu -q "$GT_TD/tps/src.txt" "$GT_TD/tps/dst.txt" -o "$dir/w.tps" || return 1
  GT_IN=$dir GT_SCALE=$scale
}

gt_job() {
  local big=0
  [ "${GT_SCALE:-small}" = large ] && big=1
  local dev=(--device cuda -q)
  JOB_OUT=
  case $1 in
  gsrender)
    JOB_PROG=gsrender JOB_OUT=orbit.y4m
    if [ $big = 1 ]; then JOB_ARGS=("$GT_TD/gs/scene.ply" --orbit 60 --size 320x180)
    else JOB_ARGS=("$GT_TD/gs/scene.ply" --orbit 3 --size 160x90); fi
    JOB_ARGS+=(-o "$JOB_OUT") ;;
  gsrender-view)  # one view with its depth map: two outputs
    JOB_PROG=gsrender JOB_OUT=view.png
    JOB_ARGS=("$GT_TD/gs/scene.ply" --cameras "$GT_TD/gs/cameras.json" --view 0 --depth depth.pfm -o "$JOB_OUT") ;;
  yuvstitch|yuvstitch-feather)
    local blend=multiband
    [ "$1" = yuvstitch-feather ] && blend=feather
    JOB_PROG=yuvstitch JOB_OUT=pano.y4m
    JOB_ARGS=(--rig "$GT_TD/stitch/rig2.txt" --size 320x240 --pix-fmt yuyv422 "$GT_IN/cam1.yuv" "$GT_IN/cam2.yuv"
              --blend $blend -o "$JOB_OUT") ;;
  sparsesolve)
    JOB_PROG=sparsesolve JOB_OUT=x.mtx
    if [ $big = 1 ]; then JOB_ARGS=("$GT_IN/lap.mtx")
    else JOB_ARGS=("$GT_TD/sparse/poisson4009_sub1000.mtx"); fi
    JOB_ARGS+=(-o "$JOB_OUT") ;;
  sparsesolve-dia)
    JOB_PROG=sparsesolve JOB_OUT=x.mtx
    JOB_ARGS=("$GT_IN/lap.mtx" --format dia --method cg -o "$JOB_OUT") ;;
  sparsesolve-richardson)
    JOB_PROG=sparsesolve JOB_OUT=x.mtx
    JOB_ARGS=("$GT_IN/lap.mtx" --method richardson --tol 1e-3 --maxiter 100000 -o "$JOB_OUT") ;;
  poissonrec)  # each level solved to 1e-7: the GPU's atomic sums change the last bits only
    JOB_PROG=poissonrec JOB_OUT=mesh.ply
    JOB_ARGS=("$GT_TD/poisson/bunny_8k.ply" --depth $((big ? 7 : 6)) --solver cg -o "$JOB_OUT") ;;
  poissonrec-density)  # the octree and the solution also go to the host
    JOB_PROG=poissonrec JOB_OUT=mesh.ply
    JOB_ARGS=("$GT_TD/poisson/bunny_8k.ply" --depth 5 --solver cg --density --trim 0.05 -o "$JOB_OUT") ;;
  mcmesh)
    JOB_PROG=mcmesh JOB_OUT=iso.ply
    JOB_ARGS=("$GT_TD/mc/bunny_dist.nrrd" --normals -o "$JOB_OUT") ;;
  mcmesh-slabs)  # 56x56x46: 200K gives z-slabs of 3 planes
    JOB_PROG=mcmesh JOB_OUT=iso.ply
    JOB_ARGS=("$GT_TD/mc/bunny_dist.nrrd" --normals --max-gpu-mem 200K -o "$JOB_OUT") ;;
  stpsfit)
    JOB_PROG=stpsfit JOB_OUT=w.tps
    JOB_ARGS=(--lambda gcv "$GT_IN/src.txt" "$GT_IN/dst.txt" -o "$JOB_OUT") ;;
  stpsfit-apply)
    JOB_PROG=stpsfit JOB_OUT=warped.ply
    JOB_ARGS=(--params "$GT_IN/w.tps" --apply "$GT_TD/tps/grid.ply" -o "$JOB_OUT") ;;
  stpsfit-volume)
    JOB_PROG=stpsfit JOB_OUT=warped.nrrd
    JOB_ARGS=(--params "$GT_IN/w.tps" --apply-volume "$GT_TD/mc/sphere.nrrd" -o "$JOB_OUT") ;;
  *) echo "FAIL: no job '$1'"; return 1 ;;
  esac
  JOB_ARGS+=("${dev[@]}")
}

gt_run() {
  local log=$1
  shift
  if [ "${GT_SANITIZE:-0}" = 1 ]; then
    GT_UNDER_SANITIZER=1 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
      --log-file "$log.san" "$@" >"$log.out" 2>"$log.err"
  else
    "$@" >"$log.out" 2>"$log.err"
  fi
}

gt_sanitizer_verdict() {
  local log=$1 rc=$2
  [ "${GT_SANITIZE:-0}" = 1 ] || return 0
  if [ "$rc" = 99 ] || ! grep -q "ERROR SUMMARY: 0 errors" "$log.san" 2>/dev/null; then
    echo "compute-sanitizer found errors (rc $rc): $(grep -m1 -E 'ERROR SUMMARY|LEAK SUMMARY' "$log.san" 2>/dev/null)"
    grep -v "Host Frame" "$log.san" 2>/dev/null | head -30 | sed 's/^/      /'
  fi
}
