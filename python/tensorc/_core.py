"""_core.py - contexts, programs and functions over the C API."""
from __future__ import annotations

import ctypes
import difflib
import os
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _capi as C
from . import _tensors as T

# --- errors -------------------------------------------------------------------


class TensorcError(Exception):
    """An error reported by the tensorc library.

    Attributes:
        status:  the C status name, e.g. ``"TC_ERR_SYNTAX"``.
        message: the library's full text: for an error in a program,
                 ``"file:line:col: error: ..."``, the source line and a caret.
        file, line, col: where the error is (``None`` when it has no location).
        caret:   the source line and the caret line under it (``None``
                 without a location).
        hint:    for a known slip (a PyTorch spelling such as ``x.sum(1)``,
                 ``dim=``, ``True``), the fix in tensorc's terms; else ``None``.
    """

    def __init__(self, status: str, message: str, file: Optional[str] = None,
                 line: Optional[int] = None, col: Optional[int] = None,
                 caret: Optional[str] = None, hint: Optional[str] = None):
        super().__init__(message)
        self.status, self.message = status, message
        self.file, self.line, self.col, self.caret = file, line, col, caret
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class CompileError(TensorcError):
    """A program does not parse or check (syntax, names, types, shapes, limits)."""


class ArgumentError(TensorcError, ValueError):
    """An argument of a call is wrong (dtype, shape, device, layout, a missing or
    unknown name): the message names it."""


class FunctionNotFoundError(TensorcError, LookupError):
    """No function of that name in the program (or the prelude)."""


class NoDeviceError(TensorcError, RuntimeError):
    """No GPU, driver, NVRTC or cuBLAS where one is needed."""


class UnsupportedError(TensorcError):
    """A stage or construct that tensorc does not handle yet."""


class InternalError(TensorcError):
    """A verifier failed: a bug in tensorc (please report it)."""


_ERROR_CLASSES = {"TC_ERR_SYNTAX": CompileError, "TC_ERR_COMPILE": CompileError,
                  "TC_ERR_LIMIT": CompileError, "TC_ERR_INVALID_ARG": ArgumentError,
                  "TC_ERR_NOT_FOUND": FunctionNotFoundError, "TC_ERR_NO_DEVICE": NoDeviceError,
                  "TC_ERR_UNSUPPORTED": UnsupportedError, "TC_ERR_INTERNAL": InternalError}


def _error(lib: Any, ctx: int, status: int) -> TensorcError:
    name = C.STATUS_NAMES[status] if 0 <= status < len(C.STATUS_NAMES) else f"status {status}"
    msg = (lib.tc_errmsg(ctx) or b"").decode("utf-8", "replace")
    f, ln, col = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int()
    file = line = column = caret = None
    if lib.tc_error_loc(ctx, ctypes.byref(f), ctypes.byref(ln), ctypes.byref(col)):
        file = f.value.decode("utf-8", "replace") if f.value else None
        line, column = ln.value, col.value
        # tensorc.h: the message is the located line, then the source line and the caret
        rest = msg.split("\n", 1)[1] if "\n" in msg else ""
        caret = rest.rstrip("\n") or None
    # the library's hint line (src/base/diag.h): "    hint: ..." after the caret
    hint = next((ln[len("    hint: "):] for ln in msg.split("\n") if ln.startswith("    hint: ")), None)
    if not msg:
        msg = name
    return _ERROR_CLASSES.get(name, TensorcError)(name, msg, file, line, column, caret, hint)


# --- contexts -----------------------------------------------------------------


class Context:
    """A tensorc context: compiled kernels, a device-memory pool and a kernel
    cache live here.  One thread at a time uses a context (calls take its
    lock); use one context per thread or per CUDA stream for concurrency.

    Args:
        device:    CUDA device ordinal, or ``None`` for the device of the
                   first call's tensors.
        cache_dir: the kernel cache directory (default: ``$TENSORC_CACHE_DIR``,
                   else ``$XDG_CACHE_HOME/tensorc``, else ``~/.cache/tensorc``).
        fast_math: compile kernels with NVRTC ``--use_fast_math``.
        line_info: compile kernels with ``-lineinfo`` (for profilers).
    """

    def __init__(self, device: Optional[int] = None, cache_dir: Optional[str] = None,
                 fast_math: bool = False, line_info: bool = False):
        self._lib = C.lib()
        self.lock = threading.RLock()
        opts = C.tc_options(C.TC_DEVICE_AUTO if device is None else int(device),
                            os.fsencode(cache_dir) if cache_dir else None,
                            int(bool(fast_math)), int(bool(line_info)))
        h = ctypes.c_void_p()
        st = self._lib.tc_ctx_create_ex(ctypes.byref(h), ctypes.byref(opts))
        if st != C.TC_OK:
            name = C.STATUS_NAMES[st]
            raise _ERROR_CLASSES.get(name, TensorcError)(
                name, f"tc_ctx_create_ex: {name} (device={device!r})")
        self._h = h.value
        # the handles of this context's live programs: tc_ctx_free wants them
        # freed first, and at interpreter exit the garbage collector may
        # finalize a context before its programs (plain ints, not weak
        # references: those are cleared before finalizers run)
        self._programs: Dict[int, bool] = {}

    def __del__(self) -> None:
        h, self._h = getattr(self, "_h", None), None
        if h:
            for ph in list(getattr(self, "_programs", {})):
                self._programs.pop(ph, None)
                self._lib.tc_program_free(ph)
            self._lib.tc_ctx_free(h)

    def compile(self, source: str, filename: str = "<string>") -> "Program":
        """Parse and check a program given as text; ``filename`` appears in messages."""
        data = source.encode("utf-8")
        p = ctypes.c_void_p()
        with self.lock:
            st = self._lib.tc_compile(self._h, data, len(data), os.fsencode(filename),
                                      ctypes.byref(p))
            if st != C.TC_OK:
                raise _error(self._lib, self._h, st)
        return Program(self, p.value)

    def compile_file(self, path: Union[str, "os.PathLike[str]"]) -> "Program":
        """Parse and check the program in a file."""
        p = ctypes.c_void_p()
        with self.lock:
            st = self._lib.tc_compile_file(self._h, os.fsencode(os.fspath(path)), ctypes.byref(p))
            if st != C.TC_OK:
                raise _error(self._lib, self._h, st)
        return Program(self, p.value)


_default: Optional[Context] = None
_default_lock = threading.Lock()


def default_context() -> Context:
    """The context :func:`compile` and :func:`compile_file` use (made on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Context()
        return _default


# --- descriptions ---------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """One parameter or output of a function, as its signature declares it.

    Attributes:
        name:      as in the signature (``"out"`` for a single unnamed result).
        dtype:     ``"f32"``, ``"bf16"``, ...; for a dtype variable its letter (``"T"``).
        dtype_var: True when ``dtype`` names a dtype variable.
        dims:      the symbolic dims (``("N", "D")``; ``("*",)`` for ``[*]``; ``()`` for a scalar).
        scalar:    a scalar parameter (pass a Python number).
        star:      a ``[*]`` tensor: any shape.
        inout:     written back in place.
        default:   a scalar parameter's default, or ``None``.
    """
    name: str
    dtype: str
    dtype_var: bool
    dims: Tuple[str, ...]
    scalar: bool
    star: bool
    inout: bool
    default: Optional[float]

    def __str__(self) -> str:
        t = self.dtype if self.scalar else f"{self.dtype}[{', '.join(self.dims)}]"
        s = f"{self.name}: {'inout ' if self.inout else ''}{t}"
        return s + (f" = {self.default:g}" if self.default is not None else "")


def _value(v: C.tc_value_info) -> Value:
    dims = tuple(v.dims[k].decode() for k in range(v.rank)) if v.rank else ()
    return Value(v.name.decode(), v.dtype.decode(), bool(v.dtype_var), dims, bool(v.scalar),
                 bool(v.star), bool(v.inout), v.default_value if v.has_default else None)


StreamLike = Union[int, Any]
Tensor = Any  # a NumPy array, or any object with __dlpack__ (torch, cupy, jax)


def _stream_handle(stream: StreamLike) -> int:
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):  # torch.cuda.Stream, cupy Stream, ...
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    raise TypeError(f"stream: expected an integer handle or a stream object, got "
                    f"{type(stream).__name__}")


_MISSING = object()


def _streams(ref: Any, dev: Tuple[int, int], stream: Optional[StreamLike]) -> Tuple[int, int]:
    """The CUDA stream to run on (a handle, 0 for the legacy default stream)
    and the value to pass to the inputs' ``__dlpack__(stream=...)``.

    Without ``stream=``, the caller's current stream of its library: the
    tensors are already ordered on it, so PyTorch is asked for no
    synchronization (DLPack's -1) and CuPy is given that same stream (on
    which it synchronizes nothing).  Libraries without a current stream
    (JAX) run on the legacy default stream, DLPack's 1, as does an explicit
    ``stream=0``; the producer then makes that stream wait for its work."""
    if stream is not None:
        handle = _stream_handle(stream)
        return handle, handle or 1
    handle = T.current_stream(ref, dev)
    if T.library_of(ref) == "torch":
        return handle, -1
    return handle, handle or 1


def _scalar_kind(name: str, v: Any) -> int:
    """The tc_arg kind of scalar v, as Function._scalar chooses it."""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return C.TC_ARG_BOOL
    if isinstance(v, int) or hasattr(v, "__index__"):
        return C.TC_ARG_INT
    if isinstance(v, float) or hasattr(v, "__float__"):
        return C.TC_ARG_FLOAT
    raise TypeError(f"parameter '{name}': expected a tensor or a number, got {type(v).__name__}")


class _Plan:
    """One call signature's tc_arg array, built once and refilled by every
    call with that signature (the same parameters given, each a tensor or
    the same kind of number, the same outputs passed, the same dtypes):
    names, kinds and dtype bindings are set here; a call writes only the
    tensors' DLTensor addresses (into their reused Slots) and the numbers.
    Inputs and dtype bindings come first, so tc_output_shapes reads the
    array's first ``nin`` entries.  Each thread has its own (Function._tls),
    so calls from two threads never share one."""

    def __init__(self, f: "Function", key: Tuple[Any, ...]) -> None:
        kinds, given, dts = key
        n_in = sum(1 for k in kinds if k >= 0) + len(dts)  # -1: not given
        n_out = sum(1 for o in f.outputs if not o.inout)
        self.n = n_in + n_out
        self.nin = n_in
        self.arr = (C.tc_arg * max(self.n, 1))()
        self.ins: List[Tuple[Value, Any, Optional[T.Slot], int]] = []
        i = 0
        for p, kind in zip(f.params, kinds):
            if kind < 0:
                continue
            a = self.arr[i]
            a.name, a.kind = f._bnames[p.name], kind
            self.ins.append((p, a.v, T.Slot() if kind == C.TC_ARG_TENSOR else None, kind))
            i += 1
        self._dtype_names = []  # the bytes the array's char pointers point at
        for var, dt in dts:
            a = self.arr[i]
            b = (var.encode(), str(dt).encode())
            self._dtype_names.append(b)
            a.name, a.kind, a.v.dtype = b[0], C.TC_ARG_DTYPE, b[1]
            i += 1
        self.outs: List[Tuple[int, Value, Any, Optional[T.Slot]]] = []
        fresh = iter(given) if given else None
        self.alloc = False
        for k, o in enumerate(f.outputs):
            if o.inout:
                self.outs.append((k, o, None, None))
                continue
            if not (next(fresh) if fresh else False):
                self.alloc = True
            a = self.arr[i]
            a.name, a.kind = f._bnames[o.name], C.TC_ARG_TENSOR
            self.outs.append((k, o, a.v, T.Slot()))
            i += 1
        self._shapes = (C.tc_shape * max(len(f.outputs), 1))()

    def shapes(self, f: "Function") -> List[Tuple[Tuple[int, ...], str]]:
        """The outputs' (shape, dtype) from the inputs filled in."""
        prog = f.program
        outs, n = self._shapes, len(f.outputs)
        with prog.context.lock:
            st = prog._lib.tc_output_shapes(prog._h, f._bname, self.arr, self.nin, outs, n)
            if st != C.TC_OK:
                raise _error(prog._lib, prog.context._h, st)
        return [(tuple(outs[k].shape[:outs[k].ndim]), T.dl_dtype_name(outs[k].dtype))
                for k in range(n)]


class Function:
    """One function of a program: call it, introspect it, read its kernels.

    Calling it runs the function on its tensor arguments, which may come
    from any library that speaks DLPack (PyTorch, CuPy, JAX) or be NumPy
    arrays:

    - CUDA tensors run on the GPU, asynchronously, on the caller's current
      stream (PyTorch's ``torch.cuda.current_stream()`` for torch tensors,
      CuPy's current stream for CuPy arrays, else the default stream) or
      on ``stream=``; no data is copied.
    - CPU tensors (NumPy arrays) run through the reference interpreter,
      synchronously.

    Tensor parameters take tensors, scalar parameters Python numbers;
    both by position or by name.  Outputs are allocated in the inputs'
    library and returned (one output: the tensor; several: a tuple; an
    ``inout`` parameter's output is the tensor passed for it), or passed in
    with ``out=`` (a tensor, a sequence in output order, or a dict by name).
    ``dtypes={"T": "bf16"}`` binds dtype variables that no tensor binds.
    """

    def __init__(self, program: "Program", info: C.tc_function_info):
        self.program = program
        self.name: str = info.name.decode()
        self._bname = info.name
        self.params: Tuple[Value, ...] = tuple(_value(info.params[i]) for i in range(info.nparams))
        self.outputs: Tuple[Value, ...] = tuple(_value(info.outputs[i])
                                                for i in range(info.noutputs))
        self.elementwise: bool = bool(info.elementwise)
        self._pindex = {p.name: i for i, p in enumerate(self.params)}
        self._bnames = {v.name: v.name.encode() for v in self.params + self.outputs}
        # outputs the caller may pass or gets back as new tensors
        self._fresh = [o for o in self.outputs if not o.inout]
        self._tls = threading.local()  # .plans: this thread's _Plan per call signature

    def __repr__(self) -> str:
        outs = ", ".join(str(o) for o in self.outputs)
        return f"<tensorc.Function {self.name}({', '.join(map(str, self.params))}) -> ({outs})>"

    @property
    def signature(self) -> str:
        """The signature, as ``name(params) -> (outputs)``."""
        return repr(self)[len("<tensorc.Function "):-1]

    # --- reading -----------------------------------------------------------------

    def source(self) -> str:
        """The CUDA source generated for this function (kernels and launch plan)."""
        return self.program.source(self.name)

    def explain(self) -> str:
        """Every fusion decision for this function, and why."""
        return self.program.explain(self.name)

    def dump(self, stage: str) -> str:
        """One stage of this function: see :meth:`Program.dump`."""
        return self.program.dump(stage, self.name)

    def ptx(self, arch: int = 90, dtypes: Optional[Mapping[str, str]] = None) -> str:
        """This function's kernels as PTX: see :meth:`Program.ptx`."""
        return self.program.ptx(self.name, arch, dtypes)

    def cubin(self, arch: int = 90, dtypes: Optional[Mapping[str, str]] = None) -> bytes:
        """This function's kernels as a CUBIN: see :meth:`Program.cubin`."""
        return self.program.cubin(self.name, arch, dtypes)

    # --- binding arguments ----------------------------------------------------------

    def _bind(self, args: Sequence[Any], kwargs: Dict[str, Any],
              partial: bool = False) -> Dict[str, Any]:
        if len(args) > len(self.params):
            raise TypeError(f"{self.name}() takes {len(self.params)} arguments, got {len(args)}")
        bound = {p.name: a for p, a in zip(self.params, args)}
        for k, v in kwargs.items():
            if k not in self._pindex:
                near = difflib.get_close_matches(k, list(self._pindex), 1)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                raise TypeError(f"{self.name}() has no parameter '{k}'{hint}")
            if k in bound:
                raise TypeError(f"{self.name}() got parameter '{k}' twice")
            bound[k] = v
        missing = [p.name for p in self.params if p.name not in bound and p.default is None]
        if missing and not partial:
            raise TypeError(f"{self.name}() is missing " + ", ".join(f"'{m}'" for m in missing))
        return bound

    def _outs(self, out: Any) -> Dict[str, Any]:
        if out is None:
            return {}
        if isinstance(out, Mapping):
            names = {o.name for o in self._fresh}
            bad = [k for k in out if k not in names]
            if bad:
                raise TypeError(f"{self.name}(): out= names no output '{bad[0]}' (outputs: "
                                + ", ".join(sorted(names)) + ")")
            return dict(out)
        if T.is_tensor(out):
            out = (out,)
        out = list(out)
        if len(out) != len(self._fresh):
            raise TypeError(f"{self.name}(): out= has {len(out)} tensors for "
                            f"{len(self._fresh)} outputs")
        return {o.name: t for o, t in zip(self._fresh, out)}

    @staticmethod
    def _scalar(name: bytes, v: Any) -> C.tc_arg:
        a = C.tc_arg()
        a.name = name
        if isinstance(v, bool) or type(v).__name__ == "bool_":
            a.kind, a.v.b = C.TC_ARG_BOOL, int(bool(v))
        elif isinstance(v, int) or hasattr(v, "__index__"):
            a.kind, a.v.i = C.TC_ARG_INT, int(v)
        elif isinstance(v, float) or hasattr(v, "__float__"):
            a.kind, a.v.f = C.TC_ARG_FLOAT, float(v)
        else:
            raise TypeError(f"parameter '{name.decode()}': expected a tensor or a number, got "
                            f"{type(v).__name__}")
        return a

    @staticmethod
    def _dtype_args(dtypes: Optional[Mapping[str, str]]) -> List[C.tc_arg]:
        out = []
        for var, dt in (dtypes or {}).items():
            a = C.tc_arg()
            a.name, a.kind, a.v.dtype = var.encode(), C.TC_ARG_DTYPE, str(dt).encode()
            out.append(a)
        return out

    def _where(self, values: Sequence[Any]) -> Tuple[Any, Tuple[int, int]]:
        """The first tensor (outputs are allocated like it) and the device to
        run on: the GPU if any tensor is on it (the C API then names any
        tensor that is not)."""
        ref, dev = None, (C.kDLCPU, 0)
        for v in values:
            if T.is_tensor(v):
                d = T.device_of(v)
                if T.is_cuda(d):
                    return v, d
                if ref is None:
                    ref, dev = v, d
        return ref, dev

    def _tensor_arg(self, name: str, obj: Any, dev: Tuple[int, int], dl_stream: Optional[int],
                    keep: List[Any], writable: bool) -> C.tc_arg:
        a = C.tc_arg()
        a.name, a.kind = self._bnames[name], C.TC_ARG_TENSOR
        a.v.ptr = T.to_dltensor(obj, f"{self.name}: '{name}'", dev, dl_stream, keep, writable)
        return a

    def _input_args(self, bound: Dict[str, Any], dev: Tuple[int, int], dl_stream: Optional[int],
                    keep: List[Any]) -> List[C.tc_arg]:
        args = []
        for p in self.params:
            v = bound.get(p.name, _MISSING)
            if v is _MISSING:
                continue
            if p.scalar:  # a tensor here gets the C API's message naming the parameter
                args.append(self._tensor_arg(p.name, v, dev, dl_stream, keep, False)
                            if T.is_tensor(v) else self._scalar(self._bnames[p.name], v))
            else:
                args.append(self._tensor_arg(p.name, v, dev, dl_stream, keep, p.inout))
        return args

    def _shapes(self, args: List[C.tc_arg]) -> List[Tuple[Tuple[int, ...], str]]:
        prog = self.program
        n = len(self.outputs)
        outs = (C.tc_shape * max(n, 1))()
        arr = (C.tc_arg * len(args))(*args)
        with prog.context.lock:
            st = prog._lib.tc_output_shapes(prog._h, self._bname, arr, len(args), outs, n)
            if st != C.TC_OK:
                raise _error(prog._lib, prog.context._h, st)
        return [(tuple(outs[k].shape[:outs[k].ndim]), T.dl_dtype_name(outs[k].dtype))
                for k in range(n)]

    # --- introspection ----------------------------------------------------------

    def output_shapes(self, *args: Any, dtypes: Optional[Mapping[str, str]] = None,
                      **kwargs: Any) -> List[Tuple[Tuple[int, ...], str]]:
        """The (shape, dtype) of each output (in :attr:`outputs` order) for
        these inputs; only their shapes and dtypes are read."""
        bound = self._bind(args, kwargs)
        keep: List[Any] = []
        ref, dev = self._where(bound.values())
        # only shapes and dtypes are read: DLPack's -1 asks the producer for no synchronization
        return self._shapes(self._input_args(bound, dev, -1 if T.is_cuda(dev) else None, keep)
                            + self._dtype_args(dtypes))

    def shapes(self, *args: Any, sizes: Optional[Mapping[str, int]] = None,
               dtypes: Optional[Mapping[str, str]] = None, **kwargs: Any
               ) -> Tuple[List[Tuple[Tuple[int, ...], str]], List[Tuple[Tuple[int, ...], str]]]:
        """The (shape, dtype) of every parameter and every output, in
        :attr:`params` and :attr:`outputs` order, from the tensors given
        (any may be left out) and ``sizes`` for the symbolic sizes no tensor
        binds: ``f.shapes(sizes={"N": 64, "D": 128})`` says what to allocate
        for a call.  A scalar parameter's shape is ``()``."""
        if not hasattr(self.program._lib, "tc_shapes"):
            raise UnsupportedError("TC_ERR_UNSUPPORTED", "the library has no tc_shapes: rebuild it")
        bound = self._bind(args, kwargs, partial=True)
        keep: List[Any] = []
        ref, dev = self._where(bound.values())
        args_c = self._input_args(bound, dev, -1 if T.is_cuda(dev) else None, keep)
        args_c += self._dtype_args(dtypes)
        for sym, n in (sizes or {}).items():
            a = C.tc_arg()
            a.name, a.kind, a.v.i = sym.encode(), C.TC_ARG_SIZE, int(n)
            args_c.append(a)
        prog = self.program
        np_, no = len(self.params), len(self.outputs)
        ps, os_ = (C.tc_shape * max(np_, 1))(), (C.tc_shape * max(no, 1))()
        arr = (C.tc_arg * max(len(args_c), 1))(*args_c)
        with prog.context.lock:
            st = prog._lib.tc_shapes(prog._h, self._bname, arr, len(args_c), ps, np_, os_, no)
            if st != C.TC_OK:
                raise _error(prog._lib, prog.context._h, st)

        def conv(v: Any, n: int) -> List[Tuple[Tuple[int, ...], str]]:
            return [(tuple(v[k].shape[:v[k].ndim]), T.dl_dtype_name(v[k].dtype)) for k in range(n)]
        return conv(ps, np_), conv(os_, no)

    # --- calling -------------------------------------------------------------------

    def __call__(self, *args: Any, out: Any = None, stream: Optional[StreamLike] = None,
                 dtypes: Optional[Mapping[str, str]] = None, **kwargs: Any) -> Any:
        """Run the function (see the class's documentation).

        Args:
            *args, **kwargs: the parameters, by position or name: tensors for
                tensor parameters, Python numbers for scalars.
            out:    output tensors to write: one tensor, a sequence in output
                    order, or a dict by output name (the others are allocated).
            stream: a CUDA stream (an integer handle, or a torch/CuPy stream
                    object) instead of the caller's current one.
            dtypes: dtype-variable bindings, e.g. ``{"T": "bf16"}``.

        Returns:
            None, the one output, or a tuple of the outputs in
            :attr:`outputs` order (an ``inout`` parameter's is the tensor passed).

        Raises:
            ArgumentError: a tensor's dtype, shape, device or layout is wrong
                (located at the parameter's declaration).
            TypeError: a missing, unknown or repeated argument; an object that
                is not a tensor; outputs that cannot be allocated.
            NoDeviceError: CUDA tensors, but no driver, GPU or NVRTC.
        """
        bound = self._bind(args, kwargs)
        outs = self._outs(out) if out is not None else {}
        ref, dev = self._where([bound[p.name] for p in self.params
                                if not p.scalar and p.name in bound] + list(outs.values()))
        if ref is None:
            raise TypeError(f"{self.name}(): no tensor argument, so no device to run on")
        cuda = T.is_cuda(dev)
        handle, dl_stream = _streams(ref, dev, stream) if cuda else (0, None)
        # the call's signature: what each parameter is, which outputs are given, the dtypes
        kinds = []
        for p in self.params:
            v = bound.get(p.name, _MISSING)
            kinds.append(-1 if v is _MISSING else
                         _scalar_kind(p.name, v) if p.scalar and not T.is_tensor(v) else C.TC_ARG_TENSOR)
        key = (tuple(kinds), tuple(o.name in outs for o in self._fresh) if outs else (),
               tuple(sorted(dtypes.items())) if dtypes else ())
        plans = getattr(self._tls, "plans", None)
        if plans is None:
            plans = self._tls.plans = {}
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = _Plan(self, key)
        keep: List[Any] = []
        for p, v, slot, kind in plan.ins:
            x = bound[p.name]
            if kind == C.TC_ARG_TENSOR:
                v.ptr = T.fill(slot, x, f"{self.name}: '{p.name}'", dev, dl_stream, keep, p.inout)
            elif kind == C.TC_ARG_FLOAT:
                v.f = float(x)
            elif kind == C.TC_ARG_INT:
                v.i = int(x)
            else:
                v.b = int(bool(x))
        results: List[Any] = []
        fresh: List[int] = []
        shapes = plan.shapes(self) if plan.alloc else None
        for k, o, v, slot in plan.outs:
            if o.inout:
                results.append(bound[o.name])
                continue
            t = outs.get(o.name) if outs else None
            if t is None:
                shape, dt = shapes[k]
                t = T.alloc_for(ref, dev, shape, dt)
                fresh.append(len(results))
            results.append(t)
            v.ptr = T.fill(slot, t, f"{self.name}: '{o.name}'", dev, dl_stream, keep, True)
        self.program._run_arr(self._bname, plan.arr, plan.n, cuda, handle)
        for k in fresh:  # after the launch: JAX orders its reads after the caller's stream
            results[k] = T.wrap_output(ref, results[k])
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def foreach(self, *args: Any, out: Any = None, stream: Optional[StreamLike] = None,
                dtypes: Optional[Mapping[str, str]] = None, **kwargs: Any) -> Any:
        """Run an elementwise function over lists of tensors: every tensor
        parameter takes a list (group i binds element i of each), scalars
        are shared.  On the GPU it is one kernel launch for all the groups
        (``tc_run_foreach``); on the CPU the interpreter runs group by group.

        Returns, for each output, the list of its tensors (an ``inout``
        parameter's list is the one passed); ``out=`` takes such lists.
        """
        bound = self._bind(args, kwargs)
        lists = {k: (v if isinstance(v, TensorList) else list(v)) for k, v in bound.items()
                 if isinstance(v, (list, tuple, TensorList))}
        if not lists:
            raise TypeError(f"{self.name}.foreach(): no list of tensors")
        ngroups = {len(v) for v in lists.values()}
        if len(ngroups) != 1:
            raise ValueError(f"{self.name}.foreach(): lists of different lengths: "
                             + ", ".join(f"{k}: {len(v)}" for k, v in lists.items()))
        n = ngroups.pop()
        outs = {k: list(v) for k, v in self._outs(out).items()} if out is not None else {}
        for k, v in outs.items():
            if len(v) != n:
                raise ValueError(f"{self.name}.foreach(): out '{k}' has {len(v)} tensors, "
                                 f"not {n}")
        flat = [t for v in lists.values() for t in v] + [t for v in outs.values() for t in v]
        ref, dev = self._where(flat)
        if ref is None or not T.is_cuda(dev):
            return self._foreach_cpu(n, bound, lists, outs, dtypes)
        handle, dl_stream = _streams(ref, dev, stream)
        keep: List[Any] = []
        group_args = [[] for _ in range(n)]  # per group, the inputs (for output shapes)
        args_c: List[C.tc_arg] = []
        for p in self.params:
            if p.name not in bound:
                continue
            v = bound[p.name]
            if p.name in lists:
                args_c.append(self._tensor_list(p.name, v, dev, dl_stream, keep, p.inout,
                                                group_args))
            else:
                args_c.append(self._scalar(self._bnames[p.name], v))
        args_c += self._dtype_args(dtypes)
        results = []
        for o in self.outputs:
            if o.inout:
                results.append(bound[o.name])  # the caller's own list
                continue
            ts = outs.get(o.name)
            if ts is None:
                ts = []
                k = self.outputs.index(o)
                for g in range(n):
                    shape, dt = self._shapes(group_args[g] + self._dtype_args(dtypes))[k]
                    ts.append(T.alloc_for(ref, dev, shape, dt))
            args_c.append(self._tensor_list(o.name, ts, dev, dl_stream, keep, True, None))
            results.append(ts)
        self.program._run_foreach(self._bname, n, args_c, handle)
        if T.library_of(ref) == "jax":
            results = [[T.wrap_output(ref, t) for t in ts] if not o.inout else ts
                       for o, ts in zip(self.outputs, results)]
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def _tensor_list(self, name: str, ts: Sequence[Any], dev: Tuple[int, int], dl_stream: int,
                     keep: List[Any], writable: bool, group_args: Optional[List[List[Any]]]
                     ) -> C.tc_arg:
        if isinstance(ts, TensorList):
            ptrs = ts._ptrs  # exported once, when the TensorList was made
        else:
            ptrs = (ctypes.c_void_p * max(len(ts), 1))()
            for i, t in enumerate(ts):
                slot = T.Slot()  # a torch tensor or NumPy array described directly (T.fill)
                keep.append(slot)
                ptrs[i] = T.fill(slot, t, f"{self.name}: '{name}'[{i}]", dev, dl_stream, keep, writable)
        for i in range(len(ts) if group_args is not None else 0):
            a = C.tc_arg()  # group i alone, for tc_output_shapes
            a.name, a.kind, a.v.ptr = self._bnames[name], C.TC_ARG_TENSOR, ptrs[i]
            group_args[i].append(a)
        keep.append(ptrs)
        a = C.tc_arg()
        a.name, a.kind, a.v.ptr = self._bnames[name], C.TC_ARG_TENSORS, ctypes.addressof(ptrs)
        return a

    def _foreach_cpu(self, n: int, bound: Dict[str, Any], lists: Dict[str, List[Any]],
                     outs: Dict[str, List[Any]], dtypes: Optional[Mapping[str, str]]) -> Any:
        per_out: List[List[Any]] = [[] for _ in self.outputs]
        for g in range(n):
            kw = {k: (lists[k][g] if k in lists else v) for k, v in bound.items()}
            o = {k: v[g] for k, v in outs.items()}
            tensors = [kw[k] for k in lists]
            if all(T.numel(t) == 0 for t in tensors):
                # an empty group does nothing, as in tc_run_foreach (the interpreter
                # takes no [*] tensor of 0 elements)
                r = tuple(kw[x.name] if x.inout else
                          o[x.name] if o.get(x.name) is not None else
                          T.empty_like_lib(tensors[0], (C.kDLCPU, 0), (0,),
                                           T.dtype_of(tensors[0]) if x.dtype_var else x.dtype)
                          for x in self.outputs)
                for k, t in enumerate(r):
                    per_out[k].append(t)
                continue
            r = self(out=o or None, dtypes=dtypes, **kw)
            r = () if r is None else (r if isinstance(r, tuple) else (r,))
            for k, t in enumerate(r):
                per_out[k].append(t)
        res: List[Any] = [bound[x.name] if x.inout else per_out[k]  # the caller's own lists
                          for k, x in enumerate(self.outputs)]
        if not res:
            return None
        return res[0] if len(res) == 1 else tuple(res)


class TensorList:
    """A list of tensors exported through DLPack once, for many
    :meth:`Function.foreach` calls (an optimizer's parameters, step after
    step): passing plain lists exports every tensor on every call, some
    microseconds each, which for hundreds of tensors costs more than the
    kernel.  The tensors must stay where they are (same memory, shape and
    dtype) for as long as the TensorList is used; it keeps them alive.

    It is a read-only sequence of the tensors; ``foreach`` returns it for an
    ``inout`` parameter it was passed for.

    >>> params = tensorc.TensorList(p.detach() for p in model.parameters())
    """

    def __init__(self, tensors: Any):
        self.tensors: List[Any] = list(tensors)
        self._keep: List[Any] = []
        ref = self.tensors[0] if self.tensors else None
        dev = T.device_of(ref) if ref is not None else (C.kDLCPU, 0)
        dl_stream = None
        if T.is_cuda(dev):
            dl_stream = _streams(ref, dev, None)[1]
        self._ptrs = (ctypes.c_void_p * max(len(self.tensors), 1))()
        for i, t in enumerate(self.tensors):
            slot = T.Slot()
            self._keep.append(slot)
            self._ptrs[i] = T.fill(slot, t, f"TensorList[{i}]", dev, dl_stream, self._keep, True)

    def __len__(self) -> int:
        return len(self.tensors)

    def __getitem__(self, i: Any) -> Any:
        return self.tensors[i]

    def __iter__(self) -> Any:
        return iter(self.tensors)

    def __repr__(self) -> str:
        return f"<tensorc.TensorList of {len(self.tensors)} tensors>"


# --- programs -----------------------------------------------------------------------


class Program:
    """A compiled tensorc program: made by :func:`compile`, :func:`compile_file`
    or a :class:`Context`'s methods of the same names.

    ``program.functions`` lists the file's functions; ``program["name"]`` or
    ``program.name`` gives a :class:`Function` (prelude functions too, by
    item); calling the program calls its only function.
    """

    def __init__(self, context: Context, handle: int):
        self.context = context
        self._lib = context._lib
        self._h = handle
        context._programs[handle] = True
        self._fns: Dict[str, Function] = {}
        n = ctypes.c_size_t()
        names = ctypes.POINTER(ctypes.c_char_p)()
        st = self._lib.tc_program_functions(handle, ctypes.byref(n), ctypes.byref(names))
        if st != C.TC_OK:
            raise _error(self._lib, context._h, st)
        self.functions: List[str] = [names[i].decode() for i in range(n.value)]

    def __del__(self) -> None:
        h, self._h = getattr(self, "_h", None), None
        # freed here unless its context, finalized first, freed it already
        if h and getattr(self, "context", None) is not None and \
                self.context._programs.pop(h, None) is not None:
            self._lib.tc_program_free(h)

    def __repr__(self) -> str:
        return f"<tensorc.Program: {', '.join(self.functions)}>"

    def __dir__(self) -> List[str]:
        return list(super().__dir__()) + self.functions

    def function(self, name: Optional[str] = None) -> Function:
        """The function ``name`` (``None``: the file's only function)."""
        key = name or ""
        f = self._fns.get(key)
        if f is None:
            info = ctypes.POINTER(C.tc_function_info)()
            with self.context.lock:
                st = self._lib.tc_program_function(self._h, name.encode() if name else None,
                                                   ctypes.byref(info))
                if st != C.TC_OK:
                    raise _error(self._lib, self.context._h, st)
            f = Function(self, info.contents)
            f = self._fns.setdefault(f.name, f)  # one Function per name, however asked for
            self._fns[key] = f
        return f

    def __getitem__(self, name: str) -> Function:
        return self.function(name)

    def __getattr__(self, name: str) -> Function:
        if name.startswith("_") or name not in self.__dict__.get("functions", ()):
            raise AttributeError(name)
        return self.function(name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the program's only function (see :meth:`Function.__call__`)."""
        return self.function()(*args, **kwargs)

    def dump(self, stage: str, fn: Optional[str] = None) -> str:
        """The text of one stage for ``fn`` (``None``: every function):
        ``"ast"``, ``"graph"``, ``"lowered"``, ``"fused"``, ``"sched"``,
        ``"cuda"`` or ``"explain"``, as ``tensorc compile --emit=STAGE`` prints."""
        out = ctypes.c_char_p()
        with self.context.lock:
            st = self._lib.tc_program_dump(self._h, stage.encode(),
                                           fn.encode() if fn else None, ctypes.byref(out))
            if st != C.TC_OK:
                raise _error(self._lib, self.context._h, st)
            return (out.value or b"").decode("utf-8", "replace")

    def source(self, fn: Optional[str] = None) -> str:
        """The generated CUDA source of ``fn`` (``None``: the whole file, as
        one unit), with its launch plan as a comment at the end."""
        with self.context.lock:
            s = self._lib.tc_program_source(self._h, fn.encode() if fn else None)
            if s is None:
                raise _error(self._lib, self.context._h, _status_of(self._lib, self.context._h))
            return s.decode("utf-8", "replace")

    def explain(self, fn: Optional[str] = None) -> str:
        """Every fusion decision (fused or refused, and why), as ``tensorc explain``."""
        return self.dump("explain", fn)

    def _image(self, fn: Optional[str], arch: int, kind: int,
               dtypes: Optional[Mapping[str, str]]) -> bytes:
        if not hasattr(self._lib, "tc_program_image"):
            raise UnsupportedError("TC_ERR_UNSUPPORTED", f"{self._lib._tensorc_path} has no "
                                   "tc_program_image: rebuild the library")
        binds = Function._dtype_args(dtypes)
        arr = (C.tc_arg * max(len(binds), 1))(*binds)
        img, n = ctypes.c_void_p(), ctypes.c_size_t()
        with self.context.lock:
            st = self._lib.tc_program_image(self._h, fn.encode() if fn else None, arr, len(binds),
                                            int(arch), kind, ctypes.byref(img), ctypes.byref(n))
            if st != C.TC_OK:
                raise _error(self._lib, self.context._h, st)
            return ctypes.string_at(img.value, n.value)

    def ptx(self, fn: Optional[str] = None, arch: int = 90,
            dtypes: Optional[Mapping[str, str]] = None) -> str:
        """The kernels of ``fn`` (``None``: the whole file) compiled by NVRTC to
        PTX for ``compute_<arch>`` (90: sm_90), through the kernel cache; the
        text tc_run would load on such a GPU.  Needs NVRTC, not a GPU.
        ``dtypes`` binds dtype variables (else f32)."""
        return self._image(fn, arch, C.TC_IMAGE_PTX, dtypes).decode("utf-8", "replace")

    def cubin(self, fn: Optional[str] = None, arch: int = 90,
              dtypes: Optional[Mapping[str, str]] = None) -> bytes:
        """As :meth:`ptx`, but a CUBIN (ELF) for ``sm_<arch>``."""
        return self._image(fn, arch, C.TC_IMAGE_CUBIN, dtypes)

    def _run(self, name: bytes, args: List[C.tc_arg], cuda: bool, stream: int) -> None:
        arr = (C.tc_arg * max(len(args), 1))(*args)
        with self.context.lock:
            if cuda:
                st = self._lib.tc_run(self._h, name, arr, len(args), stream or None)
            else:
                st = self._lib.tc_run_cpu(self._h, name, arr, len(args))
            if st != C.TC_OK:
                raise _error(self._lib, self.context._h, st)

    def _run_arr(self, name: bytes, arr: Any, n: int, cuda: bool, stream: int) -> None:
        """tc_run (tc_run_cpu) over a prepared tc_arg array (Function's _Plan)."""
        with self.context.lock:
            if cuda:
                st = self._lib.tc_run(self._h, name, arr, n, stream or None)
            else:
                st = self._lib.tc_run_cpu(self._h, name, arr, n)
            if st != C.TC_OK:
                raise _error(self._lib, self.context._h, st)

    def _run_foreach(self, name: bytes, ngroups: int, args: List[C.tc_arg], stream: int) -> None:
        arr = (C.tc_arg * max(len(args), 1))(*args)
        with self.context.lock:
            st = self._lib.tc_run_foreach(self._h, name, ngroups, arr, len(args), stream or None)
            if st != C.TC_OK:
                raise _error(self._lib, self.context._h, st)


def _status_of(lib: Any, ctx: int) -> int:
    """tc_program_source returns NULL, not a status: classify by the located-ness."""
    return C.STATUS_NAMES.index("TC_ERR_COMPILE") if lib.tc_error_loc(ctx, None, None, None) \
        else C.STATUS_NAMES.index("TC_ERR_INVALID_ARG")


# --- module-level helpers --------------------------------------------------------------


def compile(source: str, filename: str = "<string>") -> Program:
    """Compile a program given as text, in the default context.

    >>> prog = tensorc.compile("fn twice(x: f32[N]) -> f32[N] { return x * 2 }")
    >>> prog.twice(np.arange(4, dtype=np.float32))
    array([0., 2., 4., 6.], dtype=float32)
    """
    return default_context().compile(source, filename)


def compile_file(path: Union[str, "os.PathLike[str]"]) -> Program:
    """Compile the program in a file, in the default context."""
    return default_context().compile_file(path)
