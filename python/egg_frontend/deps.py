"""Which Python files an op.py depends on: itself plus the local modules it imported.

A module is local when its file lies outside the standard library and outside any
site-packages/dist-packages folder (and is not part of EGG's frontend itself).
"""

import os
import site
import sys
import sysconfig

_FRONTEND_DIR = os.path.dirname(os.path.realpath(__file__))


def _system_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            dirs.add(os.path.realpath(p))
    try:
        dirs.update(os.path.realpath(p) for p in site.getsitepackages())
    except AttributeError:
        pass
    try:
        dirs.add(os.path.realpath(site.getusersitepackages()))
    except AttributeError:
        pass
    return dirs


_SYSTEM_DIRS = _system_dirs()


def _under(path, folder):
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def is_local_path(fn):
    """True when ``fn`` is a user source file (not stdlib, site-packages or EGG itself)."""
    if not fn or fn.startswith("<"):
        return False
    fn = os.path.realpath(fn)
    parts = fn.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    if _under(fn, _FRONTEND_DIR):
        return False
    return not any(_under(fn, d) for d in _SYSTEM_DIRS)


def local_file(module):
    """The module's source file if it is a local (user) module, else None."""
    fn = getattr(module, "__file__", None)
    if not fn or not isinstance(fn, str):
        return None
    fn = os.path.realpath(fn)
    if fn.endswith((".pyc", ".pyo")):
        src = fn[:-1]
        if not os.path.isfile(src):
            return None
        fn = src
    if not os.path.isfile(fn) or not is_local_path(fn):
        return None
    return fn


def local_modules(names):
    """{module name: file} for the local modules among ``names`` present in sys.modules."""
    out = {}
    for name in names:
        mod = sys.modules.get(name)
        fn = local_file(mod) if mod is not None else None
        if fn:
            out[name] = fn
    return out


def deps_list(op_file, files):
    """Sorted unique absolute paths: op.py plus ``files``."""
    return sorted({os.path.realpath(op_file)} | {os.path.realpath(f) for f in files})
