"""CUDA IPC handles of device tensors, for egg-harness (harness/ref_client.h).

A handle names the whole driver allocation a tensor lives in (PyTorch's caching allocator
sub-allocates); the harness opens it with cudaIpcOpenMemHandle and adds ``offset``. The driver API
is called through ctypes, so nothing here depends on PyTorch's private sharing code.
"""
import ctypes

_cuda = None


def _driver():
    global _cuda
    if _cuda is None:
        _cuda = ctypes.CDLL("libcuda.so.1")
        _cuda.cuMemGetAddressRange_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64),
                                                  ctypes.POINTER(ctypes.c_size_t),
                                                  ctypes.c_uint64]
        _cuda.cuIpcGetMemHandle.argtypes = [ctypes.c_char * 64, ctypes.c_uint64]
    return _cuda


def export(tensor):
    """{"handle": hex of the 64-byte cudaIpcMemHandle_t, "offset": bytes} of a CUDA tensor."""
    cuda = _driver()
    ptr = tensor.data_ptr()
    base, size = ctypes.c_uint64(0), ctypes.c_size_t(0)
    rc = cuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr)
    if rc != 0:
        raise RuntimeError("cuMemGetAddressRange failed (CUresult %d)" % rc)
    handle = (ctypes.c_char * 64)()
    rc = cuda.cuIpcGetMemHandle(handle, base.value)
    if rc != 0:
        raise RuntimeError("cuIpcGetMemHandle failed (CUresult %d): the allocation cannot be "
                           "shared (PYTORCH_CUDA_ALLOC_CONF must not select expandable segments "
                           "or cudaMallocAsync for the reference server)" % rc)
    return {"handle": bytes(handle).hex(), "offset": ptr - base.value}
