#!/usr/bin/env python3
# CPU emulation of the CUDA path's index logic (kernels/mc/mc_extract.cu)
# against the CPU reference numbering (lib/mc/mc_cpu.c): k_bits (both the
# float4 path's nibble/shuffle packing and the scalar ballot path), prow /
# vrows / nonempty / cube_at on 32-bit words, k_count, the exclusive scans,
# the packed (one scan) and two-scan offset layouts,
# k_verts and k_tris with their 128-word blocks (shared word data, per-vertex
# and per-triangle binary searches, the voxel list in one or several passes),
# 32-bit modular vertex bases, edge_corner and the corner vertex numbers.
# Random volumes of odd sizes (noise, iso-valued corners, NaNs), whole volume
# and two slabs with a vertex base. Not a test (not run by meson): a review aid.
#   gcc -Ilib -Ibuild -I. -x c - -x none lib/mc/mc_table.c -o /tmp/mc_dump_table -lpthread -lm <<'C'
#   #include <stdio.h>
#   #include "mc/mc.h"
#   int main(void){const gt_mc_table*t=gt_mc_table_get();for(int c=0;c<256;c++){printf("%d",t->ntri[c]);
#   for(int q=0;q<3*t->ntri[c];q++)printf(" %d",t->tri[c][q]);printf("\n");}return 0;}
#   C
#   /tmp/mc_dump_table > /tmp/mc_table.txt && python3 kernels/mc/emit_emu.py 1 /tmp/mc_table.txt
import math, random, sys
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

def edge_corner(e):
    ax=e>>2; lo=e&1; hi=(e>>1)&1
    ox=0 if ax==0 else lo
    oy=lo if ax==0 else (hi if ax==2 else 0)
    oz=0 if ax==2 else hi
    return ax,ox,oy+2*oz

def fsr(lo,hi,s): return (((hi<<32)|lo)>>s)&M32          # __funnelshift_r (s < 32)
def low_bits(n): return M32 if n>=32 else (0 if n<=0 else (1<<n)-1)
def ge(v,iso): return (not math.isnan(v)) and v>=iso

def k_bits(vol,X,Y,Z,zb,z0,kb,iso,W,vec):
    nrows=(kb-z0)*Y; bits=[None]*(nrows*W); KS=512
    nseg=(X+KS-1)//KS
    for it in range(nrows*nseg):
        r=it//nseg; s0=(it%nseg)*KS; j=r%Y; k=z0+r//Y
        row=((k-zb)*Y+j)*X; out=r*W+s0//32; wleft=W-s0//32
        if vec:
            assert X%4==0
            for u in range(4):
                v=[0]*32
                for l in range(32):
                    i=s0+128*u+4*l
                    f=[vol[row+i+e] for e in range(4)] if i<X else [float('nan')]*4
                    v[l]=sum(1<<e for e in range(4) if ge(f[e],iso))<<(4*(l&7))
                for d in (1,2,4): v=[v[l]|v[l^d] for l in range(32)]
                for l in range(32):
                    wd=4*u+(l>>3)
                    if (l&7)==0 and wd<wleft: bits[out+wd]=v[l]
        else:
            mine=[0]*32
            for u in range(16):
                bal=0
                for l in range(32):
                    i=s0+32*u+l
                    if i<X and ge(vol[row+i],iso): bal|=1<<l
                mine[u]=bal
            for l in range(16):
                if l<wleft: bits[out+l]=mine[l]
    assert all(b is not None for b in bits)
    return bits

class G: pass

def ldbits(bits,g,k,j,w):
    assert 0<=k-g.z0<g.nb and 0<=j<g.Y and 0<=w<g.W
    return bits[((k-g.z0)*g.Y+j)*g.W+w]

def prow(bits,g,j,k,w):
    nx=w+1<g.W; hy=j+1<g.Y; hz=k+1<g.Z
    c=ldbits(bits,g,k,j,w); cn=ldbits(bits,g,k,j,w+1) if nx else 0
    cy=cyn=cz=czn=0
    if hy:
        cy=ldbits(bits,g,k,j+1,w); cyn=ldbits(bits,g,k,j+1,w+1) if nx else 0
    if hz:
        cz=ldbits(bits,g,k+1,j,w); czn=ldbits(bits,g,k+1,j,w+1) if nx else 0
    lim=g.X-32*w; ptv=low_bits(lim)
    xe=(c^fsr(c,cn,1))&low_bits(lim-1)
    ye=((c^cy)&ptv) if hy else 0
    ze=((c^cz)&ptv) if hz else 0
    mn=0
    if nx:
        if lim-32>1 and ((cn^(cn>>1))&1): mn|=1
        if hy and ((cn^cyn)&1): mn|=2
        if hz and ((cn^czn)&1): mn|=4
    return dict(c=c,cn=cn,xe=xe,ye=ye,ze=ze,mn=mn)

def vrows(bits,g,j,k,w):
    nx=w+1<g.W
    return [(ldbits(bits,g,k+(q>>1),j+(q&1),w), ldbits(bits,g,k+(q>>1),j+(q&1),w+1) if nx else 0) for q in range(4)]

def nonempty(g,v,w):
    a=M32; o=0
    for c,cn in v:
        sh=fsr(c,cn,1); a&=c&sh; o|=c|sh
    return (o&~a&M32)&low_bits(g.X-32*w-1)

def cube_at(v,b): return sum((fsr(c,cn,b)&3)<<(2*q) for q,(c,cn) in enumerate(v))
def is_voxrow(g,j,k): return k<g.kt and j+1<g.Y
def coords(g,x): w=x%g.W; r=x//g.W; return w,r%g.Y,g.z0+r//g.Y
def bits_of(m):
    while m:
        b=(m&-m).bit_length()-1; m&=m-1; yield b

def gpu(vol,X,Y,Z,z0,z1,iso,vbase,vec,zb=None,voxcap=2048,packed=True):
    g=G(); g.X,g.Y,g.Z,g.z0,g.z1=X,Y,Z,z0,z1
    g.kc=min(z1+1,Z); g.kt=min(z1,Z-1); g.W=(X+31)//32
    kb=min(z1+2,Z); g.nb=kb-z0
    if zb is None: zb=max(z0-1,0)
    bits=k_bits(vol,X,Y,Z,0,z0,kb,iso,g.W,vec)
    rw=Y*g.W; nwc=(g.kc-z0)*rw; nown=(z1-z0)*rw
    cV=[0]*(nwc+1); cT=[0]*(nwc+1)
    for x in range(nwc):
        w,j,k=coords(g,x); pr=prow(bits,g,j,k,w); nt=0
        if is_voxrow(g,j,k):
            v=vrows(bits,g,j,k,w)
            for b in bits_of(nonempty(g,v,w)): nt+=tab[cube_at(v,b)][0]
        cV[x]=popc(pr['xe'])+popc(pr['ye'])+popc(pr['ze']); cT[x]=nt
    def scan(a):
        o=[0]
        for x in a[:-1]: o.append(o[-1]+x)
        return o
    if packed:      # k_count writes V | T << 32, one scan; offv / offt unpack
        assert nwc<(1<<32)//(32*12)
        pk=scan([cV[x]|(cT[x]<<32) for x in range(nwc)]+[0])
        offV=[a&M32 for a in pk]; offT=[a>>32 for a in pk]
        assert offV==scan(cV) and offT==scan(cT)
    else:
        offV=scan(cV); offT=scan(cT)
    vown=offV[nown]; vall=offV[nwc]; ntri=offT[nwc]
    assert vbase+vall<=0x7fffffff
    V=[None]*vown; T=[None]*ntri
    B=128
    def bsearch(arr,n,key):                          # the last a < n with arr[a] <= key (arr[0] <= key)
        a=0; ln=n
        while ln>1:
            h=ln>>1
            if arr[a+h]<=key: a+=h; ln-=h
            else: ln=h
        return a
    def before_pt(mx,my,mz,p):
        lt=(1<<p)-1; assert p<32
        return popc(mx&lt)+popc(my&lt)+popc(mz&lt)
    for w0 in range(0,nown,B):                       # k_verts: phase A per word, phase B per vertex
        w1=min(w0+B,nown); vb0=offV[w0]; nvb=offV[w1]-vb0
        if nvb==0: continue
        sm=[[0]*B for _ in range(3)]; svo=[nvb]*(B+1)
        for tid in range(B):
            x=w0+tid
            if x<w1:
                w,j,k=coords(g,x); pr=prow(bits,g,j,k,w)
                sm[0][tid]=pr['xe']; sm[1][tid]=pr['ye']; sm[2][tid]=pr['ze']; svo[tid]=offV[x]-vb0
        svo[B]=nvb
        for v in range(nvb):
            q=bsearch(svo,B,v); r=v-svo[q]
            mx,my,mz=sm[0][q],sm[1][q],sm[2][q]
            b=0; ln=32
            while ln>1:
                h=ln>>1
                if before_pt(mx,my,mz,b+h)<=r: b+=h; ln-=h
                else: ln=h
            rr=r-before_pt(mx,my,mz,b); assert 0<=rr<=2
            m3=(mx>>b&1)|((my>>b&1)<<1)|((mz>>b&1)<<2)
            if rr>=1: m3&=m3-1
            if rr>=2: m3&=m3-1
            assert m3
            a=(m3&-m3).bit_length()-1
            w,j,k=coords(g,w0+q); i=32*w+b; assert i<X
            assert V[vb0+v] is None; V[vb0+v]=(i,j,k,a)
    for w0 in range(0,nown,B):                       # k_tris: word data and voxel list, then per triangle
        w1=min(w0+B,nown); tb0=offT[w0]; ntb=offT[w1]-tb0
        if ntb==0: continue
        assert ntb<(1<<16)
        sm=[[0]*B for _ in range(12)]; sbase=[[0]*B for _ in range(8)]; smn=[0]*B
        NE=[0]*B; VR=[None]*B
        for tid in range(B):
            x=w0+tid
            if x>=w1: continue
            w,j,k=coords(g,x)
            if not is_voxrow(g,j,k): continue
            vr=vrows(bits,g,j,k,w); ne=nonempty(g,vr,w); NE[tid]=ne; VR[tid]=vr
            if not ne: continue
            nx=w+1<g.W; mn=0
            for q in range(4):
                dy=q&1; dz=q>>1
                p=prow(bits,g,j+dy,k+dz,w)
                sm[3*q][tid]=p['xe']; sm[3*q+1][tid]=p['ye']; sm[3*q+2][tid]=p['ze']; mn|=p['mn']<<(3*q)
                xq=x+dy*g.W+dz*Y*g.W
                sbase[2*q][tid]=(vbase+offV[xq])&M32; sbase[2*q+1][tid]=(vbase+offV[xq+1])&M32 if nx else 0
            smn[tid]=mn
        cnt=[popc(NE[t]) for t in range(B)]; V0=[sum(cnt[:t]) for t in range(B)]; nvox=sum(cnt)
        lo=0
        while lo<nvox:
            n=min(nvox-lo,voxcap); svox=[None]*voxcap; svt=[None]*(voxcap+1)
            for tid in range(B):
                if not NE[tid]: continue
                t=offT[w0+tid]-tb0; v=V0[tid]
                for b in bits_of(NE[tid]):
                    cube=cube_at(VR[tid],b)
                    if lo<=v<lo+voxcap: svox[v-lo]=(tid<<13)|(b<<8)|cube; svt[v-lo]=t&0xffff
                    elif v==lo+voxcap: svt[voxcap]=t&0xffff
                    t+=tab[cube][0]; v+=1
            if lo+voxcap>=nvox: svt[n]=ntb&0xffff
            assert all(s is not None for s in svox[:n]) and svt[n] is not None
            for t2 in range(svt[0],svt[n]):
                a=bsearch(svt,n,t2); e=svox[a]
                q=e>>13; b=(e>>8)&31; cube=e&255; nn=t2-svt[a]; assert 0<=nn<tab[cube][0]
                idx=[]
                for c in range(3):
                    ax,ox,pr=edge_corner(tab[cube][1][3*nn+c]); p=b+ox
                    if p<32:
                        lt=(1<<p)-1; le=lt|(1<<p)
                        vi=sbase[2*pr][q]+popc(sm[3*pr][q]&(le if ax>0 else lt))+popc(sm[3*pr+1][q]&(le if ax>1 else lt))+popc(sm[3*pr+2][q]&lt)
                    else:
                        vi=sbase[2*pr+1][q]+popc((smn[q]>>(3*pr))&((1<<ax)-1))
                    idx.append(vi&M32)
                assert T[tb0+t2] is None; T[tb0+t2]=tuple(idx)
            lo+=voxcap
    assert all(v is not None for v in V) and all(t is not None for t in T)
    return V,T

random.seed(int(sys.argv[1]) if len(sys.argv)>1 else 1)
n=0
cases=[(33,5,4),(61,3,3),(2,2,2),(1,4,4),(4,1,4),(4,4,1),(31,2,5),(32,3,3),(64,3,3),(91,2,2),(59,4,3),(30,3,2),(29,3,3),(520,2,2),(516,3,2),(96,7,5)]
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
            rv,rt=ref(vol,X,Y,Z,z0,z1,iso,vbase)
            if vbase+len(rv)+X*Y*3>0x7fffffff: vbase=12345
            rv,rt=ref(vol,X,Y,Z,z0,z1,iso,vbase)
            for vec in ([False,True] if X%4==0 else [False]):
                for voxcap,packed in ((2048,True),(7,False)):     # one pass / packed, several voxel passes / two scans
                    gv,gt=gpu(vol,X,Y,Z,z0,z1,iso,vbase,vec,voxcap=voxcap,packed=packed)
                    assert gv==rv, (X,Y,Z,kind,z0,z1,vec,'verts')
                    assert gt==rt, (X,Y,Z,kind,z0,z1,vec,'tris',len(gt),len(rt))
                    n+=1
print('ok',n,'cases')
