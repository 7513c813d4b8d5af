# hand-made: tabs, blank lines and comments between the fields
stpsfit-params 1

kernel	r2logr
# smoothing
lambda	0
planar	1
n 2
a0	0	0	0
ax	1	0	0
ay	0	1	0
az	0	0	0
# control points
0 0 0	0.125 -0.125 0
1 1 0	-0.125 0.125 0
