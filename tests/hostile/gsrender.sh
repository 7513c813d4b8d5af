#!/bin/bash
# Hostile inputs for gsrender (see lib.sh and README.md).
. "$(dirname "$0")/lib.sh"
hostile_init "${1:-}"
G=("$PROG" --device cpu -q --size 32x24)
cp "$TD/gs/scene.ply" "$TD/gs/cameras.json" "$TD/gs/scene.splat" "$TD/gs/notgs.ply" "$W/"
cp "$W/scene.ply" "$W/f_1.png"   # a scene whose name an orbit pattern also makes
ln "$W/scene.ply" "$W/depth.pgm" # --depth onto the scene, by a hard link
mkdir "$W/outdir"
: > "$W/empty.ply"
: > "$W/empty.json"
echo '[]' > "$W/none.json"
echo '{"id": 0}' > "$W/object.json"
sed 's/"fx": [0-9.e+-]*/"fx": 1e999/' "$W/cameras.json" > "$W/overflow.json"
head -c 100000 "$W/scene.ply" > "$W/trunc.ply"
sed '0,/element vertex [0-9]*/s//element vertex 1000000000/' "$W/scene.ply" > "$W/lying.ply"
head -c 100 "$W/scene.splat" > "$W/odd.splat"
printf '%s\n' '%%MatrixMarket matrix coordinate real general' '1 1 1' '1 1 1' > "$W/matrix.ply"

# the issue's data-losing command, and its other spellings
same_file_cases out-is-scene "$W/scene.ply" "the scene" -- "${G[@]}" "$W/scene.ply" -o @OUT@
run_case out-is-cameras 2 "same file as the input '$W/cameras.json' \(--cameras\)" -- "${G[@]}" "$W/scene.ply" --cameras "$W/cameras.json" -o "$W/cameras.json" --out-format png
run_case orbit-frame-is-scene 2 "-o '$W/f_1.png' is the same file as the input '$W/f_1.png' \(the scene\)" -- "${G[@]}" "$W/f_1.png" --orbit 3 -o "$W/f_%d.png"
run_case depth-is-scene 2 "--depth '$W/depth.pgm' is the same file as the input '$W/scene.ply'" -- "${G[@]}" "$W/scene.ply" -o "$W/x.png" --depth "$W/depth.pgm"
run_case stdin-is-output 2 "same file as the input on standard input" --stdin "$W/f_1.png" -- "${G[@]}" - -o "$W/f_1.png"
run_case stdout-appends-to-scene 2 "standard output\) is the same file as the input '$W/scene.ply'" --stdout-append "$W/scene.ply" -- "${G[@]}" "$W/scene.ply" --orbit 2 -o -
# where the outputs go
run_case out-missing-directory 1 "cannot write '$W/nodir/x.png'.*does not exist" -- "${G[@]}" "$W/scene.ply" -o "$W/nodir/x.png"
run_case orbit-pattern-missing-directory 1 "cannot write '$W/nodir/f_0.png'.*does not exist" -- "${G[@]}" "$W/scene.ply" --orbit 3 -o "$W/nodir/f_%d.png"
run_case out-is-a-directory 2 "outdir' is a directory" -- "${G[@]}" "$W/scene.ply" -o "$W/outdir"
run_case out-extension-ply 2 "x.ply': the name says a PLY file, but gsrender writes a PNG image there.*--out-format png" -- "${G[@]}" "$W/scene.ply" -o "$W/x.ply"
run_case orbit-extension-jpg 2 "f_0.jpg': the name says a JPEG image" -- "${G[@]}" "$W/scene.ply" --orbit 2 -o "$W/f_%d.jpg"
run_case stdout-closed 1 "write error on standard output" --stdout-closed -- "${G[@]}" "$W/scene.ply" --orbit 2 -o -
# options
run_case output-twice 2 "-o given twice" -- "${G[@]}" "$W/scene.ply" -o "$W/a.png" -o "$W/b.png"
run_case cameras-twice 2 "--cameras given twice" -- "${G[@]}" "$W/scene.ply" --cameras "$W/cameras.json" --cameras "$W/none.json" -o "$W/a.png"
run_case y4m-for-one-view 2 "--out-format y4m: this command writes PNG \(y4m is for an --orbit or --view all stream\)" -- "${G[@]}" "$W/scene.ply" --out-format y4m -o "$W/a.y4m"
run_case png-for-an-orbit-stream 2 "--out-format png: this command writes a Y4M stream" -- "${G[@]}" "$W/scene.ply" --orbit 2 --out-format png -o "$W/o.y4m"
run_case orbit-without-pattern 2 "with --orbit give a pattern" -- "${G[@]}" "$W/scene.ply" --orbit 2 -o "$W/a.png"
run_case one-view-to-stdout 2 "standard output is for --orbit" -- "${G[@]}" "$W/scene.ply" -o -
run_case depth-extension 2 "--depth '$W/d.tif': give a .pfm or .pgm" -- "${G[@]}" "$W/scene.ply" -o "$W/a.png" --depth "$W/d.tif"
run_case size-huge 2 "size 20000x20000 for --size is out of range" -- "$PROG" --device cpu "$W/scene.ply" --size 20000x20000 -o "$W/a.png"
run_case eye-is-target 2 "same point" -- "${G[@]}" "$W/scene.ply" --eye 1,1,1 --target 1,1,1 -o "$W/a.png"
run_case view-out-of-range 2 "--view 9 out of range" -- "${G[@]}" "$W/scene.ply" --cameras "$W/cameras.json" --view 9 -o "$W/a.png"
# paths that cannot be read
run_case missing-scene 1 "cannot open '$W/nope.ply'" -- "${G[@]}" "$W/nope.ply" -o "$W/a.png"
run_case scene-is-a-directory 1 "it is a directory" -- "${G[@]}" "$W/outdir" -o "$W/a.png"
U=$(unreadable_input "$W/scene.ply")
run_case unreadable-scene 1 "cannot (open|read) '$U'" -- "${G[@]}" "$U" -o "$W/a.png"
run_case missing-cameras 1 "cannot open '$W/nope.json' \(--cameras\)" -- "${G[@]}" "$W/scene.ply" --cameras "$W/nope.json" -o "$W/a.png"
# broken and lying scenes and cameras
run_case empty-scene 3 "not a PLY file.*empty.ply:1" -- "${G[@]}" "$W/empty.ply" -o "$W/a.png"
run_case wrong-magic 3 "not a PLY file.*matrix.ply:1" -- "${G[@]}" "$W/matrix.ply" -o "$W/a.png"
run_case truncated-scene 3 "PLY header promises at least 248000 bytes of data, file has [0-9]+ after the header" -- "${G[@]}" "$W/trunc.ply" -o "$W/a.png"
run_case lying-vertex-count 3 "promises at least 248000000000 bytes of data, file has 248000" -- "${G[@]}" "$W/lying.ply" -o "$W/a.png"
run_case truncated-scene-on-stdin 3 "file ends in element 'vertex' after [0-9]+ of 1000 records \(<stdin>" --stdin-pipe "$W/trunc.ply" -- "${G[@]}" - -o "$W/a.png"
run_case not-a-3dgs-scene 3 "not a 3D Gaussian Splatting scene" -- "${G[@]}" "$W/notgs.ply" -o "$W/a.png"
run_case splat-odd-size 3 "size 100 is not a multiple of 32 bytes" -- "${G[@]}" "$W/odd.splat" -o "$W/a.png"
run_case cameras-empty-file 3 "not a cameras.json" -- "${G[@]}" "$W/scene.ply" --cameras "$W/empty.json" -o "$W/a.png"
run_case cameras-empty-array 3 "holds no cameras" -- "${G[@]}" "$W/scene.ply" --cameras "$W/none.json" -o "$W/a.png"
run_case cameras-not-an-array 3 "expected an array of camera objects" -- "${G[@]}" "$W/scene.ply" --cameras "$W/object.json" -o "$W/a.png"
run_case cameras-number-overflow 3 "fx that is not a finite number.*overflow.json" -- "${G[@]}" "$W/scene.ply" --cameras "$W/overflow.json" -o "$W/a.png"
hostile_finish
