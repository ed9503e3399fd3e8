#!/usr/bin/env python3
"""gen_hookcall.py HOOKS_DEF OUT.c - writes hookcall.c, a client that calls
every function of shim/hooks.def through each route it can be reached by
(tests/preload/t_hook_routes.sh; the routes: docs/hooks.md).

The table is read here, not listed by hand: a new line in hooks.def is a new
call of the client (and a new hook the doubles do not export fails the test).
Each call gets plain arguments chosen by parameter type and name: out-
parameters point to zeroed scratch memory, handles and descriptors are NULL
unless the client made one (a cuDNN handle, tensor, filter, convolution and
activation descriptors on the doubles), sizes are small.  Many calls fail;
for route coverage that does not matter (a failed call is counted too), and
the ones that succeed are what the errno check is about.

    hookcall list                    the hooks: "NAME FAMILY"
    hookcall routes                  for each route and hook: "ROUTE NAME ok VERSION" or "ROUTE NAME unreachable"
    hookcall fork ROUTE...           for each hook the route reaches, two forked children: "lookup"
                                     (finds the function, calls nothing hooked) and "call" (finds it and
                                     calls it once); each first asks for a missing CUDA-family library, so
                                     that it has a trace of its own, and prints "child ROUTE NAME MODE PID"
    hookcall errno ROUTE...          each reachable hook called twice in a forked child, errno set to a
                                     marker before each: "ROUTE NAME callK rc=N errno=same|changed(E)"

Routes: plt (a call by name, the client is linked against the doubles), dlsym
(dlopen of the soname, dlsym), and for the driver's functions cuGetProcAddress,
cuGetProcAddress_v2, cudaGetDriverEntryPoint, cudaGetDriverEntryPointByVersion
(the base name, "cuMemAlloc" for cuMemAlloc_v2, at the highest driver version
whose answer is what dlsym gives for that name; _ptsz with the per-thread
stream flag).
"""
import re
import sys

SONAME = {"CUDNN": "libcudnn.so.9", "CUDART": "libcudart.so.13", "DRV": "libcuda.so.1"}


def hooks(path):
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    text = re.sub(r"^#.*$", "", text, flags=re.M)
    out = []
    for m in re.finditer(r"\bCG_HOOK\w*\(\s*(\w+)\s*,\s*([\w ]+?)\s*,\s*(\w+)\s*,\s*\(([^)]*)\)\s*,\s*\(([^)]*)\)", text):
        fam, ret, name, params, args = m.groups()
        ps = []
        for p in params.split(","):
            p = " ".join(p.split())
            pm = re.match(r"(.*?)\s*(\w+)$", p)
            ps.append((pm.group(1).strip(), pm.group(2)))
        out.append((fam, ret, name, ps, [a.strip() for a in args.split(",")]))
    return out


def value(ty, name, k):
    """the argument for parameter k of type ty called name"""
    objects = {"cudnnHandle_t": "g_handle", "cudnnTensorDescriptor_t": "g_tensor", "cudnnFilterDescriptor_t": "g_filter",
               "cudnnConvolutionDescriptor_t": "g_conv", "cudnnActivationDescriptor_t": "g_act"}
    if ty in objects:
        return objects[ty]
    if ty == "const char *":
        return {"symbol": '"cuInit"', "fname": '"/nonexistent/convguard-hookcall"'}.get(name, '""')
    if ty.endswith("*"):
        return "(%s)(void *)scratch[%d]" % (ty, k)
    if ty in ("size_t",):
        return {"size": "(size_t)1 << 20", "max_size": "256"}.get(name, "0")
    if ty == "int":
        return {"version": "13000", "requested": "1"}.get(name, "0")
    if ty == "unsigned int" and name == "version":
        return "13000"
    return "(%s)0" % ty


def main():
    hs = hooks(sys.argv[1])
    o = ["/* hookcall.c - written by tests/clients/gen_hookcall.py from shim/hooks.def: do not edit. */\n",
         '#include "hookcall_main.h"\n']
    for fam, ret, name, ps, args in hs:
        decls = "".join("    %s %s = %s;\n" % (ty, n, value(ty, n, k)) for k, (ty, n) in enumerate(ps))
        proto = ", ".join(ty + " " + n for ty, n in ps)
        call = "%s(%s)" % ("%s", ", ".join(args))
        for kind, fn in (("plt", name), ("ptr", "f")):
            o.append("\nstatic long %s_%s(void *fp)\n{\n" % (kind, name))
            o.append("    %s (*f)(%s) = (%s (*)(%s))fp;\n    (void)f;\n" % (ret, proto, ret, proto))
            o.append(decls)
            if ret == "void":
                o.append("    %s;\n    return 0;\n}\n" % (call % fn))
            else:
                o.append("    return (long)%s;\n}\n" % (call % fn))
    o.append("\nconst struct hook hooks[] = {\n")
    for fam, ret, name, ps, args in hs:
        o.append('    { "%s", "%s", "%s", plt_%s, ptr_%s },\n' % (name, fam, SONAME[fam], name, name))
    o.append("};\nconst size_t n_hooks = sizeof hooks / sizeof hooks[0];\n")
    open(sys.argv[2], "w").write("".join(o))


main()
