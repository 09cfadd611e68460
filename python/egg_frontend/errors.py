"""Typed frontend errors, their error.json and their one-line stderr report.

A ``UserError`` (exit 1) is the op.py's fault and names file, line and op; an
``InternalError`` (exit 2) is a bug in EGG.  Helpers here also locate the user's
frame in a traceback.
"""

import json
import os
import sys
import traceback


class FrontendError(Exception):
    kind = "internal"
    exit_code = 2

    def __init__(self, file, line, op, message, hint=""):
        super().__init__(message)
        self.file = file or ""
        self.line = int(line or 0)
        self.op = op or ""
        self.message = one_line(message)
        self.hint = one_line(hint)

    def to_json(self):
        return {"kind": self.kind, "file": self.file, "line": self.line,
                "op": self.op, "message": self.message, "hint": self.hint}

    def report_line(self):
        return "egg: error: %s:%d: %s: %s" % (self.file, self.line, self.op, self.message)


class UserError(FrontendError):
    kind = "user"
    exit_code = 1


class InternalError(FrontendError):
    kind = "internal"
    exit_code = 2


def one_line(text):
    """Collapse a message to one line (stderr reports and error.json stay greppable)."""
    text = " ".join(str(text or "").split("\n"))
    return " ".join(text.split())


def describe(exc):
    """``TypeName: first line of the message`` for an exception."""
    msg = str(exc).strip().split("\n")[0] if str(exc).strip() else ""
    return "%s: %s" % (type(exc).__name__, msg) if msg else type(exc).__name__


def user_frame(exc, user_files):
    """(file, line) of the innermost traceback frame in user code, else (None, 0).

    User code is one of ``user_files`` (op.py and its known local modules) or any other
    local source file (a helper that failed while being imported is not known yet).
    """
    from .deps import is_local_path
    found = (None, 0)
    files = {os.path.realpath(f) for f in user_files}
    tb = exc.__traceback__
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if fn and (os.path.realpath(fn) in files or is_local_path(fn)):
            found = (os.path.realpath(fn), tb.tb_lineno)
        tb = tb.tb_next
    return found


def write_error(out_dir, err):
    """Write error.json atomically into ``out_dir`` (best effort: never raises)."""
    try:
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, "error.json")
        tmp = path + ".tmp.%d" % os.getpid()
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(err.to_json(), f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except OSError:
        pass


def report(err, stream=None):
    """Print the one-line error and its hint on stderr."""
    stream = stream or sys.stderr
    stream.write(err.report_line() + "\n")
    if err.hint:
        stream.write("egg: hint: %s\n" % err.hint)
    stream.flush()


def internal_from(exc):
    """Wrap an unexpected exception as an InternalError naming the frontend's frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    file, line = (frames[-1].filename, frames[-1].lineno) if frames else ("", 0)
    return InternalError(file, line, "egg_frontend", "internal error: " + describe(exc),
                         "this is a bug in EGG's frontend; please report it with the op.py")


def require_torch(op_path):
    """Raise a UserError naming this interpreter when it cannot import torch (exit 1, not a bug).

    The one place that says "this Python has no torch": egg-gen's frontend runs here first."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise UserError(op_path, 0, "python",
                        "the Python at %s cannot import torch (%s)" % (sys.executable, describe(e)),
                        "install torch for it (%s -m pip install torch), or pass --python / set "
                        "EGG_PYTHON to a Python that has torch" % sys.executable)


def from_exit(exc, op_path):
    """A UserError for op.py calling sys.exit() (or raising SystemExit) while being traced."""
    file, line = user_frame(exc, [op_path])
    return UserError(file or op_path, line, "sys.exit",
                     "op.py called sys.exit(%s) while being traced" % (exc.code,),
                     "op.py must not exit the process: remove the sys.exit()/exit() call, or "
                     "guard it with `if __name__ == \"__main__\":`")
