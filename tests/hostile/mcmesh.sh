#!/bin/bash
# Hostile inputs for mcmesh (see lib.sh and README.md).
. "$(dirname "$0")/lib.sh"
hostile_init "${1:-}"
M=("$PROG" --device cpu -q)
cp "$TD/mc/sphere.nrrd" "$W/v.nrrd"
cp "$TD/mc/blobs_24x20x16.u8.raw" "$W/b.raw"
cp "$TD/io/volume/detached.nhdr" "$TD/io/volume/detached.raw" "$W/"
RAW=(--dims 24,20,16 --type uint8 --iso 100)
nrrd() { # file type sizes [extra header lines...]: a header, then no data
    local f=$1 t=$2 sz=$3
    shift 3
    { printf 'NRRD0004\ntype: %s\ndimension: 3\nsizes: %s\nencoding: raw\nendian: little\n' "$t" "$sz"; [ $# -gt 0 ] && printf '%s\n' "$@"; echo; } > "$f"
}
nrrd "$W/lying.nrrd" float "1000 1000 1000"; head -c 4000 /dev/zero >> "$W/lying.nrrd"
nrrd "$W/isonan.nrrd" float "2 2 2" 'iso:=nan'; head -c 32 /dev/zero >> "$W/isonan.nrrd"
nrrd "$W/zero.nrrd" float "4 0 4"
nrrd "$W/overflow.nrrd" float "4294967296 4294967296 4294967296"
nrrd "$W/gone.nhdr" float "2 2 2" 'data file: gone.raw'
sed -i '$d' "$W/gone.nhdr" # a detached header ends without the blank line
printf 'NRRD0004\ntype: float\ndimension: 2\nsizes: 4 4\nencoding: raw\nendian: little\n\n' > "$W/dim2.nrrd"
python3 - "$W/gz.nrrd" <<'PY'
import gzip, sys
h = b'NRRD0004\ntype: float\ndimension: 3\nsizes: 1000 1000 1000\nendian: little\nencoding: gzip\niso:=0.5\n\n'
open(sys.argv[1], 'wb').write(h + gzip.compress(b'\0' * 4000))
PY
sed '1s/NRRD0004/NRRD0009/' "$W/v.nrrd" > "$W/badmagic.nrrd"
head -c 3000 "$W/v.nrrd" > "$W/trunc.nrrd"
head -c 1000 "$W/b.raw" > "$W/short.raw"
head -c 2097152 /dev/zero > "$W/zeros2m.raw"
: > "$W/empty.raw"
mkdir "$W/outdir"

# the issue's data-losing command, and its other spellings
same_file_cases out-is-volume "$W/v.nrrd" "the volume" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 -o @OUT@
run_case out-is-raw-input 2 "b.raw' is the same file as the input" -- "${M[@]}" "$W/b.raw" "${RAW[@]}" -o "$W/b.raw" --out-format ply
run_case out-is-detached-data-file 2 "detached.raw' is the same file as the input '$W/detached.raw' \(the NRRD's data file\)" -- "${M[@]}" "$W/detached.nhdr" --iso 1 -o "$W/detached.raw" --out-format ply
run_case stdin-is-output 2 "same file as the input on standard input" --stdin "$W/v.nrrd" -- "${M[@]}" - --iso 0.5 -o "$W/v.nrrd"
run_case stdout-appends-to-volume 2 "standard output\) is the same file as the input '$W/v.nrrd'" --stdout-append "$W/v.nrrd" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 -o -
# where the output goes
run_case out-missing-directory 1 "cannot write '$W/no/such/m.ply'.*does not exist" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 -o "$W/no/such/m.ply"
run_case out-is-a-directory 2 "outdir' is a directory" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 -o "$W/outdir"
run_case out-extension-nrrd 2 "m.nrrd': the name says a NRRD volume, but mcmesh writes a PLY file.*--out-format ply" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 -o "$W/m.nrrd"
run_case stdout-closed 1 "write error on ('-'|standard output)" --stdout-closed -- "${M[@]}" "$W/v.nrrd" --iso 0.5 -o -
# options
run_case output-twice 2 "-o given twice" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 -o "$W/a.ply" -o "$W/b.ply"
run_case out-format-unknown 2 "invalid value 'obj' for --out-format" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 --out-format obj -o "$W/m.ply"
run_case dims-zero 2 "--dims" -- "${M[@]}" "$W/b.raw" --dims 24,0,16 --type uint8 --iso 1 -o "$W/m.ply"
run_case type-unknown 2 "unknown voxel type 'float16'" -- "${M[@]}" "$W/b.raw" --dims 24,20,16 --type float16 --iso 1 -o "$W/m.ply"
run_case raw-without-iso 2 "no iso value" -- "${M[@]}" "$W/b.raw" --dims 24,20,16 --type uint8 -o "$W/m.ply"
run_case max-gpu-mem-garbage 2 "'lots' is not a size" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 --max-gpu-mem lots -o "$W/m.ply"
# paths that cannot be read
run_case missing-volume 1 "cannot open '$W/nope.nrrd'" -- "${M[@]}" "$W/nope.nrrd" --iso 0.5 -o "$W/m.ply"
run_case volume-is-a-directory 1 "it is a directory" -- "${M[@]}" "$W/outdir" --iso 0.5 -o "$W/m.ply"
U=$(unreadable_input "$W/v.nrrd")
run_case unreadable-volume 1 "cannot (open|read) '$U'" -- "${M[@]}" "$U" --iso 0.5 -o "$W/m.ply"
run_case detached-data-file-missing 3 "NRRD data file: cannot open '$W/gone.raw': No such file.*gone.nhdr:7" -- "${M[@]}" "$W/gone.nhdr" --iso 1 -o "$W/m.ply"
# broken and lying volumes
run_case empty-raw-without-dims 2 "not a NRRD file: give --dims" -- "${M[@]}" "$W/empty.raw" --iso 1 -o "$W/m.ply"
run_case raw-shorter-than-dims 3 "volume data needs 7680 bytes \(24 x 20 x 16 uint8\), the file has 1000" -- "${M[@]}" "$W/short.raw" "${RAW[@]}" -o "$W/m.ply"
run_case raw-longer-than-dims 3 "more data than --dims/--type say \(3840 bytes.*the file has 7680" -- "${M[@]}" "$W/b.raw" --dims 24,20,8 --type uint8 --iso 100 -o "$W/m.ply"
run_case raw-huge-dims-on-pipe 3 "needs 40000000000000 bytes.*the stream has 1000 after the header" --stdin-pipe "$W/short.raw" -- "${M[@]}" - --dims 100000,100000,1000 --type float32 --iso 1 -o "$W/m.ply"
run_case raw-pipe-ends-past-first-mib 3 "ends after 2097152 of the 8388608 bytes" --stdin-pipe "$W/zeros2m.raw" -- "${M[@]}" - --dims 512,512,8 --type float32 --iso 1 -o "$W/m.ply"
run_case wrong-magic 3 "not a NRRD file \(expected NRRD0001..NRRD0005 on the first line\).*badmagic.nrrd:1" -- "${M[@]}" "$W/badmagic.nrrd" --iso 0.5 -o "$W/m.ply"
run_case nrrd-truncated 3 "volume data needs [0-9]+ bytes.*the file has [0-9]+ after the header" -- "${M[@]}" "$W/trunc.nrrd" --iso 0.5 -o "$W/m.ply"
run_case nrrd-lying-sizes 3 "needs 4000000000 bytes \(1000 x 1000 x 1000 float32\), the file has 4000" -- "${M[@]}" "$W/lying.nrrd" --iso 0.5 -o "$W/m.ply"
run_case nrrd-gzip-lying-sizes 3 "more than the [0-9]+ bytes of gzip data can hold" -- "${M[@]}" "$W/gz.nrrd" -o "$W/m.ply"
run_case nrrd-gzip-lying-sizes-on-pipe 3 "more than the [0-9]+ bytes of gzip data can hold.*<stdin>" --stdin-pipe "$W/gz.nrrd" -- "${M[@]}" - -o "$W/m.ply"
run_case nrrd-zero-size 3 "size 0 along axis 1 must be positive" -- "${M[@]}" "$W/zero.nrrd" --iso 0.5 -o "$W/m.ply"
run_case nrrd-sizes-overflow 3 "overflow" -- "${M[@]}" "$W/overflow.nrrd" --iso 0.5 -o "$W/m.ply"
run_case nrrd-dimension-2 3 "dimension 3, not 2" -- "${M[@]}" "$W/dim2.nrrd" --iso 0.5 -o "$W/m.ply"
run_case nrrd-iso-key-nan 3 "iso key .* is not a finite number" -- "${M[@]}" "$W/isonan.nrrd" -o "$W/m.ply"
# a named pipe as the output is written in place, not replaced
mkfifo "$W/out.fifo"
cat "$W/out.fifo" > "$T/fifo.got" &
run_case out-is-a-fifo 0 "" -- "${M[@]}" "$W/v.nrrd" --iso 0.5 -o "$W/out.fifo"
wait
if head -c 3 "$T/fifo.got" | grep -q ply; then echo "ok   out-is-a-fifo: the mesh came through the pipe"
else echo "FAIL out-is-a-fifo: nothing came through the pipe"; F=$((F + 1)); fi
hostile_finish
