"""rt.py - emu.h's runtime built once, shared by every unit's build.

A unit's host program (emu.py's m.cpp) used to include emu.h whole: each
build compiled the C++ standard headers, the launch loop, the fibers and the
inline PTX interpreter again, about two thirds of the build's g++ time.  Now
emu_rt.cpp (emu.h with EMU_RT_IMPL) is compiled once into emu_rt.o, and
emu.h with EMU_RT_EXTERN (that runtime's state extern, its functions
declared) is precompiled (g++'s emu.h.gch); a unit's build includes the
precompiled header and links emu_rt.o, so it compiles only the unit and the
inline parts of emu.h it uses.  The same source, compiler and flags as
before (-std=c++17 -O1 -w -DEMU_ARCH=N): the same program, in two pieces.

runtime(cxx, arch, base) -> (include_dir, object): the directory to put first on
the include path (a copy of emu.h and its .gch) and the runtime object.
Built under $TC_EMU_RT_DIR, else a directory emu-rt beside the tensorc
binary (emu.py's first argument: a build tree has its own, a fresh one
starts empty), one subdirectory per key (the hash of emu.h, emu_rt.cpp,
rt.py, the compiler's version and the flags), made in a temporary directory and
renamed into place under a lock, so parallel tests build it once and never
see half of it.  A .gch g++ cannot use (another compiler, flags) is
ignored by g++, which then reads the emu.h beside it: slower, never
wrong."""
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
FLAGS = ["-std=c++17", "-O1", "-w"]


def runtime(cxx, arch, base):
    h = hashlib.sha1()
    for f in ("emu.h", "emu_rt.cpp", "rt.py"):
        h.update(open(os.path.join(here, f), "rb").read())
    ver = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    h.update(("\0".join([cxx, ver, arch] + FLAGS)).encode())
    key = h.hexdigest()[:16]
    os.makedirs(base, exist_ok=True)
    final = os.path.join(base, key)
    obj = os.path.join(final, "emu_rt.o")
    if os.path.exists(obj):
        return final, obj
    with open(os.path.join(base, key + ".lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if os.path.exists(obj):
            return final, obj
        tmp = tempfile.mkdtemp(prefix=key + ".", dir=base)
        shutil.copy(os.path.join(here, "emu.h"), tmp)
        defs = ["-DEMU_ARCH=" + arch]
        for cmd in ([cxx] + FLAGS + defs + ["-I" + here, "-c", "-o", tmp + "/emu_rt.o", here + "/emu_rt.cpp"],
                    [cxx] + FLAGS + defs + ["-DEMU_RT_EXTERN", "-x", "c++-header", "-o", tmp + "/emu.h.gch",
                                            tmp + "/emu.h"]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                shutil.rmtree(tmp, ignore_errors=True)
                raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr[:3000]))
        os.rename(tmp, final)
    return final, obj


def base(tc):
    """$TC_EMU_RT_DIR, else emu-rt beside the tensorc binary TC, else (not
    writable there) one in the temporary directory"""
    if os.environ.get("TC_EMU_RT_DIR"):
        return os.environ["TC_EMU_RT_DIR"]
    d = os.path.dirname(os.path.realpath(tc))
    if os.access(d, os.W_OK):
        return os.path.join(d, "emu-rt")
    return os.path.join(tempfile.gettempdir(), "tc-emu-rt-%d" % os.getuid())


def flags(arch):
    """the flags of a unit's build against the runtime (the .gch's own)"""
    return FLAGS + ["-DEMU_ARCH=" + arch, "-DEMU_RT_EXTERN"]


if __name__ == "__main__":
    # rt.py TENSORC ARCH [CXX]: "INCLUDE_DIR OBJECT" for a shell script's build
    # (rows.sh), whose flags must be flags(ARCH) for the .gch to serve
    import sys
    try:
        d, o = runtime(sys.argv[3] if len(sys.argv) > 3 else os.environ.get("CXX", "g++"), sys.argv[2],
                       base(sys.argv[1]))
    except (RuntimeError, OSError) as e:
        print("emu.h's runtime (tests/emu/rt.py): %s" % e, file=sys.stderr)
        sys.exit(1)
    print(d, o)
