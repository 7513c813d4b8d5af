#!/usr/bin/env python3
# CPU emulation of k_emit's index logic (kernels/mc/mc_extract.cu) against
# the CPU reference numbering (lib/mc/mc_cpu.c): 30-column chunks, bit-plane
# warp prefixes, per-lane state packed into mP/exP, 32-bit modular row bases,
# edge_corner, and the owner-table spread of a chunk's triangles over lanes.
# Random volumes of odd sizes (noise, iso-valued corners, NaNs), whole volume
# and two slabs with a vertex base. Not a test (not run by meson): a review aid.
#   gcc -Ilib -Ibuild -I. -x c - -x none lib/mc/mc_table.c -o /tmp/mc_dump_table -lpthread -lm <<'C'
#   #include <stdio.h>
#   #include "mc/mc.h"
#   int main(void){const gt_mc_table*t=gt_mc_table_get();for(int c=0;c<256;c++){printf("%d",t->ntri[c]);
#   for(int q=0;q<3*t->ntri[c];q++)printf(" %d",t->tri[c][q]);printf("\n");}return 0;}
#   C
#   /tmp/mc_dump_table > /tmp/mc_table.txt && python3 kernels/mc/emit_emu.py 1 /tmp/mc_table.txt
import random, sys
tab=[]
for line in open(sys.argv[2] if len(sys.argv) > 2 else '/tmp/mc_table.txt'):
    a=list(map(int,line.split())); tab.append((a[0],a[1:]))
M32=0xffffffff
def popc(x): return bin(x).count('1')

def ref(vol,X,Y,Z,z0,z1,iso,vbase):
    isin=lambda i,j,k: vol[(k*Y+j)*X+i]>=iso
    def emask(i,j,k):
        c=isin(i,j,k); m=0
        if i+1<X and isin(i+1,j,k)!=c: m|=1
        if j+1<Y and isin(i,j+1,k)!=c: m|=2
        if k+1<Z and isin(i,j,k+1)!=c: m|=4
        return m
    kc=min(z1+1,Z); mask={}; vid={}; nv=0
    for k in range(z0,kc):
        for j in range(Y):
            for i in range(X):
                m=emask(i,j,k); mask[i,j,k]=m; vid[i,j,k]=vbase+nv; nv+=popc(m)
    verts=[]
    for k in range(z0,z1):
        for j in range(Y):
            for i in range(X):
                for a in range(3):
                    if mask[i,j,k]>>a&1: verts.append((i,j,k,a))
    kt=min(z1,Z-1); tris=[]
    for k in range(z0,kt):
        for j in range(Y-1):
            for i in range(X-1):
                c=0
                for n in range(8): c|=isin(i+(n&1),j+((n>>1)&1),k+(n>>2))<<n
                nt,t=tab[c]
                for q in range(nt):
                    idx=[]
                    for w in range(3):
                        e=t[3*q+w]; ax=e>>2; o=[0,0,0]
                        o[1 if ax==0 else 0]=e&1; o[1 if ax==2 else 2]=(e>>1)&1
                        p=(i+o[0],j+o[1],k+o[2])
                        idx.append(vid[p]+popc(mask[p]&((1<<ax)-1)))
                    tris.append(tuple(idx))
    return verts,tris

def warp_excl(vals):
    ex=[];s=0
    for v in vals: ex.append(s); s+=v
    return ex,s

def edge_corner(e):
    ax=e>>2; lo=e&1; hi=(e>>1)&1
    ox=0 if ax==0 else lo
    oy=lo if ax==0 else (hi if ax==2 else 0)
    oz=0 if ax==2 else hi
    return ax,ox,oy+2*oz

def gpu(vol,X,Y,Z,z0,z1,iso,vbase):
    isin=lambda i,j,k: vol[(k*Y+j)*X+i]>=iso
    kc=min(z1+1,Z); kt=min(z1,Z-1)
    def pm(i,j,k):
        c=isin(i,j,k); m=0
        if i+1<X and isin(i+1,j,k)!=c: m|=1
        if j+1<Y and isin(i,j+1,k)!=c: m|=2
        if k+1<Z and isin(i,j,k+1)!=c: m|=4
        return m
    nrows=(kc-z0)*Y; nown=(z1-z0)*Y
    rowV=[];rowT=[]
    for r in range(nrows):
        j=r%Y;k=z0+r//Y
        rowV.append(sum(popc(pm(i,j,k)) for i in range(X)))
        nt=0
        if k<kt and j+1<Y:
            for i in range(X-1):
                c=0
                for n in range(8): c|=isin(i+(n&1),j+((n>>1)&1),k+(n>>2))<<n
                nt+=tab[c][0]
        rowT.append(nt)
    # exclusive scans (n+1)
    def scan(a):
        o=[0];
        for x in a: o.append(o[-1]+x)
        return o
    rowV=scan(rowV); rowT=scan(rowT)
    vown_total=rowV[nown]; ntri=rowT[nrows]
    assert vbase+rowV[nrows]<=0x7fffffff
    V=[None]*vown_total; T=[None]*ntri
    rows=[r for r in range(nown) if rowV[r+1]>rowV[r] or rowT[r+1]>rowT[r]]
    S=30
    for r in rows:
        j=r%Y;k=z0+r//Y
        voxrow=k<kt and j+1<Y
        vown=rowV[r]&M32
        vc=[(vbase+rowV[r])&M32,0,0,0]
        if voxrow:
            vc[1]=(vbase+rowV[r+1])&M32; vc[2]=(vbase+rowV[r+Y])&M32; vc[3]=(vbase+rowV[r+1+Y])&M32
        tc=rowT[r]
        base=0
        while base<X:
            L=range(32); I=[base+l for l in L]
            pt=[l<S and I[l]<X for l in L]
            mP=[0]*32; exP=[0]*32; tots=[0]*4
            for q in range(4):
                dy=q&1; dz=q>>1
                if q>0 and not voxrow: continue
                m=[pm(I[l],j+dy,k+dz) if (l<31 and I[l]<X) else 0 for l in L]
                # pmask with bits of a missing row: rows j+dy<Y, k+dz<Z guaranteed for voxrow
                cnt=[popc(m[l]) if pt[l] else 0 for l in L]
                ex,tot=warp_excl(cnt)
                mn=[m[l+1] if l<31 else m[31] for l in L]
                for l in L:
                    assert m[l]<8 and mn[l]<8 and ex[l]<128
                    mP[l]|=(m[l]<<(3*q))|(mn[l]<<(12+3*q)); exP[l]|=ex[l]<<(7*q)
                tots[q]=tot
            for l in L:
                if not pt[l]: continue
                m=mP[l]&7; v=(vown+(exP[l]&127))&M32
                for a in range(3):
                    if m>>a&1:
                        assert V[v] is None; V[v]=(I[l],j,k,a); v+=1
            nts=[]; cubes=[]
            for l in L:
                vox=voxrow and pt[l] and I[l]+1<X
                c=0
                if vox:
                    i=I[l]
                    for n in range(8): c|=isin(i+(n&1),j+((n>>1)&1),k+(n>>2))<<n
                cubes.append(c); nts.append(tab[c][0])
            tex,ttot=warp_excl(nts)
            own=[None]*(30*12)
            for l in L:
                for q in range(nts[l]): own[tex[l]+q]=l
            for t0 in range(0,ttot,32):
                for l in L:
                    t=t0+l
                    src=own[t] if t<ttot else 0
                    assert src is not None
                    if t<ttot:
                        c=cubes[src]; nt,tt=tab[c]; q=t-tex[src]
                        assert 0<=q<nt
                        sm=mP[src]; se=exP[src]
                        idx=[]
                        for w in range(3):
                            ax,ox,pr=edge_corner(tt[3*q+w])
                            m0=(sm>>(3*pr))&7; mm=(sm>>(3*pr+12*ox))&7
                            ex=((se>>(7*pr))&127)+(popc(m0) if ox else 0)
                            idx.append((vc[pr]+ex+popc(mm&((1<<ax)-1)))&M32)
                        assert T[tc+t] is None
                        T[tc+t]=tuple(idx)
            tc+=ttot; vown=(vown+tots[0])&M32
            for q in range(4): vc[q]=(vc[q]+tots[q])&M32
            base+=S
    return V,T

random.seed(int(sys.argv[1]) if len(sys.argv)>1 else 1)
n=0
cases=[(33,5,4),(61,3,3),(2,2,2),(1,4,4),(4,1,4),(4,4,1),(31,2,5),(32,3,3),(91,2,2),(59,4,3),(30,3,2),(29,3,3)]
for (X,Y,Z) in cases:
    for kind in range(3):
        vol=[]
        for _ in range(X*Y*Z):
            u=random.uniform(-1,1)
            if kind==1: u=float(round(u*1.5))
            if kind==2 and u>0.85: u=float('nan')
            vol.append(u)
        iso=0.0
        for (z0,z1) in [(0,Z)]+([(0,Z//2),(Z//2,Z)] if Z>=2 else []):
            vbase=random.choice([0,12345,(1<<31)-40000]) if (z0,z1)!=(0,Z) else 0
            # keep vbase + count < 2^31
            rv,rt=ref(vol,X,Y,Z,z0,z1,iso,vbase)
            try:
                gv,gt=gpu(vol,X,Y,Z,z0,z1,iso,vbase)
            except AssertionError as e:
                if vbase>(1<<30): continue
                raise
            assert gv==rv, (X,Y,Z,kind,z0,z1,'verts')
            assert gt==rt, (X,Y,Z,kind,z0,z1,'tris',len(gt),len(rt))
            n+=1
print('ok',n,'cases')
