stpsfit-params 1
kernel r2logr
lambda 0 1
planar 0
n 2
a0 0 0 0
ax 1 0 0
ay 0 1 0
az 0 0 1
0 0 0 0.5 0 0
1 1 1 0 -0.5 0
