"""tensorc: compile tensor programs to fused CUDA kernels, and run them on
PyTorch, CuPy, JAX or NumPy tensors.

A program is text in tensorc's language (docs/language.md in the
repository); each function becomes one or more fused CUDA kernels::

    import numpy as np, tensorc

    prog = tensorc.compile('''
    fn softmax(x: f32[N, D]) -> f32[N, D] {
        e = exp(x - max(x, axis=-1, keepdim=true))
        return e / sum(e, axis=-1, keepdim=true)
    }''')
    prog.functions                    # ['softmax']
    prog.softmax.params               # (Value(name='x', dtype='f32', dims=('N', 'D'), ...),)
    y = prog.softmax(np.random.rand(4, 8).astype(np.float32))   # CPU: the interpreter
    y = prog.softmax(torch.randn(4096, 1000, device="cuda"))    # GPU: the kernels,
                                      # on torch.cuda.current_stream(), y a torch tensor
    print(prog.source("softmax"))     # the CUDA source and launch plan
    print(prog.explain("softmax"))    # every fusion decision, and why

Calls
    CUDA tensors (anything with ``__dlpack__``) run on the GPU without
    copies, on the caller's current stream (PyTorch's current stream for
    torch tensors) or ``stream=``; NumPy arrays run on the CPU through the
    reference interpreter.  Outputs are allocated in the caller's library
    and returned, or passed with ``out=``.  :meth:`Function.foreach` runs an
    elementwise function over lists of tensors in one launch; a
    :class:`TensorList` exports such a list once for many calls.

Errors
    Every error of the library is a :class:`TensorcError` (subclasses
    :class:`CompileError`, :class:`ArgumentError`, ...), carrying the
    message and, for errors in a program, ``file``, ``line``, ``col`` and
    ``caret`` (the source line with a caret under the column).

The library
    The package loads ``libtensorc.so`` from, in order: ``$TENSORC_LIB``;
    beside the package (``pip install`` copies it in); the checkout's build
    tree (``build/package/lib``); the system's library path.
    :data:`library_path` says which one was loaded.
"""
from . import _capi
from ._core import (ArgumentError, CompileError, Context, Function, FunctionNotFoundError,
                    InternalError, NoDeviceError, Program, TensorcError, TensorList,
                    UnsupportedError, Value,
                    compile, compile_file, default_context)
from ._tensors import bfloat16

__all__ = ["compile", "compile_file", "Context", "Program", "Function", "Value", "TensorList", "TensorcError",
           "CompileError", "ArgumentError", "FunctionNotFoundError", "NoDeviceError",
           "UnsupportedError", "InternalError", "bfloat16", "default_context", "library_path",
           "library_version", "__version__"]

__version__ = "0.1.0"

for _name in __all__:  # help() and tracebacks say tensorc.Program, not tensorc._core.Program
    _obj = globals().get(_name)
    if isinstance(_obj, type) or callable(_obj):
        try:
            _obj.__module__ = __name__
        except (AttributeError, TypeError):
            pass

_lib = _capi.lib()
#: The path of the libtensorc.so this package loaded.
library_path: str = _lib._tensorc_path
#: The loaded library's version, e.g. "0.1.0".
library_version: str = _lib.tc_version_string().decode()
