#!/usr/bin/env bash
# CLI tests of poissonrec: usage, input errors (exit codes, messages, no output
# file left behind) and a real run on the bunny points.
# Usage: cli_poissonrec.sh PATH/TO/poissonrec
set -u
prog=$1
td=${GT_TESTDATA:-testdata}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # name expected_rc actual_rc
  if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, expected $2"; cat "$tmp/err" 2>/dev/null; fails=$((fails+1)); else echo "ok   $1"; fi
}
has() { # name file pattern
  if grep -q -- "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: '$3' not in $2"; cat "$2"; fails=$((fails+1)); fi
}
absent() { if [ -e "$2" ]; then echo "FAIL $1: $2 exists"; fails=$((fails+1)); else echo "ok   $1"; fi; }

# ascii PLY of points on a sphere (awk), optional header tweaks
sphere() { # n file [props]
  awk -v n="$1" -v props="${3:-xyzn}" 'BEGIN{srand(3); print "ply\nformat ascii 1.0\nelement vertex " n;
    print "property float x\nproperty float y\nproperty float z";
    if (props=="xyzn") print "property float nx\nproperty float ny\nproperty float nz";
    print "end_header";
    for(i=0;i<n;i++){z=2*rand()-1; p=6.2831853*rand(); s=sqrt(1-z*z); x=s*cos(p); y=s*sin(p);
      if (props=="xyzn") print x, y, z, x, y, z; else print x, y, z}}' > "$2"
}

"$prog" --help > "$tmp/out" 2> "$tmp/err"; check help 0 $?
has help-options "$tmp/out" "--point-weight"
has help-trim "$tmp/out" "--trim"
"$prog" > /dev/null 2> "$tmp/err"; check no-args 2 $?
has no-args-msg "$tmp/err" "poissonrec: error:"
"$prog" --depth 13 x.ply -o "$tmp/o.ply" 2> "$tmp/err"; check bad-depth 2 $?
has bad-depth-msg "$tmp/err" "depth"
"$prog" --solver foo x.ply -o "$tmp/o.ply" 2> "$tmp/err"; check bad-solver 2 $?
"$prog" "$tmp/missing.ply" -o "$tmp/o.ply" 2> "$tmp/err"; check missing-file 1 $?
absent missing-file-no-output "$tmp/o.ply"

sphere 500 "$tmp/nonormals.ply" xyz
"$prog" --device cpu "$tmp/nonormals.ply" -o "$tmp/o.ply" 2> "$tmp/err"; check no-normals 3 $?
has no-normals-names "$tmp/err" "nx"
has no-normals-says "$tmp/err" "normals"
absent no-normals-no-output "$tmp/o.ply"

sphere 5 "$tmp/few.ply"
"$prog" --device cpu "$tmp/few.ply" -o "$tmp/o.ply" 2> "$tmp/err"; check too-few 3 $?
has too-few-msg "$tmp/err" "too few"
absent too-few-no-output "$tmp/o.ply"

# coplanar: z = 0.3 x
awk 'BEGIN{srand(4); print "ply\nformat ascii 1.0\nelement vertex 300\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nend_header";
  for(i=0;i<300;i++){x=rand(); y=rand(); print x, y, 0.3*x, -0.3, 0, 1}}' > "$tmp/plane.ply"
"$prog" --device cpu "$tmp/plane.ply" -o "$tmp/o.ply" 2> "$tmp/err"; check coplanar 3 $?
has coplanar-msg "$tmp/err" "coplanar"

# a NaN point is bad data, named by its vertex (issue 14); no output
sphere 2000 "$tmp/s.ply"
sed -i '12s/.*/nan 0 0 1 0 0/' "$tmp/s.ply"
"$prog" --device cpu -d 4 "$tmp/s.ply" -o "$tmp/s_out.ply" 2> "$tmp/err"; check nan-refused 3 $?
has nan-msg "$tmp/err" "vertex 1 (of 2000, counting from 0) has x = nan"
absent nan-no-output "$tmp/s_out.ply"
# zero normals are skipped and counted
sphere 2000 "$tmp/s.ply"
sed -i '13s/.*/0 0 0 0 0 0/' "$tmp/s.ply"
"$prog" --device cpu -d 4 "$tmp/s.ply" -o "$tmp/s_out.ply" 2> "$tmp/err"; check zero-ok 0 $?
has zero-warn "$tmp/err" "skipped 1 points with zero normals"
has zero-out-faces "$tmp/s_out.ply" "element face"

# --residual: the finest level goes on to the residual asked for, the level
# below it to a 30th of it (-v prints each level's iterations and
# residual); out of range is a usage error. The points are dense enough for
# depth 6, so that its functions are in the solve (2000 splat above it).
"$prog" --residual 0 "$tmp/s.ply" -o "$tmp/r.ply" 2> "$tmp/err"; check bad-residual 2 $?
has bad-residual-msg "$tmp/err" "residual"
lvl() { grep "solve: level $2," "$1" | sed 's/.*: \([0-9]*\) CG iterations, residual \([0-9.e+-]*\) .*/\1 \2/'; }
sphere 30000 "$tmp/s30k.ply"
"$prog" --device cpu -v -d 6 "$tmp/s30k.ply" -o "$tmp/r.ply" 2> "$tmp/err1"; check residual-default 0 $?
"$prog" --device cpu -v -d 6 --residual 1e-9 "$tmp/s30k.ply" -o "$tmp/r.ply" 2> "$tmp/err2"; check residual-tight 0 $?
if lvl "$tmp/err1" 6 | awk '{exit !($1 >= 24 && $1 <= 96 && $2 <= 3e-5)}' &&
   lvl "$tmp/err1" 5 | awk '{exit !($1 >= 48 && $1 <= 192 && $2 <= 1e-6)}' &&
   lvl "$tmp/err2" 6 | awk '{exit !($1 <= 96 && $2 <= 1e-9)}' &&
   lvl "$tmp/err2" 5 | awk '{exit !($1 > 48 && $1 <= 192 && $2 <= 1e-9 / 30)}' &&
   [ "$(lvl "$tmp/err2" 6 | cut -d' ' -f1)" -gt "$(lvl "$tmp/err1" 6 | cut -d' ' -f1)" ]; then
  echo "ok   residual-stop ($(lvl "$tmp/err1" 5), $(lvl "$tmp/err1" 6) / $(lvl "$tmp/err2" 5), $(lvl "$tmp/err2" 6))"
else echo "FAIL residual-stop: '$(lvl "$tmp/err1" 5)', '$(lvl "$tmp/err1" 6)' / '$(lvl "$tmp/err2" 5)', '$(lvl "$tmp/err2" 6)'"; fails=$((fails+1)); fi

# the bunny, with density, timings and trimming
"$prog" --device cpu -d 5 --density --timings "$td/poisson/bunny_8k.ply" -o "$tmp/b.ply" 2> "$tmp/err"; check bunny 0 $?
has bunny-density "$tmp/b.ply" "property float density"
has bunny-timings "$tmp/err" "solve"
"$prog" --device cpu -d 5 --trim 0.2 -q "$td/poisson/bunny_8k.ply" -o "$tmp/bt.ply" 2> "$tmp/err"; check trim 0 $?
nf() { grep -a -m1 "element face" "$1" | awk '{print $3}'; }
if [ "$(nf "$tmp/bt.ply")" -lt "$(nf "$tmp/b.ply")" ]; then echo "ok   trim-fewer-faces"; else echo "FAIL trim-fewer-faces"; fails=$((fails+1)); fi
"$prog" --device cpu -d 5 --volume "$tmp/chi.nrrd" --volume-depth 4 -q "$td/poisson/bunny_8k.ply" -o "$tmp/bv.ply" 2> "$tmp/err"; check volume 0 $?
has volume-sizes "$tmp/chi.nrrd" "16 16 16"
has volume-iso "$tmp/chi.nrrd" "iso:="

# the volume is what mcmesh reads: it meshes chi at the iso in the file
mc="${GT_BUILD_DIR:-}/tools/mcmesh"
if [ -x "$mc" ]; then
  "$mc" --device cpu "$tmp/chi.nrrd" -o "$tmp/mc.ply" 2> "$tmp/err"; check mcmesh-reads-volume 0 $?
  if [ "$(nf "$tmp/mc.ply")" -gt 0 ]; then echo "ok   mcmesh-faces"; else echo "FAIL mcmesh-faces"; fails=$((fails+1)); fi
fi

# colours: points red on x > 0, blue elsewhere -> vertices carry them
awk 'BEGIN{srand(5); print "ply\nformat ascii 1.0\nelement vertex 3000\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header";
  for(i=0;i<3000;i++){z=2*rand()-1; p=6.2831853*rand(); s=sqrt(1-z*z); x=s*cos(p); y=s*sin(p);
    if (x > 0) c="255 0 0"; else c="0 0 255"; print x, y, z, x, y, z, c}}' > "$tmp/col.ply"
"$prog" --device cpu -d 4 --colors "$tmp/col.ply" -o "$tmp/col_out.ply" 2> "$tmp/err"; check colors 0 $?
has colors-red "$tmp/col_out.ply" "property float red"
"$prog" --device cpu -d 4 --colors "$tmp/s.ply" -o "$tmp/col2.ply" 2> "$tmp/err"; check colors-missing 3 $?
has colors-missing-msg "$tmp/err" "red"

# PoissonRecon's text points (x y z nx ny nz per line, .npts): the same mesh as
# the same points in a PLY; a line without normals is refused
awk 'BEGIN{srand(7); print "ply\nformat ascii 1.0\nelement vertex 2000\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nend_header";
  for(i=0;i<2000;i++){z=2*rand()-1; p=6.2831853*rand(); s=sqrt(1-z*z); printf "%.6f %.6f %.6f %.6f %.6f %.6f\n", s*cos(p), s*sin(p), z, s*cos(p), s*sin(p), z}}' > "$tmp/t.ply"
sed '1,/end_header/d' "$tmp/t.ply" > "$tmp/t.npts"
"$prog" --device cpu -d 5 "$tmp/t.ply" -o "$tmp/t_ply.ply" 2> "$tmp/err"; check npts-ply 0 $?
"$prog" --device cpu -d 5 "$tmp/t.npts" -o "$tmp/t_txt.ply" 2> "$tmp/err"; check npts-text 0 $?
if cmp -s "$tmp/t_ply.ply" "$tmp/t_txt.ply"; then echo "ok   npts-same-mesh"; else echo "FAIL npts-same-mesh"; fails=$((fails+1)); fi
"$prog" --device cpu -d 5 - -o "$tmp/t_in.ply" < "$tmp/t.npts" 2> "$tmp/err"; check npts-stdin 0 $?
if cmp -s "$tmp/t_ply.ply" "$tmp/t_in.ply"; then echo "ok   npts-stdin-same-mesh"; else echo "FAIL npts-stdin-same-mesh"; fails=$((fails+1)); fi
awk '{print $1, $2, $3}' "$tmp/t.npts" > "$tmp/xyz.txt"
"$prog" --device cpu -d 5 "$tmp/xyz.txt" -o "$tmp/x.ply" 2> "$tmp/err"; check npts-no-normals 3 $?
has npts-no-normals-msg "$tmp/err" "expected 6 or 9 numbers per line"
absent npts-no-normals-no-output "$tmp/x.ply"

# points thinning out 20-fold across a sphere (-x sparse): the default mesh is
# cut from depth D-1 cells on the sparse side, --uniform-mesh from every
# depth-D cell; both closed (euler 2 is checked in test_adapt), the default
# with fewer vertices
awk 'BEGIN{srand(9); print "ply\nformat ascii 1.0\nelement vertex 6000\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nend_header";
  n=0; while(n<6000){z=2*rand()-1; p=6.2831853*rand(); s=sqrt(1-z*z); x=s*cos(p); y=s*sin(p);
    if (rand() > exp(log(20)*(x-1)/2)) continue; print x, y, z, x, y, z; n++}}' > "$tmp/uneven.ply"
"$prog" --device cpu -d 6 "$tmp/uneven.ply" -o "$tmp/ua.ply" 2> "$tmp/err"; check uneven-default 0 $?
"$prog" --device cpu -d 6 --uniform-mesh "$tmp/uneven.ply" -o "$tmp/uu.ply" 2> "$tmp/err"; check uneven-uniform 0 $?
va=$(grep -a -m1 "element vertex" "$tmp/ua.ply" | awk '{print $3}')
vu=$(grep -a -m1 "element vertex" "$tmp/uu.ply" | awk '{print $3}')
if [ -n "$va" ] && [ -n "$vu" ] && [ "$va" -gt 0 ] && [ $((va * 10)) -lt $((vu * 9)) ]; then
  echo "ok   uneven-fewer-vertices ($va < $vu)"
else
  echo "FAIL uneven-fewer-vertices: default $va, --uniform-mesh $vu"; fails=$((fails+1))
fi
has help-uniform-mesh <("$prog" --help) "--uniform-mesh"
# up to 3 levels coarser (depth 7, full depth 4, 2500 points): fewer vertices still
head -n 2510 "$tmp/uneven.ply" | sed 's/element vertex 6000/element vertex 2500/' > "$tmp/uneven2k.ply"
"$prog" --device cpu -d 7 --full-depth 4 --coarse-levels 1 "$tmp/uneven2k.ply" -o "$tmp/u1.ply" 2> "$tmp/err"; check uneven-coarse1 0 $?
"$prog" --device cpu -d 7 --full-depth 4 --coarse-levels 3 "$tmp/uneven2k.ply" -o "$tmp/u3.ply" 2> "$tmp/err"; check uneven-coarse3 0 $?
v1=$(grep -a -m1 "element vertex" "$tmp/u1.ply" | awk '{print $3}')
v3=$(grep -a -m1 "element vertex" "$tmp/u3.ply" | awk '{print $3}')
if [ -n "$v3" ] && [ -n "$v1" ] && [ "$v3" -gt 0 ] && [ $((v3 * 10)) -lt $((v1 * 9)) ]; then echo "ok   coarse-levels-3-fewer ($v3 < $v1)"
else echo "FAIL coarse-levels-3-fewer: $v3, one level $v1"; fails=$((fails+1)); fi
# auto (the default) on these points, sparse for depth 7: -v says it takes
# every level, and the mesh is --coarse-levels 12's
"$prog" --device cpu -v -d 7 --full-depth 4 "$tmp/uneven2k.ply" -o "$tmp/ua.ply" 2> "$tmp/err"; check coarse-auto 0 $?
has coarse-auto-msg "$tmp/err" "coarse-levels 12$"
"$prog" --device cpu -d 7 --full-depth 4 --coarse-levels auto "$tmp/uneven2k.ply" -o "$tmp/ub.ply" 2> "$tmp/err"; check coarse-auto-named 0 $?
"$prog" --device cpu -d 7 --full-depth 4 --coarse-levels 12 "$tmp/uneven2k.ply" -o "$tmp/uc.ply" 2> "$tmp/err"; check coarse-12 0 $?
if cmp -s "$tmp/ua.ply" "$tmp/ub.ply" && cmp -s "$tmp/ua.ply" "$tmp/uc.ply"; then echo "ok   coarse-auto-is-12"
else echo "FAIL coarse-auto-is-12"; fails=$((fails+1)); fi
# dense points (30,000 on the sphere at depth 5): auto takes one level
"$prog" --device cpu -v -d 5 "$tmp/s30k.ply" -o "$tmp/ud.ply" 2> "$tmp/err"; check coarse-auto-dense 0 $?
has coarse-auto-dense-msg "$tmp/err" "coarse-levels 1$"
"$prog" --device cpu -d 6 --coarse-levels some "$tmp/uneven.ply" -o "$tmp/ux.ply" 2> "$tmp/err"; check coarse-levels-word 2 $?
has coarse-levels-word-msg "$tmp/err" "expected auto or an integer 0..12"
absent coarse-levels-word-no-output "$tmp/ux.ply"
# --dense-solve keeps the depth-D functions the default leaves out (-v: the
# finest level's CG runs), and gives a closed mesh too
"$prog" --device cpu -v -d 7 --full-depth 4 --dense-solve "$tmp/uneven2k.ply" -o "$tmp/uds.ply" 2> "$tmp/err"; check dense-solve 0 $?
has dense-solve-faces "$tmp/uds.ply" "element face"
has help-dense-solve <("$prog" --help) "--dense-solve"
"$prog" --device cpu -d 6 --coarse-levels -1 "$tmp/uneven.ply" -o "$tmp/ux.ply" 2> "$tmp/err"; check coarse-levels-negative 2 $?
absent coarse-levels-negative-no-output "$tmp/ux.ply"

# far from the origin (a sphere at x = 1e6, where floats lie 0.0625 apart,
# 7 depth-8 cells). Given as text digits (this ascii PLY) or float64 the
# points keep their detail: read relative to the first point, the mesh
# written in double, as close to its sphere as the sphere at the origin's
# mesh is to its own, and no warning. Given as float32 (binary) the file
# itself is coarse: a warning that says so, and the mesh still written.
sphere 2000 "$tmp/near.ply"
awk '/end_header/{h=1; print; next} !h{print; next} {$1 = sprintf("%.7f", $1 + 1e6); print}' "$tmp/near.ply" > "$tmp/far.ply"
"$prog" --device cpu -d 8 "$tmp/far.ply" -o "$tmp/far_o.ply" 2> "$tmp/err"; check far-origin 0 $?
if grep -q "far from the origin" "$tmp/err"; then echo "FAIL far-origin: warned"; cat "$tmp/err"; fails=$((fails+1)); else echo "ok   far-origin-quiet"; fi
has far-origin-double "$tmp/far_o.ply" "property double x"
"$prog" --device cpu -d 8 "$tmp/near.ply" -o "$tmp/near_o.ply" 2> "$tmp/err"; check near-origin 0 $?
if grep -q "far from the origin" "$tmp/err"; then echo "FAIL near-origin: warned"; fails=$((fails+1)); else echo "ok   near-origin-quiet"; fi
has near-origin-float "$tmp/near_o.ply" "property float x"
if command -v python3 > /dev/null; then
  # the largest distance of a mesh's vertices from its unit sphere
  sphere_err() { # mesh.ply centre_x
    python3 - "$1" "$2" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
h = b[:b.index(b"end_header\n") + 11].decode()
nv = int(h.split("element vertex ")[1].split()[0])
d = "property double x" in h
rec, fmt = (24, "<3d") if d else (12, "<3f")
cx, off, e = float(sys.argv[2]), len(h), 0.0
for i in range(nv):
    x, y, z = struct.unpack_from(fmt, b, off + rec * i)
    e = max(e, abs(((x - cx) ** 2 + y * y + z * z) ** 0.5 - 1.0))
print("%.6g" % e)
PY
  }
  en=$(sphere_err "$tmp/near_o.ply" 0); ef=$(sphere_err "$tmp/far_o.ply" 1e6)
  if awk -v n="$en" -v f="$ef" 'BEGIN{exit !(f <= 1.5 * n + 1e-4)}'; then echo "ok   far-origin-detail ($ef vs $en at the origin)"
  else echo "FAIL far-origin-detail: the far mesh is $ef from its sphere, the near one $en"; fails=$((fails+1)); fi
  python3 - "$tmp/near.ply" "$tmp/far32.ply" <<'PY'
import struct, sys
lines = open(sys.argv[1]).read().split("\n")
e = lines.index("end_header")
rows = [list(map(float, l.split())) for l in lines[e + 1:] if l.strip()]
hdr = "\n".join(l.replace("ascii", "binary_little_endian") for l in lines[:e + 1]) + "\n"
with open(sys.argv[2], "wb") as f:
    f.write(hdr.encode())
    for r in rows:
        f.write(struct.pack("<6f", r[0] + 1e6, *r[1:6]))
PY
  "$prog" --device cpu -d 8 "$tmp/far32.ply" -o "$tmp/far32_o.ply" 2> "$tmp/err"; check far-origin-float32 0 $?
  has far-origin-float32-msg "$tmp/err" "far from the origin"
  has far-origin-float32-mesh "$tmp/far32_o.ply" "element face"
fi

# --device cuda without a GPU: exit 4
if [ -n "${GT_NO_GPU:-}" ] || ! nvidia-smi > /dev/null 2>&1; then
  GT_NO_GPU=1 "$prog" --device cuda -d 4 "$tmp/s.ply" -o "$tmp/g.ply" 2> "$tmp/err"; check no-gpu 4 $?
  absent no-gpu-no-output "$tmp/g.ply"
fi
[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
echo "all passed"
