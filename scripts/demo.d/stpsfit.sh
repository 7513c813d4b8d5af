#!/usr/bin/env bash
# stpsfit demo: fit a thin-plate spline through 40 landmark pairs (exact and
# GCV-smoothed), warp a small mesh with it, and fit a 2-D landmark set.
set -euo pipefail
td=$TESTDATA/tps
"$BIN/stpsfit" --timings "$td/src.txt" "$td/dst.txt" -o "$OUT/stpsfit-params.txt"
"$BIN/stpsfit" --lambda gcv "$td/src.txt" "$td/dst.txt" -o "$OUT/stpsfit-params-gcv.txt"
"$BIN/stpsfit" --params "$OUT/stpsfit-params.txt" --apply "$td/grid.ply" -o "$OUT/stpsfit-grid-warped.ply"
"$BIN/stpsfit" "$td/src2d.txt" "$td/dst2d.txt" -o "$OUT/stpsfit-params-2d.txt"
"$BIN/stpsfit" --params "$OUT/stpsfit-params-2d.txt" --apply "$td/src2d.txt" -o "$OUT/stpsfit-2d-warped.txt"
echo "stpsfit: parameters, GCV parameters, warped mesh and 2-D points in $OUT" >&2
