# The PyTorch side of bench/micro/odd_strides.cu: eager column reductions of the same shape, timed
# the same way (L2 flushed, CUDA events, median of 20). python3 bench/micro/odd_strides_torch.py
import torch
x=torch.randn(128,4096,4095,device='cuda')
fl=torch.empty(256<<20,dtype=torch.uint8,device='cuda')
def t(f):
    ts=[]
    for i in range(23):
        fl.fill_(i); a=torch.cuda.Event(True); z=torch.cuda.Event(True); a.record(); f(); z.record(); z.synchronize()
        if i>=3: ts.append(a.elapsed_time(z))
    ts.sort(); return ts[len(ts)//2]
with torch.inference_mode():
    print('torch.sum dim1 %.4f ms'%t(lambda: torch.sum(x,1)))
    print('torch.amax dim1 %.4f ms'%t(lambda: torch.amax(x,1)))
