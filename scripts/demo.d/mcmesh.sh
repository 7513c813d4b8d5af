# mcmesh demo: isosurfaces of the small volumes in testdata/mc (CPU or GPU).
set -euo pipefail
"$BIN/mcmesh" --iso 0 --normals --timings "$TESTDATA/mc/sphere.nrrd" -o "$OUT/mcmesh-sphere.ply"
"$BIN/mcmesh" --normals "$TESTDATA/mc/gyroid.nrrd" -o "$OUT/mcmesh-gyroid.ply"
"$BIN/mcmesh" --dims 24,20,16 --type uint8 --spacing 0.5,0.5,1 --iso 128 \
  "$TESTDATA/mc/blobs_24x20x16.u8.raw" -o "$OUT/mcmesh-blobs.ply"
# a real shape: the shell 1.5 voxels around the Stanford bunny (iso from the NRRD key)
"$BIN/mcmesh" --normals "$TESTDATA/mc/bunny_dist.nrrd" -o "$OUT/mcmesh-bunny-shell.ply"
