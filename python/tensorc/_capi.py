"""_capi.py - the C library through ctypes: finding and loading
libtensorc.so, the structures of tensorc.h and DLPack, and the functions'
signatures.  Nothing here knows about NumPy or any tensor library.

Where the library is looked for, first found wins:

1. ``$TENSORC_LIB``: the path of a ``libtensorc.so``;
2. beside this package (``pip install`` copies the checkout's build in);
3. the build tree of the checkout this package sits in
   (``<checkout>/build/package/lib/libtensorc.so``), for use from a
   checkout with ``PYTHONPATH=<checkout>/python``;
4. the system's search path (``ctypes.util.find_library("tensorc")``), for
   an installed library.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, Union, c_char_p, c_double, c_int,
                    c_int32, c_int64, c_longlong, c_size_t, c_uint, c_uint8, c_uint16,
                    c_uint64, c_void_p)
from typing import List, Optional

# --- DLPack (dlpack.h) -------------------------------------------------------

kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                            ("deleter", CFUNCTYPE(None, POINTER(DLManagedTensor)))]

# tensorc's dtype names <-> DLPack (code, bits)
DTYPE_TO_DL = {"f32": (kDLFloat, 32), "f16": (kDLFloat, 16), "f64": (kDLFloat, 64),
               "bf16": (kDLBfloat, 16), "i32": (kDLInt, 32), "i64": (kDLInt, 64),
               "bool": (kDLBool, 8)}
DL_TO_DTYPE = {v: k for k, v in DTYPE_TO_DL.items()}
DL_TO_DTYPE[(kDLUInt, 8)] = "bool"  # some producers export bool as uint8 -- never chosen by us

# --- tensorc.h ----------------------------------------------------------------

TC_OK = 0
STATUS_NAMES = ["TC_OK", "TC_ERR_SYNTAX", "TC_ERR_COMPILE", "TC_ERR_LIMIT", "TC_ERR_INVALID_ARG",
                "TC_ERR_NOT_FOUND", "TC_ERR_UNSUPPORTED", "TC_ERR_IO", "TC_ERR_NOMEM",
                "TC_ERR_NO_DEVICE", "TC_ERR_INTERNAL"]
(TC_ARG_TENSOR, TC_ARG_FLOAT, TC_ARG_INT, TC_ARG_BOOL, TC_ARG_TENSORS, TC_ARG_DTYPE,
 TC_ARG_SIZE) = range(7)
TC_MAX_DIMS = 8
TC_DEVICE_AUTO = -1


class tc_options(Structure):
    _fields_ = [("device", c_int), ("cache_dir", c_char_p), ("fast_math", c_int),
                ("line_info", c_int)]


class _tc_arg_v(Union):
    _fields_ = [("ptr", c_void_p), ("f", c_double), ("i", c_longlong), ("b", c_int),
                ("dtype", c_char_p)]


class tc_arg(Structure):
    _fields_ = [("name", c_char_p), ("kind", c_int), ("v", _tc_arg_v)]


class tc_value_info(Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_char_p), ("dtype_var", c_int), ("scalar", c_int),
                ("star", c_int), ("rank", c_int), ("dims", POINTER(c_char_p)), ("inout", c_int),
                ("has_default", c_int), ("default_value", c_double)]


class tc_function_info(Structure):
    _fields_ = [("name", c_char_p), ("nparams", c_size_t), ("params", POINTER(tc_value_info)),
                ("noutputs", c_size_t), ("outputs", POINTER(tc_value_info)),
                ("elementwise", c_int)]


class tc_shape(Structure):
    _fields_ = [("dtype", DLDataType), ("ndim", c_int), ("shape", c_int64 * TC_MAX_DIMS)]


_SIGNATURES = {
    # name: (restype, argtypes)
    "tc_version_string": (c_char_p, []),
    "tc_version_number": (c_uint, []),
    "tc_status_str": (c_char_p, [c_int]),
    "tc_ctx_create_ex": (c_int, [POINTER(c_void_p), POINTER(tc_options)]),
    "tc_ctx_free": (None, [c_void_p]),
    "tc_compile": (c_int, [c_void_p, c_char_p, c_size_t, c_char_p, POINTER(c_void_p)]),
    "tc_compile_file": (c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    "tc_program_free": (None, [c_void_p]),
    "tc_program_dump": (c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_char_p)]),
    "tc_program_source": (c_char_p, [c_void_p, c_char_p]),
    "tc_run": (c_int, [c_void_p, c_char_p, POINTER(tc_arg), c_size_t, c_void_p]),
    "tc_run_foreach": (c_int, [c_void_p, c_char_p, c_size_t, POINTER(tc_arg), c_size_t,
                               c_void_p]),
    "tc_errmsg": (c_char_p, [c_void_p]),
    "tc_error_loc": (c_int, [c_void_p, POINTER(c_char_p), POINTER(c_int), POINTER(c_int)]),
    # introspection and the interpreter (newer libraries)
    "tc_program_functions": (c_int, [c_void_p, POINTER(c_size_t), POINTER(POINTER(c_char_p))]),
    "tc_program_function": (c_int, [c_void_p, c_char_p, POINTER(POINTER(tc_function_info))]),
    "tc_output_shapes": (c_int, [c_void_p, c_char_p, POINTER(tc_arg), c_size_t,
                                 POINTER(tc_shape), c_size_t]),
    "tc_shapes": (c_int, [c_void_p, c_char_p, POINTER(tc_arg), c_size_t, POINTER(tc_shape),
                          c_size_t, POINTER(tc_shape), c_size_t]),
    "tc_run_cpu": (c_int, [c_void_p, c_char_p, POINTER(tc_arg), c_size_t]),
    "tc_program_image": (c_int, [c_void_p, c_char_p, POINTER(tc_arg), c_size_t, c_int, c_int,
                                 POINTER(c_void_p), POINTER(c_size_t)]),
}
TC_IMAGE_PTX, TC_IMAGE_CUBIN = 0, 1

_REQUIRED = ["tc_version_string", "tc_ctx_create_ex", "tc_compile", "tc_compile_file",
             "tc_program_functions", "tc_program_function", "tc_output_shapes", "tc_run_cpu"]


def candidates() -> List[str]:
    """The paths tried for libtensorc.so, in order (see the module's docstring)."""
    out = []
    env = os.environ.get("TENSORC_LIB")
    if env:
        out.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    out.append(os.path.join(here, "libtensorc.so"))
    checkout = os.path.dirname(os.path.dirname(here))
    out.append(os.path.join(checkout, "build", "package", "lib", "libtensorc.so"))
    found = ctypes.util.find_library("tensorc")
    if found:
        out.append(found)
    return out


class LibraryNotFound(ImportError):
    """libtensorc.so could not be found or loaded."""


def load() -> "ctypes.CDLL":
    env = os.environ.get("TENSORC_LIB")
    tried = []
    for path in candidates():
        # An explicit TENSORC_LIB must load: falling back past it would hide a mistake.
        if path != env and os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (not there)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            if path == env:
                raise LibraryNotFound(f"TENSORC_LIB={env}: {e}") from None
            tried.append(f"{path} ({e})")
            continue
        missing = [n for n in _REQUIRED if not hasattr(lib, n)]
        if missing:
            raise LibraryNotFound(f"{path} is too old for this package: it lacks "
                                  + ", ".join(missing))
        for name, (res, args) in _SIGNATURES.items():
            if hasattr(lib, name):
                f = getattr(lib, name)
                f.restype, f.argtypes = res, args
        lib._tensorc_path = path
        return lib
    raise LibraryNotFound("libtensorc.so not found; build it (scripts/setup.sh, or cmake -S . "
                          "-B build && cmake --build build) or set TENSORC_LIB.  Tried: "
                          + "; ".join(tried))


_lib: Optional[ctypes.CDLL] = None


def lib() -> "ctypes.CDLL":
    """The loaded library (loaded on first use)."""
    global _lib
    if _lib is None:
        _lib = load()
    return _lib
