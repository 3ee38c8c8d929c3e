#!/usr/bin/env python3
"""cubin.py IMAGE sm_NN N | --batch LIST - a CUBIN as tests/nvrtc/run.sh wants it: an ELF
file for NVIDIA CUDA (machine 190) built for sm_NN (e_flags bits 8-15, the
encoding NVRTC writes for sm_80 and sm_90) with exactly N kernel entries
(global FUNC symbols marked STO_CUDA_ENTRY, 0x10: one per __global__ of
the unit, what a PTX's .entry lines are).  Prints nothing and exits 0 when
it holds, else prints why and exits 1.  --batch LIST: each line of LIST is
RESULT IMAGE sm_NN N MS WHAT (tabs between), and RESULT gets tests/nvrtc/
run.sh's line, "ok   WHAT (MS ms)" or "FAIL WHAT: why" (run.sh's CUBINs,
checked in one process)."""
import struct
import sys


def check(path, arch, want):
    with open(path, "rb") as f:
        b = f.read()
    if b[:4] != b"\x7fELF":
        return "the CUBIN is not an ELF file"
    if b[4] != 2 or b[5] != 1:
        return "the CUBIN is not a 64-bit little-endian ELF file"
    machine, = struct.unpack_from("<H", b, 18)
    flags, = struct.unpack_from("<I", b, 48)
    if machine != 190:
        return "the CUBIN's machine is %d, not 190 (CUDA)" % machine
    sm = (flags >> 8) & 0xff
    if "sm_%d" % sm != arch:
        return "the CUBIN targets sm_%d, not %s (e_flags 0x%x)" % (sm, arch, flags)
    shoff, = struct.unpack_from("<Q", b, 40)
    shentsize, shnum = struct.unpack_from("<HH", b, 58)
    entries = 0
    for i in range(shnum):
        sh = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", b, sh + 4)
        if sh_type != 2:  # SHT_SYMTAB
            continue
        off, size = struct.unpack_from("<QQ", b, sh + 24)
        entsize, = struct.unpack_from("<Q", b, sh + 56)
        for s in range(off, off + size, entsize or 24):
            info, other = b[s + 4], b[s + 5]
            if info & 0xf == 2 and info >> 4 == 1 and other & 0x10:
                entries += 1
    if entries != want:
        return "%d kernel entries in the CUBIN, %d __global__ in the source" % (entries, want)
    return None


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--batch":
        for line in open(sys.argv[2]):
            res, path, arch, want, ms, what = line.rstrip("\n").split("\t", 5)
            try:
                why = check(path, arch, int(want))
            except (OSError, struct.error, IndexError, ValueError) as e:
                why = "the CUBIN could not be read: %s" % e
            with open(res, "w") as f:
                f.write("FAIL %s: %s\n" % (what, why) if why else "ok   %s (%s ms)\n" % (what, ms))
        return 0
    if len(sys.argv) != 4:
        print("usage: cubin.py IMAGE sm_NN N", file=sys.stderr)
        return 2
    why = check(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    if why:
        print(why)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
