#!/usr/bin/env bash
# Which CUDA libraries each program loads (issue 18 item 2), seen through the
# dynamic loader's own log (LD_DEBUG=files names every library mapped or
# dlopen'ed, also one that is not found), and GT_STARTUP_TRACE's milestones.
#   cli_cuda_libs.sh DEVICE_PROBE cuda|nocuda     (GT_BUILD_DIR, GT_TESTDATA set)
#  - every program with --device cpu: no libcuda, cuBLAS, cuSOLVER, cuSPARSE
#  - GT_STARTUP_TRACE=1: the milestones in order on stderr, none of the GPU's
#  - CUDA build: a small plain stpsfit fit under --device auto stays on the
#    CPU and loads no CUDA library; the GCV fit under --device auto does
#    reach for libcuda (the check can fail)
#  - with a GPU: the stpsfit GCV fit loads cuSOLVER (its eigen-decomposition);
#    the plain fit (its own Cholesky), mcmesh and stpsfit --apply load no
#    cuBLAS/cuSOLVER/cuSPARSE; without one, the fit's fallback to the CPU
#    opens neither
set -u
probe=$1 build_kind=$2
B=$GT_BUILD_DIR/tools TD=$GT_TESTDATA
. "$(dirname "$0")/../lib/checks.sh"
# the libraries named by the loader's log of running "$@"; a run that fails,
# or a log that does not name libc (no log: the check would see nothing),
# is a failure of its own
libs_of() {
  LD_DEBUG=files "$@" 2> "$T/ld" > /dev/null || { bad "$* exit $?: $(tail -3 "$T/ld")" >&2; return; }
  grep -q 'file=libc\.so' "$T/ld" || bad "$*: LD_DEBUG=files gave no log" >&2
  grep -oE 'file=lib[A-Za-z0-9_+.-]+' "$T/ld" | sort -u
}
cuda_libs='file=lib(cuda|cublas|cublasLt|cusolver|cusparse)\.so'

head -c $((320 * 240 * 2)) /dev/zero > "$T/a.yuv"
declare -A cmd=(
  [stpsfit]="$B/stpsfit $TD/tps/src.txt $TD/tps/dst.txt -o $T/p.txt"
  [stpsfit-apply]="$B/stpsfit --params $T/p.txt --apply $TD/tps/grid.ply -o $T/g.ply"
  [mcmesh]="$B/mcmesh --iso 0 $TD/mc/sphere.nrrd -o $T/s.ply"
  [poissonrec]="$B/poissonrec -d 4 -q $TD/poisson/bunny_8k.ply -o $T/b.ply"
  [sparsesolve]="$B/sparsesolve $TD/sparse/poisson4009_sub1000.mtx -o $T/x.mtx"
  [gsrender]="$B/gsrender $TD/gs/scene.ply --eye 0,1,-6 --target 0,0,0 --size 64x48 -o $T/a.png"
  [yuvstitch]="$B/yuvstitch --rig $TD/stitch/rig2.txt --size 320x240 --pix-fmt yuyv422 $T/a.yuv $T/a.yuv -o $T/o.yuv"
)
for name in stpsfit stpsfit-apply mcmesh poissonrec sparsesolve gsrender yuvstitch; do
  # shellcheck disable=SC2086
  libs_of ${cmd[$name]} --device cpu > "$T/libs"
  found=$(grep -E "$cuda_libs" "$T/libs")
  [ -z "$found" ] && ok "$name --device cpu loads no CUDA library" || bad "$name --device cpu loaded: $found"
  # shellcheck disable=SC2086
  GT_STARTUP_TRACE=1 ${cmd[$name]} --device cpu 2> "$T/trace" > /dev/null; rc=$?
  [ $rc -eq 0 ] || bad "$name --device cpu exit $rc: $(cat "$T/trace")"
  order=$(grep -oE 'startup: +[0-9.]+ ms (main entry|input read|device chosen: cpu|output written)' "$T/trace" |
          sed -E 's/startup: +[0-9.]+ ms //' | tr '\n' ,)
  case $order in
    "main entry,input read,device chosen: cpu,output written,"|"main entry,device chosen: cpu,input read,output written,")
      ok "$name: trace in order ($order)";;
    *) bad "$name: trace milestones '$order' in: $(cat "$T/trace")";;
  esac
  # times since exec never go back
  awk '/startup:/ { t = $3 + 0; if (t < last) exit 1; last = t }' "$T/trace" &&
    ok "$name: trace times increase" || bad "$name: trace times go back: $(cat "$T/trace")"
  ! grep -qE 'context ready|libs loaded|kernels warmed' "$T/trace" && ok "$name: no GPU milestone on the CPU" ||
    bad "$name: GPU milestone with --device cpu: $(cat "$T/trace")"
done
out=$("$B/stpsfit" --device cpu "$TD/tps/src.txt" "$TD/tps/dst.txt" -o "$T/p.txt" 2>&1)
[ -z "$out" ] && ok "no trace without GT_STARTUP_TRACE" || bad "output without GT_STARTUP_TRACE: $out"

if [ "$build_kind" = cuda ]; then
  # a plain fit this small runs on the CPU under --device auto, GPU or not
  # (the CPU ends it before CUDA would have started): no CUDA library at all
  libs_of "$B/stpsfit" --device auto -q "$TD/tps/src.txt" "$TD/tps/dst.txt" -o "$T/p1.txt" > "$T/libs"
  found=$(grep -E "$cuda_libs" "$T/libs")
  [ -z "$found" ] && ok "a small plain fit under --device auto loads no CUDA library" ||
    bad "a small plain fit under --device auto loaded: $found"
  "$B/stpsfit" --device auto -v "$TD/tps/src.txt" "$TD/tps/dst.txt" -o "$T/p1.txt" 2> "$T/v" > /dev/null
  grep -q "the CPU fits .* points in about .* ms" "$T/v" && ok "-v says why the CPU fits it" ||
    bad "-v does not say why the CPU fits it: $(cat "$T/v")"
  # the control: the same check sees the runtime reach for the driver (the
  # GCV fit is not a small one)
  libs_of "$B/stpsfit" --device auto -q -l gcv "$TD/tps/src.txt" "$TD/tps/dst.txt" -o "$T/p2.txt" > "$T/libs"
  found=$(grep -E 'file=libcuda\.so' "$T/libs")
  [ -n "$found" ] && ok "--device auto reaches for libcuda ($found)" || bad "--device auto: no libcuda in the loader's log"
  if "$probe" --device cuda > /dev/null 2>&1; then
    libs_of "$B/stpsfit" --device cuda -l gcv "$TD/tps/src.txt" "$TD/tps/dst.txt" -o "$T/p3.txt" > "$T/libs"
    found=$(cat "$T/libs")
    grep -q 'file=libcusolver\.so' <<< "$found" && ok "the GPU's GCV fit opens cuSOLVER" ||
      bad "the GPU's GCV fit: no cuSOLVER in: $found"
    for name in stpsfit mcmesh stpsfit-apply; do
      # shellcheck disable=SC2086
      libs_of ${cmd[$name]} --device cuda > "$T/libs"
      found=$(grep -E 'file=lib(cublas|cublasLt|cusolver|cusparse)\.so' "$T/libs")
      [ -z "$found" ] && ok "$name --device cuda loads no cuBLAS/cuSOLVER/cuSPARSE" || bad "$name --device cuda loaded: $found"
    done
  else
    # the fallback to the CPU must not wait for libraries it will not use
    found=$(grep -E 'file=lib(cublas|cublasLt|cusolver|cusparse)\.so' "$T/libs")
    [ -z "$found" ] && ok "no GPU: --device auto opens no cuBLAS/cuSOLVER" || bad "no GPU: --device auto loaded: $found"
    echo "skip: no GPU for the --device cuda checks"
  fi
fi
exit $fail
