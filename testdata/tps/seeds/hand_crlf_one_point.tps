stpsfit-params 1
kernel r
lambda 1e-3
planar 0
n 1
# the affine part
a0 1 2 3
ax 1 0 0
ay 0 1 0
az 0 0 1

  0.5 -0.25 1e2 0 0 -0
