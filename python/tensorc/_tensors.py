"""_tensors.py - tensors of any library as DLTensors, without copies, and
new tensors of the caller's library for outputs.

An argument becomes a DLTensor in one of two ways:

- a NumPy array (or a :class:`bfloat16` wrapper of one) is described
  directly from its buffer: data pointer, shape and strides.  That works
  for every NumPy version and for dtypes DLPack export refuses (ml_dtypes'
  bfloat16);
- anything else that speaks DLPack (``__dlpack__`` and
  ``__dlpack_device__``: PyTorch, CuPy, JAX, ...) is asked for a capsule,
  which is only borrowed: it is never renamed "used_dltensor", so the
  producer's own capsule destructor frees it once the call is over.  The
  DLTensor inside is copied (a struct, not the data) with any byte_offset
  folded into its data pointer.

Tensor libraries are never imported here unless the caller's tensors come
from them (``sys.modules`` is consulted), so importing tensorc never
imports torch.

A call of a Function reuses one :class:`Slot` per tensor argument (a
DLTensor with room for its shape and strides) from call to call and
rewrites it (``fill``), instead of building structs anew; a strided torch
tensor is described from its own attributes (data_ptr, shape, stride,
dtype, device) when no stream synchronization is asked of it (the caller's
current stream, DLPack's -1), which is what ``__dlpack__`` would export,
without making and freeing a capsule per call.  Anything else goes through
``to_dltensor``.
"""
from __future__ import annotations

import ctypes
import sys
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _capi as C

_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

try:  # NumPy has no bfloat16 of its own; ml_dtypes (if installed) gives it one
    import ml_dtypes as _ml_dtypes  # type: ignore
    _NP_BF16: Optional[np.dtype] = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the machine
    _NP_BF16 = None

_NP_TO_DTYPE = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
                np.dtype(np.float64): "f64", np.dtype(np.int32): "i32",
                np.dtype(np.int64): "i64", np.dtype(np.bool_): "bool"}
if _NP_BF16 is not None:
    _NP_TO_DTYPE[_NP_BF16] = "bf16"
_DTYPE_TO_NP = {v: k for k, v in _NP_TO_DTYPE.items()}


class bfloat16:
    """A NumPy array of bfloat16 values held as their bits (a ``uint16``
    array), for machines without ``ml_dtypes``.

    Pass it wherever a bf16 tensor is expected on the CPU; bf16 outputs of
    a CPU run come back as this type when ``ml_dtypes`` is not installed
    (with it, they are ``ml_dtypes.bfloat16`` arrays).

    >>> x = tensorc.bfloat16.from_float(np.ones((2, 3), np.float32))
    >>> x.to_float32()
    """

    __slots__ = ("bits",)

    def __init__(self, bits: np.ndarray):
        if not isinstance(bits, np.ndarray) or bits.dtype != np.uint16:
            raise TypeError("tensorc.bfloat16 wraps a numpy uint16 array of bfloat16 bits")
        self.bits = bits

    @classmethod
    def from_float(cls, a: Any) -> "bfloat16":
        """Round float values to bfloat16 (to nearest, ties to even)."""
        f = np.ascontiguousarray(a, dtype=np.float32)
        u = f.view(np.uint32).astype(np.uint64)
        rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        nan = np.isnan(f)
        bits = np.where(nan, 0x7FC0, rounded).astype(np.uint16)
        return cls(bits.reshape(f.shape))

    def to_float32(self) -> np.ndarray:
        """The values as float32 (exactly)."""
        # at least 1-d: a 0-d uint32 shifted by a Python int became an int64
        # scalar (NumPy's value-based casting), which cannot be viewed as f32
        b = np.atleast_1d(self.bits).astype(np.uint32) << np.uint32(16)
        return b.view(np.float32).reshape(self.bits.shape)

    @property
    def shape(self) -> Tuple[int, ...]:
        return self.bits.shape

    def __repr__(self) -> str:
        return f"tensorc.bfloat16({self.to_float32()!r})"


def np_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a tensorc dtype name (bf16: ml_dtypes' if installed)."""
    if dtype == "bf16" and _NP_BF16 is None:
        raise TypeError("NumPy has no bfloat16: install ml_dtypes, or use tensorc.bfloat16")
    return _DTYPE_TO_NP[dtype]


_LIB_OF_TYPE: dict = {}  # type -> its library's name, so each type is looked at once


def library_of(obj: Any) -> str:
    """'numpy', 'torch', 'cupy', 'jax' or the top module of obj's type."""
    tp = type(obj)
    lib = _LIB_OF_TYPE.get(tp)
    if lib is None:
        if issubclass(tp, (np.ndarray, bfloat16)):
            lib = "numpy"
        else:
            mod = tp.__module__.split(".")[0]
            lib = "jax" if mod == "jaxlib" else mod
        _LIB_OF_TYPE[tp] = lib
    return lib


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, (np.ndarray, bfloat16)) or hasattr(obj, "__dlpack__")


def device_of(obj: Any) -> Tuple[int, int]:
    """(DLPack device type, device id)."""
    if isinstance(obj, (np.ndarray, bfloat16)):
        return (C.kDLCPU, 0)
    if library_of(obj) == "torch" and _torch_fast():  # what __dlpack_device__ says, cheaper
        if obj.is_cuda:
            return (C.kDLCUDA, obj.get_device())
        if obj.device.type == "cpu":
            return (C.kDLCPU, 0)
    dev = obj.__dlpack_device__()
    return (int(dev[0]), int(dev[1]))


def is_cuda(dev: Tuple[int, int]) -> bool:
    return dev[0] in (C.kDLCUDA, C.kDLCUDAManaged)


def current_stream(obj: Any, dev: Tuple[int, int]) -> int:
    """The caller's current CUDA stream for obj's library, as an integer
    handle (0: the legacy default stream)."""
    lib = library_of(obj)
    if lib == "torch":
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # ~10x cheaper
        if raw is not None:
            return int(raw(dev[1]))
        return int(torch.cuda.current_stream(dev[1]).cuda_stream)
    if lib == "cupy":
        cupy = sys.modules["cupy"]
        return int(cupy.cuda.get_current_stream().ptr)
    return 0  # JAX and others: no current stream to follow; the default one


def _np_dltensor(arr: np.ndarray, dtype: str, keep: List[Any]) -> int:
    t = C.DLTensor()
    t.data = arr.__array_interface__["data"][0] or None
    t.device = C.DLDevice(C.kDLCPU, 0)
    t.ndim = arr.ndim
    code, bits = C.DTYPE_TO_DL[dtype]
    t.dtype = C.DLDataType(code, bits, 1)
    shape = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
    keep.append(shape)
    t.shape = shape
    if not arr.flags.c_contiguous:
        isz = arr.itemsize
        if any(s % isz for s in arr.strides):
            raise ValueError("an array whose strides are not a multiple of its item size")
        strides = (ctypes.c_int64 * max(arr.ndim, 1))(*[s // isz for s in arr.strides])
        keep.append(strides)
        t.strides = strides
    t.byte_offset = 0
    keep.append(arr)
    keep.append(t)
    return ctypes.addressof(t)


_BYTE_OFFSET = C.DLTensor.byte_offset.offset  # DLManagedTensor begins with its DLTensor


def to_dltensor(obj: Any, what: str, dev: Tuple[int, int], dl_stream: Optional[int],
                keep: List[Any], writable: bool) -> int:
    """The address of a DLTensor describing obj's memory (no copy of the
    data); whatever must outlive the call goes into keep.  dl_stream: what
    to pass to a CUDA tensor's ``__dlpack__(stream=...)``."""
    if isinstance(obj, np.ndarray):
        dt = _NP_TO_DTYPE.get(obj.dtype)
        if dt is None:
            raise TypeError(f"{what}: NumPy dtype {obj.dtype} has no tensorc dtype "
                            "(f32, f16, bf16, f64, i32, i64, bool)")
        if writable and not obj.flags.writeable:
            raise ValueError(f"{what}: the array is read-only, but the function writes it")
        return _np_dltensor(obj, dt, keep)
    if isinstance(obj, bfloat16):
        return _np_dltensor(obj.bits, "bf16", keep)
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"{what}: expected a tensor (NumPy array or an object with __dlpack__),"
                        f" got {type(obj).__name__}")
    if getattr(obj, "requires_grad", False) and library_of(obj) == "torch":
        # the same memory; DLPack refuses tensors that require grad.  Writes
        # (inout, out=) bypass autograd, as an optimizer's in-place updates do.
        obj = obj.detach()
    cap = obj.__dlpack__(stream=dl_stream) if is_cuda(dev) else obj.__dlpack__()
    keep.append(cap)
    ptr = _PyCapsule_GetPointer(cap, b"dltensor")
    if not ctypes.c_uint64.from_address(ptr + _BYTE_OFFSET).value:
        return ptr  # the producer's own DLTensor, valid while the capsule lives
    src = C.DLManagedTensor.from_address(ptr).dl_tensor
    t = C.DLTensor()  # a copy with the offset folded into the pointer (tc_run takes none)
    ctypes.pointer(t)[0] = src
    t.data = (src.data or 0) + src.byte_offset
    t.byte_offset = 0
    keep.append(t)
    return ctypes.addressof(t)


class Slot:
    """One tensor argument's DLTensor, kept by a call signature and
    rewritten for every call (``fill``), with room for TC_MAX_DIMS sizes and
    strides."""
    __slots__ = ("t", "addr", "shape", "strides", "strides_ptr")

    def __init__(self) -> None:
        self.t = t = C.DLTensor()
        self.shape = _DIMS()
        self.strides = self.strides_ptr = _DIMS()  # an array is assigned as a pointer
        t.shape = self.shape
        t.dtype.lanes = 1
        self.addr = ctypes.addressof(t)


_DIMS = ctypes.c_int64 * C.TC_MAX_DIMS


_TORCH: dict = {}  # "ok": the fast path may be used; "dl": torch dtype -> (code, bits)


def _torch_fast() -> bool:
    """Whether torch tensors may be described from their attributes: a CUDA
    (not ROCm) build of torch; decided once."""
    ok = _TORCH.get("ok")
    if ok is None:
        torch = sys.modules["torch"]
        ok = getattr(getattr(torch, "version", None), "hip", None) is None
        _TORCH["ok"] = ok
        _TORCH["dl"] = {torch.float32: C.DTYPE_TO_DL["f32"], torch.float16: C.DTYPE_TO_DL["f16"],
                        torch.bfloat16: C.DTYPE_TO_DL["bf16"], torch.float64: C.DTYPE_TO_DL["f64"],
                        torch.int32: C.DTYPE_TO_DL["i32"], torch.int64: C.DTYPE_TO_DL["i64"],
                        torch.bool: C.DTYPE_TO_DL["bool"]}
        _TORCH["strided"] = torch.strided
    return ok


def _fill_torch(slot: Slot, obj: Any) -> bool:
    """slot describes torch tensor obj as its __dlpack__ would (the data
    pointer already at the first element); False for anything that path
    must see (another layout, conjugate or negative views, other dtypes or
    devices, too many dims)."""
    if obj.layout is not _TORCH["strided"] or obj.is_conj() or obj.is_neg():
        return False
    dl = _TORCH["dl"].get(obj.dtype)
    ndim = obj.dim()
    if dl is None or ndim > C.TC_MAX_DIMS:
        return False
    t = slot.t
    if obj.is_cuda:
        t.device.device_type, t.device.device_id = C.kDLCUDA, obj.get_device()
    elif obj.device.type == "cpu":
        t.device.device_type, t.device.device_id = C.kDLCPU, 0
    else:
        return False
    t.data = obj.data_ptr() or None
    t.ndim = ndim
    t.dtype.code, t.dtype.bits = dl
    sh = slot.shape
    for i, d in enumerate(obj.shape):
        sh[i] = d
    if obj.is_contiguous():
        t.strides = None  # DLPack: compact row-major
    else:
        st = slot.strides
        for i, d in enumerate(obj.stride()):
            st[i] = d
        t.strides = slot.strides_ptr
    t.byte_offset = 0
    return True


def fill(slot: Slot, obj: Any, what: str, dev: Tuple[int, int], dl_stream: Optional[int],
         keep: List[Any], writable: bool) -> int:
    """The address of a DLTensor describing obj, as to_dltensor gives it:
    slot rewritten for a NumPy array, or for a torch tensor when no stream
    synchronization is asked (dl_stream -1, or the CPU); else to_dltensor's
    (the producer's capsule, kept alive in keep)."""
    tp = type(obj)
    if tp is np.ndarray:
        dt = _NP_TO_DTYPE.get(obj.dtype)
        ndim = obj.ndim
        if dt is None or ndim > C.TC_MAX_DIMS or (writable and not obj.flags.writeable):
            return to_dltensor(obj, what, dev, dl_stream, keep, writable)  # its message
        t = slot.t
        t.data = obj.__array_interface__["data"][0] or None
        t.device.device_type, t.device.device_id = C.kDLCPU, 0
        t.ndim = ndim
        t.dtype.code, t.dtype.bits = C.DTYPE_TO_DL[dt]
        sh = slot.shape
        for i, d in enumerate(obj.shape):
            sh[i] = d
        if obj.flags.c_contiguous:
            t.strides = None
        else:
            isz = obj.itemsize
            st = slot.strides
            for i, d in enumerate(obj.strides):
                if d % isz:
                    raise ValueError("an array whose strides are not a multiple of its item size")
                st[i] = d // isz
            t.strides = slot.strides_ptr
        t.byte_offset = 0
        keep.append(obj)
        return slot.addr
    if (dl_stream is None or dl_stream == -1) and library_of(obj) == "torch" and _torch_fast() \
            and _fill_torch(slot, obj):
        keep.append(obj)
        return slot.addr
    return to_dltensor(obj, what, dev, dl_stream, keep, writable)


def numel(obj: Any) -> int:
    """The number of elements of a tensor."""
    shape = obj.shape
    n = 1
    for d in shape:
        n *= int(d)
    return n


def dtype_of(obj: Any) -> str:
    """A NumPy array's tensorc dtype."""
    if isinstance(obj, bfloat16):
        return "bf16"
    return _NP_TO_DTYPE[obj.dtype]


def dl_dtype_name(dt: C.DLDataType) -> str:
    return C.DL_TO_DTYPE.get((dt.code, dt.bits), f"code {dt.code} {dt.bits} bits")


def empty_like_lib(ref: Any, dev: Tuple[int, int], shape: Sequence[int], dtype: str) -> Any:
    """A new uninitialised tensor of ref's library, on ref's device."""
    lib = library_of(ref)
    shape = tuple(int(s) for s in shape)
    if lib == "numpy" or (not is_cuda(dev) and lib not in ("torch",)):
        if dtype == "bf16" and _NP_BF16 is None:
            return bfloat16(np.empty(shape, np.uint16))
        return np.empty(shape, np_dtype(dtype))
    if lib == "torch":
        torch = sys.modules["torch"]
        tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
               "f64": torch.float64, "i32": torch.int32, "i64": torch.int64,
               "bool": torch.bool}[dtype]
        return torch.empty(shape, dtype=tdt, device=ref.device)
    if lib == "cupy":
        cupy = sys.modules["cupy"]
        if dtype == "bf16" and _NP_BF16 is None:
            raise TypeError("CuPy has no bfloat16 here (no ml_dtypes): pass out= tensors")
        with cupy.cuda.Device(dev[1]):
            return cupy.empty(shape, dtype=np_dtype(dtype))
    raise TypeError(f"cannot allocate outputs for {lib} tensors: pass out=")


def wrap_output(ref: Any, t: Any) -> Any:
    """The output as the caller's library sees it (JAX: a JAX array sharing
    the memory of the tensor allocated for it)."""
    if library_of(ref) == "jax":
        import jax.dlpack  # the caller's tensors are JAX arrays, so JAX is there
        return jax.dlpack.from_dlpack(t)
    return t


def alloc_for(ref: Any, dev: Tuple[int, int], shape: Sequence[int], dtype: str) -> Any:
    """Allocate an output for ref's library.  JAX arrays are immutable, so
    for JAX inputs the memory comes from PyTorch (or CuPy) and is handed to
    JAX by DLPack afterwards (wrap_output)."""
    if library_of(ref) == "jax":
        if not is_cuda(dev):
            return empty_like_lib(np.empty(0), dev, shape, dtype)
        for lib in ("torch", "cupy"):
            if lib in sys.modules or _importable(lib):
                mod = __import__(lib)
                if lib == "torch":
                    return empty_like_lib(mod.empty(0, device=f"cuda:{dev[1]}"), dev, shape, dtype)
                with mod.cuda.Device(dev[1]):
                    return empty_like_lib(mod.empty(0), dev, shape, dtype)
        raise TypeError("outputs for JAX arrays are allocated with PyTorch or CuPy: neither is "
                        "installed; pass out=")
    return empty_like_lib(ref, dev, shape, dtype)


def _importable(name: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(name) is not None
