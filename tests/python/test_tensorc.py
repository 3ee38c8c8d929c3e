"""tests/python/test_tensorc.py - the Python package (python/tensorc) on a
machine without a GPU: compile, introspect, run on NumPy arrays through the
reference interpreter against NumPy, located errors, dumps; and, where
TC_FAKE_CUDA names tests/fakegpu's driver, the GPU path's argument
marshalling through DLPack (kernels do not run there).

Run by tests/python/run.sh, which installs the package into a fresh virtual
environment first; `pytest tests/python` with PYTHONPATH=python and a built
library works too.
"""
import ctypes
import os
import re

import numpy as np
import pytest

import tensorc
import check_examples as ce

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(ROOT, "examples")

# --- installation -----------------------------------------------------------------


def test_installed_copy():
    """run.sh installs the package: the library must be the copy pip put beside it."""
    if os.environ.get("TC_PY_EXPECT_INSTALLED") != "1":
        pytest.skip("not run from an installed package")
    pkg = os.path.dirname(tensorc.__file__)
    assert not pkg.startswith(os.path.join(ROOT, "python"))
    assert tensorc.library_path == os.path.join(pkg, "libtensorc.so")
    assert tensorc.library_version == "0.1.0"


def test_help_reads_well():
    import pydoc
    text = pydoc.render_doc(tensorc, renderer=pydoc.plaintext)
    for word in ("compile", "Function", "foreach", "TensorcError", "interpreter", "DLPack",
                 "TENSORC_LIB"):
        assert word in text
    for name in tensorc.__all__:
        obj = getattr(tensorc, name)
        if callable(obj):
            assert obj.__doc__, name


def test_module_docstring_example():
    src = tensorc.__doc__.split("tensorc.compile('''")[1].split("''')")[0]
    p = tensorc.compile(src)
    assert p.functions == ["softmax"]
    y = p.softmax(np.random.rand(4, 8).astype(np.float32))
    assert np.allclose(y.sum(axis=1), 1)


def test_readme_quick_start(monkeypatch):
    """README.md's Python example, up to its GPU part, runs as written."""
    with open(os.path.join(ROOT, "README.md")) as fh:
        text = fh.read()
    block = text.split("## Python\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    cpu_part = block.split("import torch")[0]
    monkeypatch.chdir(ROOT)
    env = {}
    exec(compile(cpu_part, "README.md", "exec"), env)
    assert env["y"].shape == (64, 128)


# --- compiling and introspecting ------------------------------------------------------


def test_compile_source_and_file():
    p = tensorc.compile("fn twice(x: f32[N]) -> f32[N] { return x * 2 }\n"
                        "fn add(a: f32[N], b: f32[N]) -> f32[N] { return a + b }", "two.tc")
    assert p.functions == ["twice", "add"]
    q = tensorc.compile_file(os.path.join(EX, "softmax.tc"))
    assert q.functions == ["softmax"]
    assert q.function() is q.softmax is q["softmax"]
    with pytest.raises(tensorc.ArgumentError):
        p.function()  # two functions: a name is needed
    with pytest.raises(tensorc.FunctionNotFoundError):
        p.function("thrice")
    with pytest.raises(AttributeError):
        p.thrice


def test_introspection():
    p = tensorc.compile_file(os.path.join(EX, "layernorm_stats.tc"))
    f = p.layernorm_stats
    assert [v.name for v in f.params] == ["x", "w", "b", "eps"]
    x, w, b, eps = f.params
    assert (x.dtype, x.dims, x.scalar, x.star, x.inout) == ("f32", ("N", "D"), False, False, False)
    assert w.dims == ("D",)
    assert eps.scalar and eps.dims == () and eps.default == pytest.approx(1e-5)
    assert [(o.name, o.dims) for o in f.outputs] == [("y", ("N", "D")), ("mean", ("N",)),
                                                    ("rstd", ("N",))]
    assert not f.elementwise
    assert str(eps) == "eps: f32 = 1e-05"
    shapes = f.output_shapes(np.zeros((3, 7), np.float32), np.zeros(7, np.float32),
                             np.zeros(7, np.float32))
    assert shapes == [((3, 7), "f32"), ((3,), "f32"), ((3,), "f32")]

    ps, os_ = f.shapes(sizes={"N": 4, "D": 9})
    assert ps == [((4, 9), "f32"), ((9,), "f32"), ((9,), "f32"), ((), "f32")]
    assert os_ == [((4, 9), "f32"), ((4,), "f32"), ((4,), "f32")]
    assert f.shapes(np.zeros((2, 3), np.float32))[1][1] == ((2,), "f32")
    with pytest.raises(tensorc.ArgumentError, match="D"):
        f.shapes(sizes={"N": 4})

    a = tensorc.compile_file(os.path.join(EX, "adamw.tc")).adamw
    assert a.elementwise
    assert [(v.name, v.inout, v.star) for v in a.params[:4]] == [
        ("p", True, True), ("g", False, True), ("m", True, True), ("v", True, True)]
    assert [(v.name, v.dtype) for v in a.params[4:]] == [
        ("lr", "f64"), ("beta1", "f64"), ("beta2", "f64"), ("eps", "f64"), ("wd", "f64"),
        ("step", "i32")]
    assert [o.name for o in a.outputs] == ["p", "m", "v"] and all(o.inout for o in a.outputs)
    assert "adamw(p: inout f32[*]" in repr(a)


GENERIC = """
fn scale(x: T[N, D], k: f32 = 2) -> T[N, D] {
    return x * k
}
fn use(x: f32[N, D]) -> f32[N, D] {
    return scale(x)
}
"""


def test_generic_and_dtype_bindings():
    p = tensorc.compile(GENERIC, "generic.tc")
    s = p.scale
    assert s.params[0].dtype == "T" and s.params[0].dtype_var
    assert s.outputs[0].dtype == "T"
    x64 = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert s.output_shapes(x64) == [((2, 3), "f64")]
    y = s(x64, k=3)
    assert y.dtype == np.float64 and np.array_equal(y, x64 * 3)
    # a binding no tensor agrees with is an error naming the parameter
    with pytest.raises(tensorc.ArgumentError, match="'x'"):
        s(x64, dtypes={"T": "f32"})
    with pytest.raises(tensorc.ArgumentError):
        s(x64, dtypes={"Q": "f32"})
    # a prelude function by name, bound by its tensors
    sm = p["softmax"]
    assert sm.params[0].dtype_var
    z = sm(np.zeros((2, 4), np.float32))  # as an entry point, [*] is rank 1: all 8 elements
    assert z.shape == (8,) and np.allclose(z, 0.125)


# --- running on NumPy through the interpreter ---------------------------------------------


def _as_arg(vals, dt):
    """check_examples' input (float64 values, dtype) as the package takes it."""
    vals = np.asarray(vals)
    if vals.ndim == 0 and dt != "bool":
        return int(vals) if dt in ("i32", "i64") else float(vals)
    if dt == "bf16":
        return tensorc.bfloat16.from_float(vals)
    if dt == "bool":
        return vals.astype(np.bool_)
    return vals.astype(ce.NP_DTYPE[dt])


def _as_result(t):
    if isinstance(t, tensorc.bfloat16):
        return t.to_float32()
    t = np.asarray(t)
    return t.astype(np.float32) if t.dtype.name == "bfloat16" else t  # ml_dtypes' bf16


_programs = {}


def _program(file):
    if file not in _programs:
        _programs[file] = tensorc.compile_file(os.path.join(EX, file))
    return _programs[file]


def _case_id(c):
    file, fn, dims = c
    return f"{fn}[{','.join(f'{k}={v}' for k, v in dims.items())}]"


EXAMPLE_CASES = [(f, fn, d) for f, fn, shapes, *_ in ce.CASES for d in shapes]


def test_every_example_function_has_a_case():
    covered = {(f, fn) for f, fn, _ in EXAMPLE_CASES}
    for f in sorted(os.listdir(EX)):
        if f.endswith(".tc"):
            for fn in _program(f).functions:
                assert (f, fn) in covered, f"{f}:{fn}"


@pytest.mark.parametrize("case", EXAMPLE_CASES, ids=_case_id)
def test_example_on_numpy(case):
    file, fn, dims = case
    make, ref, tol = next((m, r, t) for f, n, _, m, r, t in ce.CASES if (f, n) == (file, fn))
    ins = make(ce.Gen(1234), dims)
    want = ref({k: np.asarray(v) for k, (v, _) in ins.items()}, dims)
    f = _program(file)[fn]
    args = {k: _as_arg(v, dt) for k, (v, dt) in ins.items()}
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    got = f(**args)
    got = got if isinstance(got, tuple) else (got,)
    names = [o.name for o in f.outputs]
    assert sorted(names) == sorted(want)
    for name, g in zip(names, got):
        o = next(o for o in f.outputs if o.name == name)
        if o.inout:
            assert g is args[name]  # written in place, the caller's own array returned
        w, dt = want[name]
        r = ce.compare(name, _as_result(g), w, dt, tol)
        assert r.startswith("ok:"), r
    for k, v in before.items():  # inputs that are not inout are left alone
        p = next(p for p in f.params if p.name == k)
        if isinstance(v, np.ndarray) and not p.inout:
            assert np.array_equal(v, args[k])


def test_out_is_written_in_place():
    f = _program("softmax.tc").softmax
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    out = np.full((5, 3), np.nan, np.float32)
    r = f(x, out=out)
    assert r is out
    assert np.allclose(out.sum(axis=1), 1, atol=1e-6)
    out2 = np.zeros((5, 3), np.float32)
    assert f(x, out={"out": out2}) is out2 and np.array_equal(out, out2)
    # multiple outputs: by position and by name, the rest allocated
    ls = _program("layernorm_stats.tc").layernorm_stats
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    w, b = np.ones(6, np.float32), np.zeros(6, np.float32)
    mean = np.empty(4, np.float32)
    y, m, rs = ls(x, w, b, out={"mean": mean})
    assert m is mean and np.allclose(mean, x.mean(axis=1), atol=1e-6)
    with pytest.raises(TypeError):
        ls(x, w, b, out=np.empty((4, 6), np.float32))  # one tensor for three outputs


def test_scalars_and_defaults():
    f = _program("layernorm.tc").layernorm
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    w, b = np.ones(5, np.float32), np.zeros(5, np.float32)
    y1 = f(x, w, b)
    y2 = f(x, w, b, eps=np.float32(1e-5))  # NumPy scalars are numbers too
    y3 = f(x, w, b, 1e-5)
    assert np.array_equal(y1, y2) and np.array_equal(y1, y3)
    y4 = f(x, w, b, eps=10)  # an int for a float parameter
    assert not np.allclose(y1, y4)
    with pytest.raises(TypeError, match="missing 'w'"):
        f(x)
    with pytest.raises(TypeError, match="did you mean 'eps'"):
        f(x, w, b, epsilon=1e-3)
    with pytest.raises(TypeError, match="twice"):
        f(x, w, b, x=x)


def test_odd_shapes_and_layouts():
    f = _program("softmax.tc").softmax
    for shape in [(1, 1), (7, 13), (3, 1000), (1, 4097)]:
        x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        y = f(x)
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        assert np.abs(y - e / e.sum(axis=1, keepdims=True)).max() < 1e-6, shape
    # inputs that are not C-contiguous (a transposed view) are refused, named
    x = np.random.default_rng(4).standard_normal((6, 4)).astype(np.float32).T
    with pytest.raises(tensorc.ArgumentError, match="'x'"):
        f(x)
    y = f(np.ascontiguousarray(x))
    assert y.shape == (4, 6)
    # [*] parameters keep the caller's shape in and out
    g = _program("gelu_chain.tc").gelu_chain
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4)
    assert g(x).shape == (24,)  # the output of a [*] function is flat (tc_output_shapes)
    # a read-only array cannot be written
    p = np.zeros(4, np.float32)
    p.flags.writeable = False
    sgd = _program("sgd_momentum.tc").sgd_momentum
    with pytest.raises(ValueError, match="read-only"):
        sgd(p, np.ones(4, np.float32), np.zeros(4, np.float32), lr=0.1)


def test_shape_and_dtype_errors_name_the_argument():
    f = _program("layernorm.tc").layernorm
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(tensorc.ArgumentError, match=r"'w'.*D = 5") as e:
        f(x, np.zeros(4, np.float32), np.zeros(5, np.float32))
    assert e.value.status == "TC_ERR_INVALID_ARG"
    with pytest.raises(tensorc.ArgumentError, match="'x'"):
        f(x.astype(np.float64), np.zeros(5, np.float32), np.zeros(5, np.float32))
    with pytest.raises(TypeError, match="uint8"):
        f(x.astype(np.uint8), np.zeros(5, np.float32), np.zeros(5, np.float32))
    with pytest.raises(TypeError, match="expected a tensor"):
        f([[1.0]], np.zeros(5, np.float32), np.zeros(5, np.float32))


def test_bf16_without_and_with_ml_dtypes():
    """NumPy has no bfloat16: tensorc.bfloat16 carries the bits (uint16); with
    ml_dtypes installed, its bfloat16 arrays work directly."""
    f = _program("rmsnorm.tc").rmsnorm_bf16
    rng = np.random.default_rng(5)
    xf = ce.round_bf16(rng.standard_normal((3, 7)))
    gf = ce.round_bf16(rng.standard_normal(7))
    x, g = tensorc.bfloat16.from_float(xf), tensorc.bfloat16.from_float(gf)
    assert np.array_equal(x.to_float32(), xf.astype(np.float32))  # exact: already bf16 values
    y = f(x, g)
    want = ce.round_bf16(ce.round_bf16(ce.rms_scale(xf, ce.RMS_EPS)) * gf)
    if isinstance(y, tensorc.bfloat16):
        got = y.to_float32()
    else:  # ml_dtypes is installed
        assert y.dtype.name == "bfloat16"
        got = y.astype(np.float32)
    assert np.array_equal(got, want.astype(np.float32))
    # rounding: ties to even, NaN kept
    b = tensorc.bfloat16.from_float(np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, np.nan], np.float32))
    assert list(b.bits[:2]) == [0x3F80, 0x3F82] and np.isnan(b.to_float32()[2])
    try:
        import ml_dtypes
    except ImportError:
        return
    y2 = f(xf.astype(ml_dtypes.bfloat16), gf.astype(ml_dtypes.bfloat16))
    assert np.array_equal(y2.astype(np.float32), want.astype(np.float32))


def test_foreach_on_numpy():
    a = _program("adamw.tc").adamw
    rng = np.random.default_rng(6)
    sizes = [7, 1000, 1, 0, 33]
    ps = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    gs = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    ms = [np.zeros(n, np.float32) for n in sizes]
    vs = [np.zeros(n, np.float32) for n in sizes]
    want = [ce._adamw_ref({"p": p.astype(np.float64), "g": g.astype(np.float64), "m": m, "v": v,
                           **{k: np.float64(x) for k, x in ce.ADAM.items()}, "step": 1}, None)
            for p, g, m, v in zip(ps, gs, ms, vs)]
    r = a.foreach(ps, gs, ms, vs, step=1, **ce.ADAM)
    assert r[0] is ps and r[1] is ms and r[2] is vs
    for i, w in enumerate(want):
        for name, lst in (("p", ps), ("m", ms), ("v", vs)):
            res = ce.compare(name, lst[i], *w[name])
            assert res is None or res.startswith("ok:"), (i, res)  # None: no elements
    with pytest.raises(ValueError, match="different lengths"):
        a.foreach(ps, gs[:2], ms, vs, step=1, **ce.ADAM)
    # TensorLists on the CPU: the same, group by group
    p2 = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    want = [x.copy() for x in p2]
    r = a.foreach(tensorc.TensorList(want), gs, [np.zeros(n, np.float32) for n in sizes],
                  tensorc.TensorList([np.zeros(n, np.float32) for n in sizes]), step=1, **ce.ADAM)
    assert isinstance(r[0], tensorc.TensorList) and r[0][1] is want[1]
    assert not np.array_equal(want[1], p2[1])  # written in place


def test_jax_arrays_on_the_cpu():
    """Another DLPack producer (JAX, when installed): CPU arrays go through the
    interpreter without copies; outputs come back as JAX arrays."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    f = _program("softmax.tc").softmax
    x = np.random.default_rng(7).standard_normal((5, 9)).astype(np.float32)
    y = f(jnp.asarray(x))
    assert isinstance(y, jax.Array) and y.shape == (5, 9)
    assert np.allclose(np.asarray(y), np.asarray(jax.nn.softmax(jnp.asarray(x), axis=-1)),
                       atol=1e-6)
    ls = _program("layernorm_stats.tc").layernorm_stats
    r = ls(jnp.asarray(x), jnp.ones(9, jnp.float32), jnp.zeros(9, jnp.float32))
    assert all(isinstance(t, jax.Array) for t in r)
    assert np.allclose(np.asarray(r[1]), x.mean(axis=1), atol=1e-6)


# --- errors ------------------------------------------------------------------------------


def _check_caret(err, source):
    """err.caret is the source line of err.line, then a caret under err.col."""
    want = source.split("\n")[err.line - 1]
    src_line, caret = err.caret.split("\n")[:2]
    assert src_line.endswith(want)
    indent = len(src_line) - len(want)
    assert caret.rstrip() == " " * (indent + err.col - 1) + "^"


def test_located_errors(tmp_path):
    src = "fn f(x: f32[N]) -> f32[N] {\n    y = x * 2\n    return y +\n}\n"
    path = tmp_path / "bad.tc"
    path.write_text(src)
    with pytest.raises(tensorc.CompileError) as e:
        tensorc.compile_file(path)
    err = e.value
    assert err.status == "TC_ERR_SYNTAX"
    assert (err.file, err.line, err.col) == (str(path), 3, 15)
    assert str(err).startswith(f"{path}:3:15: error: expected expression after '+'")
    _check_caret(err, src)
    assert err.hint is None

    # a PyTorch habit: the hint line, as err.hint
    src = "fn f(x: f32[N, D]) -> f32[N] {\n    return x.sum(1)\n}\n"
    with pytest.raises(tensorc.CompileError) as e:
        tensorc.compile(src, "habit.tc")
    assert (e.value.line, e.value.col) == (2, 17)
    assert e.value.hint == "tensorc has no methods: call sum as a function with the tensor first, sum(x, ...)"
    _check_caret(e.value, src)
    with pytest.raises(tensorc.CompileError) as e:
        tensorc.compile("fn f(x: f32[N, D]) -> f32[N] {\n    return sum(x, dim=1)\n}\n", "dim.tc")
    assert e.value.hint.startswith("tensorc calls it axis")

    # a type error, from text: filename as given, caret under the column
    src = "fn g(x: f32[N], y: f32[M]) -> f32[N] {\n  return x + y\n}\n"
    with pytest.raises(tensorc.CompileError) as e:
        tensorc.compile(src, "g.tc")
    err = e.value
    assert (err.status, err.file, err.line) == ("TC_ERR_COMPILE", "g.tc", 2)
    assert str(err).startswith(f"g.tc:2:{err.col}: error: ")
    _check_caret(err, src)

    # an argument error is located at the parameter's declaration
    f = _program("layernorm.tc").layernorm
    with pytest.raises(tensorc.ArgumentError) as e:
        f(np.zeros((3, 5), np.float32), np.zeros(4, np.float32), np.zeros(5, np.float32))
    err = e.value
    assert "parameter 'w' has shape [4], but its dim 0 is D = 5" in str(err)
    assert err.file.endswith("layernorm.tc")
    with open(os.path.join(EX, "layernorm.tc")) as fh:
        _check_caret(err, fh.read())
    assert err.caret.split("\n")[0][err.caret.split("\n")[1].index("^"):].startswith("w: f32[D]")

    with pytest.raises(tensorc.TensorcError) as e:
        tensorc.compile_file(tmp_path / "missing.tc")
    assert e.value.status == "TC_ERR_IO" and "missing.tc" in str(e.value)


def test_context_options(tmp_path):
    ctx = tensorc.Context(cache_dir=str(tmp_path), fast_math=True, line_info=True)
    p = ctx.compile("fn f(x: f32[N]) -> f32[N] { return x + 1 }")
    assert np.array_equal(p(np.zeros(3, np.float32)), np.ones(3, np.float32))
    with pytest.raises(tensorc.ArgumentError):
        tensorc.Context(device=-2)


# --- dumps --------------------------------------------------------------------------------

STAGES = ["ast", "graph", "lowered", "fused", "sched", "cuda", "explain"]


@pytest.mark.parametrize("stage", STAGES)
def test_dump_stages(stage):
    p = _program("layernorm.tc")
    text = p.dump(stage, "layernorm")
    assert "layernorm" in text and len(text) > 50
    assert p.layernorm.dump(stage) == text
    assert p.dump(stage)  # every function


def test_source_and_explain():
    p = _program("softmax.tc")
    src = p.source("softmax")
    assert "__global__" in src and "tc_red_fused_max_sub_exp_sum_div_0" in src
    assert p.softmax.source() == src
    assert p.source()  # the whole file as one unit
    ex = p.explain("softmax")
    assert "fused" in ex and p.softmax.explain() == ex
    with pytest.raises(tensorc.TensorcError, match="unknown stage"):
        p.dump("assembly")
    with pytest.raises(tensorc.UnsupportedError, match="binary"):
        p.dump("ptx")


def test_ptx_and_cubin():
    p = _program("softmax.tc")
    try:
        ptx = p.ptx("softmax", arch=80)
    except tensorc.NoDeviceError as e:
        pytest.skip(f"no NVRTC: {e}")
    assert ".target sm_80" in ptx and "tc_red_fused_max_sub_exp_sum_div_0" in ptx
    assert p.softmax.ptx(80) == ptx
    cubin = p.softmax.cubin(arch=90)
    assert isinstance(cubin, bytes) and cubin[:4] == b"\x7fELF"
    # a dtype variable bound for the image
    g = tensorc.compile(GENERIC, "generic.tc").scale
    p64 = g.ptx(80, dtypes={"T": "f64"})
    assert p64 != g.ptx(80) and re.search(r"ld\.global[.\w]*\.f64", p64)
    with pytest.raises(tensorc.ArgumentError):
        p.ptx("softmax", arch=7)


# --- the GPU path on the fake driver -------------------------------------------------------

class FakeCudaTensor:
    """A producer of DLPack capsules for memory of tests/fakegpu's driver
    (host memory it hands out as device memory): a stand-in for a torch
    CUDA tensor, recording the stream each export was asked for."""
    lib = None

    def __init__(self, shape, dtype="f32"):
        code, bits = tensorc._capi.DTYPE_TO_DL[dtype]
        n = int(np.prod(shape)) if shape else 1
        ptr = ctypes.c_uint64()
        assert self.lib.cuMemAlloc_v2(ctypes.byref(ptr), max(n * bits // 8, 1)) == 0
        self.ptr, self.shape, self.streams = ptr.value, tuple(shape), []
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._mt = tensorc._capi.DLManagedTensor()
        t = self._mt.dl_tensor
        t.data, t.ndim, t.shape = self.ptr, len(shape), self._shape
        t.device = tensorc._capi.DLDevice(tensorc._capi.kDLCUDA, 0)
        t.dtype = tensorc._capi.DLDataType(code, bits, 1)

    def __dlpack_device__(self):
        return (tensorc._capi.kDLCUDA, 0)

    _new = ctypes.pythonapi.PyCapsule_New
    _new.restype, _new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                     ctypes.c_void_p]

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self._new(ctypes.addressof(self._mt), b"dltensor", None)


@pytest.fixture
def fake_gpu(tmp_path):
    lib = os.environ.get("TC_FAKE_CUDA")
    if not lib or os.environ.get("TENSORC_LIBCUDA") != lib:
        pytest.skip("TC_FAKE_CUDA (and TENSORC_LIBCUDA) do not name the fake driver")
    FakeCudaTensor.lib = ctypes.CDLL(lib)
    return tensorc.Context(cache_dir=str(tmp_path))


def _launches(capfd):
    return [l for l in capfd.readouterr().err.splitlines() if l.startswith("fakecuda: launch")]


def test_fake_gpu_call_marshalling(fake_gpu, capfd, monkeypatch):
    monkeypatch.setenv("TC_FAKE_CUDA_LOG", "1")
    p = fake_gpu.compile_file(os.path.join(EX, "layernorm.tc"))
    x, w, b = FakeCudaTensor((3, 7)), FakeCudaTensor((7,)), FakeCudaTensor((7,))
    out = FakeCudaTensor((3, 7))
    try:
        r = p.layernorm(x, w, b, eps=1e-3, out=out, stream=0x1234)
    except tensorc.NoDeviceError as e:
        pytest.skip(f"no NVRTC: {e}")
    assert r is out
    assert x.streams == [0x1234] and out.streams == [0x1234]  # the caller's stream, passed on
    launches = _launches(capfd)
    assert len(launches) == 1 and "tc_" in launches[0]
    # no stream and no library with a current stream: the legacy default stream (DLPack's 1)
    p.layernorm(x, w, b, out=out)
    assert x.streams[-1] == 1
    # outputs of an unknown library cannot be allocated: out= is needed
    with pytest.raises(TypeError, match="out="):
        p.layernorm(x, w, b)
    # argument checks happen in C, named
    with pytest.raises(tensorc.ArgumentError, match="'w'"):
        p.layernorm(x, FakeCudaTensor((6,)), b, out=out)
    # CPU and GPU tensors mixed: refused by tc_run
    with pytest.raises(tensorc.ArgumentError, match="'b'"):
        p.layernorm(x, w, np.zeros(7, np.float32), out=out)


def test_fake_gpu_context_finalized_before_its_program(fake_gpu):
    """At interpreter exit the garbage collector may finalize a context before
    its programs; tc_ctx_free wants them freed first (a remembered call holds a
    CUDA graph of the context's device): the context frees them, once."""
    p = fake_gpu.compile_file(os.path.join(EX, "layernorm.tc"))
    x, w, b = FakeCudaTensor((3, 7)), FakeCudaTensor((7,)), FakeCudaTensor((7,))
    out = FakeCudaTensor((3, 7))
    try:
        for _ in range(3):  # the same call again: remembered, then a graph
            p.layernorm(x, w, b, out=out)
    except tensorc.NoDeviceError as e:
        pytest.skip(f"no NVRTC: {e}")
    fake_gpu.__del__()  # what a finalizer run out of order does (ASan saw a use after free)
    assert p._h is not None and not fake_gpu._programs
    p.__del__()  # its context freed it: nothing freed twice
    assert p._h is None


def test_fake_gpu_foreach_one_launch(fake_gpu, capfd, monkeypatch):
    monkeypatch.setenv("TC_FAKE_CUDA_LOG", "1")
    a = fake_gpu.compile_file(os.path.join(EX, "adamw.tc")).adamw
    sizes = [1000, 7, 4096, 1, 250] * 48  # 240 tensors
    lists = [[FakeCudaTensor((n,)) for n in sizes] for _ in range(4)]
    capfd.readouterr()
    try:
        r = a.foreach(*lists, step=3, stream=5, **ce.ADAM)
    except tensorc.NoDeviceError as e:
        pytest.skip(f"no NVRTC: {e}")
    assert len(_launches(capfd)) == 1
    assert r[0] is lists[0] and r[1] is lists[2] and r[2] is lists[3]
    assert all(t.streams == [5] for t in lists[1])
    # a TensorList is exported once: later calls ask the producers for nothing
    tl = [tensorc.TensorList(l) for l in lists]
    exported = [len(t.streams) for t in lists[0]]
    capfd.readouterr()
    for _ in range(3):
        r = a.foreach(*tl, step=3, **ce.ADAM)
    assert len(_launches(capfd)) == 3
    assert [len(t.streams) for t in lists[0]] == exported
    assert r[0] is tl[0] and list(r[0]) == lists[0]
    # a group whose sizes disagree is named
    bad = [l[:] for l in lists]
    bad[1][17] = FakeCudaTensor((999,))
    with pytest.raises(tensorc.ArgumentError, match="group 17"):
        a.foreach(*bad, step=3, **ce.ADAM)


# --- prepared calls: one tc_arg array per signature, slots refilled --------------------------

def test_prepared_calls_follow_each_signature():
    """Calls with different signatures (a scalar given or defaulted, an int or a float, out=
    given or not) each get their own prepared array, and alternating between them gives
    NumPy's answers every time; a strided array's strides reach the C API (which wants
    compact row-major) and do not stick to the slot for the next call."""
    p = tensorc.compile("fn f(x: f32[N, D], s: f32 = 2.0) -> (y: f32[N, D], r: f32[N]) {\n"
                        "    return x * s, sum(x, 1)\n}\n")
    rng = np.random.default_rng(1)
    base = rng.standard_normal((5, 6)).astype(np.float32)
    views = [base, base[1:4], base[:1], base[2:]]
    for i in range(12):
        x = views[i % len(views)]
        with pytest.raises(tensorc.ArgumentError, match="dim 1 has stride 2"):
            p.f(base[:, ::2], **({} if i % 3 else {"s": 1.5}))
        s = [None, 3, 0.5][i % 3]
        kw = {} if s is None else {"s": s}
        want_y, want_r = x * (2.0 if s is None else s), x.sum(axis=1)
        if i % 2:
            y, r = np.empty_like(x, order="C"), np.empty(x.shape[0], np.float32)
            got = p.f(x, out=(y, r), **kw)
            assert got[0] is y and got[1] is r
        else:
            y, r = p.f(x, **kw)
        np.testing.assert_allclose(y, want_y, rtol=1e-6)
        np.testing.assert_allclose(r, want_r, rtol=1e-5, atol=1e-5)
    # a wrong argument after good calls is still reported, named
    with pytest.raises(TypeError, match="'s'"):
        p.f(base, s="x")
    with pytest.raises(tensorc.ArgumentError):
        p.f(base[:, :, None])


def test_prepared_calls_from_threads():
    """Each thread has its own prepared arrays: concurrent calls never mix arguments."""
    import threading
    gc = tensorc.compile_file(os.path.join(EX, "gelu_chain.tc")).gelu_chain
    errors = []

    def worker(k):
        try:
            x = np.full(37 + k, k / 10, np.float32)
            want = gc(x.copy())
            out = np.empty_like(x)
            for _ in range(200):
                gc(x, out=out)
                if not np.array_equal(out, want):
                    errors.append(k)
                    return
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []


class _FakeTorchTensor:
    """Just what the torch fast path reads (layout, conj/neg bits, dtype, device, data_ptr,
    shape, stride), over a NumPy array on the CPU; __dlpack__ for the fallback."""

    def __init__(self, a, conj=False):
        self.a, self.conj, self.exports = a, conj, 0
        mod = __import__("sys").modules["torch"]
        self.layout, self.dtype = mod.strided, {np.dtype(np.float32): mod.float32,
                                                np.dtype(np.int64): mod.int64}[a.dtype]
        self.is_cuda, self.device, self.shape = False, mod._Device("cpu"), a.shape

    def is_conj(self): return self.conj
    def is_neg(self): return False
    def dim(self): return self.a.ndim
    def data_ptr(self): return self.a.__array_interface__["data"][0]
    def is_contiguous(self): return self.a.flags.c_contiguous
    def stride(self): return tuple(s // self.a.itemsize for s in self.a.strides)
    def get_device(self): return -1
    def __dlpack_device__(self): return (tensorc._capi.kDLCPU, 0)

    def __dlpack__(self, stream=None):
        self.exports += 1
        return self.a.__dlpack__()


def test_torch_fast_path(monkeypatch):
    """A torch tensor is described from its attributes (no DLPack export per call), strided
    or not; one that needs DLPack's own checks (a conjugate view) goes through __dlpack__."""
    import sys
    import types
    fake = types.ModuleType("torch")
    fake.strided, fake.float32, fake.int64 = object(), object(), object()
    fake.float16 = fake.bfloat16 = fake.float64 = fake.int32 = fake.bool = object()
    fake.version = types.SimpleNamespace(hip=None)
    fake._Device = lambda kind: types.SimpleNamespace(type=kind)
    _FakeTorchTensor.__module__ = "torch"
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(tensorc._tensors, "_TORCH", {})
    monkeypatch.setattr(tensorc._tensors, "_LIB_OF_TYPE", {})
    p = tensorc.compile("fn f(x: f32[N, D]) -> f32[N, D] {\n    return x * 2 + 1\n}\n")
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for x, want in ((a, None), (a[1:3], None), (a[:, 1::2], "dim 1 has stride 2, not 1"),
                    (a.T, "dim 1 has stride 6, not 1"), (a[3:], None)):
        t, o = _FakeTorchTensor(x), _FakeTorchTensor(np.empty(x.shape, np.float32))
        if want:  # its strides, as torch's stride() gives them, reach C
            with pytest.raises(tensorc.ArgumentError, match=re.escape(want)):
                p.f(t, out=o)
        else:
            assert p.f(t, out=o) is o
            np.testing.assert_array_equal(o.a, x * 2 + 1)
        assert t.exports == 0 and o.exports == 0
    c = _FakeTorchTensor(a, conj=True)
    o = _FakeTorchTensor(np.empty_like(a))
    p.f(c, out=o)
    assert c.exports == 1 and o.exports == 0
    np.testing.assert_array_equal(o.a, a * 2 + 1)
