"""unit.py - a generated CUDA unit (tensorc compile --emit=cuda) made ready
for emu.h: each asm statement becomes an emu_ptx, decoded once, run with its
operands (outputs by reference, inputs by value, numbered as PTX numbers
them), and each __shared__ declaration a reference to that block's storage
(emu_shared<TYPE, ID, ALIGN>()).  The unit's text is otherwise unchanged:
the code the host runs is the code NVRTC compiles, with __CUDA_ARCH__ set by
emu.h.  rewrite(text) returns the host unit; run as a script: unit.py IN OUT."""
import re
import sys


def _balanced(s, i):
    """s[i] == '(': the index of its matching ')', skipping string literals."""
    depth, q = 0, None
    while i < len(s):
        c = s[i]
        if q:
            if c == "\\":
                i += 1
            elif c == q:
                q = None
        elif c in "\"'":
            q = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced asm statement")


def _split(s, sep):
    """s split at sep outside parentheses and string literals"""
    out, cur, depth, q, i = [], "", 0, None, 0
    while i < len(s):
        c = s[i]
        if q:
            cur += c
            if c == "\\":
                cur += s[i + 1]
                i += 1
            elif c == q:
                q = None
        elif c in "\"'":
            q = c
            cur += c
        elif c in "([{":
            depth += 1
            cur += c
        elif c in ")]}":
            depth -= 1
            cur += c
        elif c == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    out.append(cur)
    return out


def _operand(text, output):
    m = re.match(r'\s*"([=+&]*)([a-zA-Z])"\s*\((.*)\)\s*$', text, re.S)
    if not m:
        raise ValueError("asm operand not understood: " + text)
    return "emu_%s('%s', %s)" % ("out" if output else "in", m.group(2), m.group(3))


def rewrite_asm(s):
    out, n, pos = [], 0, 0
    for m in re.finditer(r"\basm\s*(?:volatile\s*)?\(", s):
        if m.start() < pos:
            continue
        a = m.end() - 1
        b = _balanced(s, a)
        parts = _split(s[a + 1:b], ":")
        tmpl = parts[0].strip()
        outs = [p for p in _split(parts[1], ",") if p.strip()] if len(parts) > 1 else []
        ins = [p for p in _split(parts[2], ",") if p.strip()] if len(parts) > 2 else []
        args = [_operand(p, True) for p in outs] + [_operand(p, False) for p in ins]
        out.append(s[pos:m.start()])
        out.append("do { static const emu_ptx emu_ptx_%d(%s); emu_ptx_%d.run({%s}); } while (0)"
                   % (n, tmpl, n, ", ".join(args)))
        n += 1
        pos = b + 1
    out.append(s[pos:])
    return "".join(out)


def rewrite_shared(s):
    n = [0]

    def one(m):
        al = m.group(1) or m.group(5) or "16"
        ty, name, dims = m.group(2).strip(), m.group(3), m.group(4) or ""
        dims = "".join("[(%s)]" % d for d in re.findall(r"\[([^\]]*)\]", dims))
        n[0] += 1
        return "auto &%s = emu_shared<%s%s, %d, %s>();" % (name, ty, dims, n[0], al)
    # the launch's dynamic shared memory: as much as a block may have (227 KB)
    def dyn(m):
        n[0] += 1
        return "auto &%s = emu_shared<%s[EMU_DYN_SHARED], %d, %s>();" % (m.group(3), m.group(2).strip(), n[0],
                                                                         m.group(1) or "16")
    s = re.sub(r"extern[ \t]+__shared__[ \t]+(?:__align__\((\d+)\)[ \t]+)?([^;\n=]*?)[ \t]*\b(\w+)[ \t]*\[\][ \t]*;",
               dyn, s)
    pat = (r"__shared__[ \t]+(?:__align__\((\d+)\)[ \t]+)?([^;\n=]*?)[ \t]*\b(\w+)[ \t]*"
           r"((?:\[[^\]\n]*\][ \t]*)*)(?:__align__\((\d+)\))?[ \t]*;")
    s = re.sub(pat, one, s)
    if "__shared__" in re.sub(r"/\*.*?\*/|//[^\n]*", "", s, flags=re.S):
        i = s.index("__shared__")
        raise ValueError("a __shared__ declaration unit.py does not know: " + s[i:i + 80])
    return s


def rewrite(s):
    return rewrite_shared(rewrite_asm(s))


if __name__ == "__main__":
    try:
        text = rewrite(open(sys.argv[1]).read())
    except ValueError as e:
        sys.exit("unit.py: %s" % e)
    open(sys.argv[2], "w").write(text)
