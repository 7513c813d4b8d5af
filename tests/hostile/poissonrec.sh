#!/bin/bash
# Hostile inputs for poissonrec (see lib.sh and README.md).
. "$(dirname "$0")/lib.sh"
hostile_init "${1:-}"
R=("$PROG" --device cpu -q -d 4)
cp "$TD/poisson/bunny_8k.ply" "$W/pts.ply"
# ascii point sets: n points on a sphere; props xyzn or xyz
sphere() { # n file [props] [normal scale]
    awk -v n="$1" -v props="${3:-xyzn}" -v ns="${4:-1}" 'BEGIN{srand(3); print "ply\nformat ascii 1.0\nelement vertex " n;
      print "property float x\nproperty float y\nproperty float z";
      if (props=="xyzn") print "property float nx\nproperty float ny\nproperty float nz";
      print "end_header";
      for(i=0;i<n;i++){z=2*rand()-1; p=6.2831853*rand(); s=sqrt(1-z*z); x=s*cos(p); y=s*sin(p);
        if (props=="xyzn") print x, y, z, ns*x, ns*y, ns*z; else print x, y, z}}' > "$2"
}
sphere 500 "$W/s.ply"
sphere 500 "$W/nonormals.ply" xyz
sphere 500 "$W/zeronormals.ply" xyzn 0
sphere 10 "$W/ten.ply"
sphere 0 "$W/none.ply"
sed '13s/.*/0.5 nan 0.1 0 0 1/' "$W/s.ply" > "$W/nan.ply"     # vertex 2
sed '20s/.*/0.5 0.5 0.1 0 inf 1/' "$W/s.ply" > "$W/inf.ply"   # vertex 9
awk 'NR<=10{print; next} {print $1, $2, 0, 0, 0, 1}' "$W/s.ply" > "$W/flat.ply"
python3 - "$W/pts.ply" "$W/binnan.ply" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
h = d.index(b'end_header\n') + len(b'end_header\n')
body = bytearray(d[h:])
struct.pack_into('<f', body, 4 * (6 * 4321 + 4), float('nan'))   # ny of vertex 4321
open(sys.argv[2], 'wb').write(d[:h] + bytes(body))
PY
{ sed -n '1,2p' "$W/s.ply"; echo "element vertex 500"; sed -n '4,9p' "$W/s.ply"; echo "element face 1"; echo "property list uchar int vertex_indices"; echo end_header; sed -n '11,510p' "$W/s.ply"; echo "3 0 1 999"; } > "$W/badface.ply"
head -c 100000 "$W/pts.ply" > "$W/trunc.ply"
sed '0,/element vertex 8000/s//element vertex 80000000/' "$W/pts.ply" > "$W/lying.ply"
: > "$W/empty.ply"
printf '%s\n' '%%MatrixMarket matrix coordinate real general' '1 1 1' '1 1 1' > "$W/matrix.ply"
mkdir "$W/outdir"

# an output never replaces an input
same_file_cases out-is-points "$W/pts.ply" "the points" -- "${R[@]}" "$W/pts.ply" -o @OUT@
run_case volume-is-points 2 "--volume '$W/soft.pts.ply' is the same file as the input" -- "${R[@]}" "$W/pts.ply" -o "$W/m.ply" --volume "$W/soft.pts.ply"
run_case out-and-volume-one-file 2 "-o '$W/m.nrrd' and --volume '$W/outdir/../m.nrrd' are the same file" -- "${R[@]}" "$W/pts.ply" -o "$W/m.nrrd" --out-format ply --volume "$W/outdir/../m.nrrd"
run_case stdin-is-output 2 "same file as the input on standard input" --stdin "$W/pts.ply" -- "${R[@]}" - -o "$W/pts.ply"
run_case stdout-appends-to-points 2 "standard output\) is the same file as the input '$W/pts.ply'" --stdout-append "$W/pts.ply" -- "${R[@]}" "$W/pts.ply" -o -
# where the outputs go
run_case out-missing-directory 1 "cannot write '$W/nodir/m.ply'.*does not exist" -- "${R[@]}" "$W/pts.ply" -o "$W/nodir/m.ply"
run_case volume-missing-directory 1 "cannot write '$W/nodir/chi.nrrd' \(--volume\)" -- "${R[@]}" "$W/pts.ply" -o "$W/m.ply" --volume "$W/nodir/chi.nrrd"
run_case out-is-a-directory 2 "outdir' is a directory" -- "${R[@]}" "$W/pts.ply" -o "$W/outdir"
run_case out-extension-nrrd 2 "m.nrrd': the name says a NRRD volume, but poissonrec writes a PLY file.*--out-format ply" -- "${R[@]}" "$W/pts.ply" -o "$W/m.nrrd"
run_case volume-extension-ply 2 "--volume '$W/chi.ply': the name says a PLY file, but poissonrec writes a NRRD volume there" -- "${R[@]}" "$W/pts.ply" -o "$W/m.ply" --volume "$W/chi.ply"
run_case stdout-closed 1 "write error on ('-'|standard output)" --stdout-closed -- "${R[@]}" "$W/s.ply" -o -
# options
run_case output-twice 2 "-o given twice" -- "${R[@]}" "$W/pts.ply" -o "$W/a.ply" -o "$W/b.ply"
run_case volume-twice 2 "--volume given twice" -- "${R[@]}" "$W/pts.ply" -o "$W/a.ply" --volume "$W/a.nrrd" --volume "$W/b.nrrd"
run_case depth-too-deep 2 "--depth" -- "${R[@]}" "$W/pts.ply" --depth 13 -o "$W/a.ply"
run_case trim-out-of-range 2 "--trim" -- "${R[@]}" "$W/pts.ply" --trim 1.5 -o "$W/a.ply"
run_case two-inputs 2 "one input file expected" -- "${R[@]}" "$W/pts.ply" "$W/s.ply" -o "$W/a.ply"
# paths that cannot be read
run_case missing-points 1 "cannot open '$W/nope.ply' \(the points\)" -- "${R[@]}" "$W/nope.ply" -o "$W/a.ply"
run_case points-is-a-directory 1 "it is a directory" -- "${R[@]}" "$W/outdir" -o "$W/a.ply"
U=$(unreadable_input "$W/s.ply")
run_case unreadable-points 1 "cannot (open|read) '$U'" -- "${R[@]}" "$U" -o "$W/a.ply"
# broken, lying and meaningless points
run_case empty-file 3 "not a PLY file.*empty.ply:1" -- "${R[@]}" "$W/empty.ply" -o "$W/a.ply"
run_case wrong-magic 3 "not a PLY file.*matrix.ply:1" -- "${R[@]}" "$W/matrix.ply" -o "$W/a.ply"
run_case truncated 3 "PLY header promises at least 192000 bytes of data, file has [0-9]+ after the header" -- "${R[@]}" "$W/trunc.ply" -o "$W/a.ply"
run_case lying-vertex-count 3 "promises at least 1920000000 bytes of data, file has 192000" -- "${R[@]}" "$W/lying.ply" -o "$W/a.ply"
run_case truncated-on-stdin 3 "file ends in element 'vertex' after [0-9]+ of 8000 records \(<stdin>" --stdin-pipe "$W/trunc.ply" -- "${R[@]}" - -o "$W/a.ply"
run_case face-index-out-of-range 3 "vertex index 999 out of range \[0, 500\).*badface.ply:513" -- "${R[@]}" "$W/badface.ply" -o "$W/a.ply"
run_case no-normals 3 "no normals.*nx" -- "${R[@]}" "$W/nonormals.ply" -o "$W/a.ply"
run_case nan-coordinate 3 "vertex 2 \(of 500, counting from 0\) has y = nan.*nan.ply" -- "${R[@]}" "$W/nan.ply" -o "$W/a.ply"
run_case inf-normal 3 "vertex 9 \(of 500, counting from 0\) has ny = inf" -- "${R[@]}" "$W/inf.ply" -o "$W/a.ply"
run_case nan-normal-binary 3 "vertex 4321 \(of 8000, counting from 0\) has ny = nan" -- "${R[@]}" "$W/binnan.ply" -o "$W/a.ply"
run_case all-normals-zero 3 "all 500 points have zero normals" -- "${R[@]}" "$W/zeronormals.ply" -o "$W/a.ply"
run_case ten-points 3 "too few usable points: 10 \(need at least 16" -- "${R[@]}" "$W/ten.ply" -o "$W/a.ply"
run_case no-points 3 "too few usable points: 0 \(need at least 16" -- "${R[@]}" "$W/none.ply" -o "$W/a.ply"
run_case coplanar 3 "coplanar" -- "${R[@]}" "$W/flat.ply" -o "$W/a.ply"
hostile_finish
