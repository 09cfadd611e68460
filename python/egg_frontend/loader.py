"""Load a KernelBench-format op.py: the module, ``Model``, its init and forward inputs.

The op is executed as a fresh module with its folder first on sys.path, so a
``helpers.py`` beside it is importable; local modules loaded by a previous op in
the same process are forgotten first, so each load sees its own helpers.
"""

import ast
import importlib.util
import linecache
import os
import sys

import torch

from . import deps
from .errors import UserError, describe, user_frame

_loaded_local = set()  # names of local modules imported by earlier loads in this process
_counter = [0]


class LoadedOp:
    """What the loader found in op.py."""

    def __init__(self, path, module, source, tree):
        self.path = path
        self.module = module
        self.source = source
        self.tree = tree
        self.model = None
        self.init_inputs = []
        self.initial_state = {}
        self.param_versions = {}
        self.modules_before = set()
        self.sys_path_entry = None

    # -- source locations -------------------------------------------------
    def def_line(self, name):
        """Line of the top-level def/class/assignment of ``name``; 1 when absent."""
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) \
                    and node.name == name:
                return node.lineno
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return node.lineno
        return 1

    def forward_return_line(self, class_name="Model"):
        """Line of the last ``return`` in ``class_name.forward`` (0 when not found)."""
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "forward":
                        rets = [n.lineno for n in ast.walk(item) if isinstance(n, ast.Return)]
                        return max(rets) if rets else item.lineno
        return 0

    def source_line(self, line):
        lines = self.source.splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    # -- deps -------------------------------------------------------------
    def local_files(self):
        new = set(sys.modules) - self.modules_before
        found = deps.local_modules(new)
        _loaded_local.update(found)
        return sorted(set(found.values()))

    def close(self):
        """Undo the sys.path change made for the load."""
        if self.sys_path_entry is not None:
            try:
                sys.path.remove(self.sys_path_entry)
            except ValueError:
                pass
            self.sys_path_entry = None


def _forget_previous_locals():
    for name in list(_loaded_local):
        sys.modules.pop(name, None)
    _loaded_local.clear()


def load(path):
    """Read, compile and execute op.py; raise UserError for syntax or import-time errors."""
    path = os.path.realpath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise UserError(path, 0, "op.py", "cannot read the op file: %s" % e.strerror,
                        "pass the absolute path of an existing op.py")
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(path, 0, "op.py", "the op file is not UTF-8: %s" % e,
                        "save op.py as UTF-8")
    try:
        code = compile(source, path, "exec", dont_inherit=True)
        tree = ast.parse(source, path)
    except SyntaxError as e:
        raise UserError(path, e.lineno or 0, "syntax",
                        "syntax error: %s" % (e.msg or "invalid syntax"),
                        "fix the Python syntax of op.py at this line")

    _forget_previous_locals()
    linecache.clearcache()  # a rewritten op.py at the same path must not show stale lines
    _counter[0] += 1
    name = "_egg_op_%d" % _counter[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    op = LoadedOp(path, module, source, tree)
    op.modules_before = set(sys.modules)
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    op.sys_path_entry = folder
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException as e:  # noqa: B902 - SystemExit from a script too
        if isinstance(e, KeyboardInterrupt):
            raise
        file, line = user_frame(e, [path] + op.local_files())
        op.close()
        raise UserError(file or path, line, "import" if isinstance(e, ImportError) else "<module>",
                        "executing op.py failed: %s" % describe(e),
                        "op.py must run as a plain Python module; fix the error at this line")
    return op


def _require(op, name, hint):
    obj = getattr(op.module, name, None)
    if obj is None:
        raise UserError(op.path, op.def_line(name), name, "op.py defines no %s" % (
            "class Model(nn.Module)" if name == "Model" else "function %s()" % name), hint)
    return obj


def _call_user(op, fn, what, hint):
    try:
        return fn()
    except Exception as e:
        file, line = user_frame(e, [op.path] + op.local_files())
        raise UserError(file or op.path, line or op.def_line(what), what,
                        "%s failed: %s" % (what if what == "Model" else what + "()", describe(e)),
                        hint)


def build_model(op):
    """Instantiate ``Model(*get_init_inputs())`` under ``torch.manual_seed(0)``."""
    model_cls = _require(op, "Model", "define `class Model(nn.Module)` with __init__ and forward")
    _require(op, "get_inputs", "add `def get_inputs(): return [torch.randn(...)]` "
                               "returning the forward inputs")
    if not (isinstance(model_cls, type) and issubclass(model_cls, torch.nn.Module)):
        raise UserError(op.path, op.def_line("Model"), "Model",
                        "Model is not a subclass of torch.nn.Module",
                        "declare `class Model(nn.Module):`")
    get_init = getattr(op.module, "get_init_inputs", None)
    init_inputs = []
    if get_init is not None:
        torch.manual_seed(0)
        init_inputs = _call_user(op, get_init, "get_init_inputs",
                                 "get_init_inputs() must return the list of Model's "
                                 "constructor arguments")
        if not isinstance(init_inputs, (list, tuple)):
            raise UserError(op.path, op.def_line("get_init_inputs"), "get_init_inputs",
                            "get_init_inputs() returned %s, not a list"
                            % type(init_inputs).__name__,
                            "return a list of Model's constructor arguments")
        init_inputs = list(init_inputs)
    torch.manual_seed(0)
    model = _call_user(op, lambda: model_cls(*init_inputs), "Model",
                       "fix Model's constructor or get_init_inputs()")
    tensor_attributes_as_buffers(model)
    op.model = model.cpu()  # traced on the CPU; the reference server moves it to its device
    op.init_inputs = init_inputs
    snapshot_state(op)
    return model


def tensor_attributes_as_buffers(model):
    """Plain tensor attributes of ``model`` and its submodules (``self.h = torch.randn(...)`` in
    ``__init__``) become non-persistent buffers, as torch.export requires of a tensor that forward
    changes in place (``self.h.copy_(h0)``). Done where the model is built, so the tracer and the
    reference server list the same buffers in the same order. Returns their qualified names."""
    moved = []
    for prefix, module in model.named_modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                delattr(module, name)
                module.register_buffer(name, value, persistent=False)
                moved.append(prefix + "." + name if prefix else name)
    return moved


def snapshot_state(op):
    """What reset_state restores: a copy of every buffer (a forward may update e.g. BatchNorm
    stats) and each parameter's version counter. Parameters are not copied (a model's weights can
    be gigabytes, and a second host copy would double its memory): a forward that changes one in
    place is found by its version and refused. Taken again after the model moves to a device."""
    params = dict(op.model.named_parameters())
    ids = {id(p) for p in params.values()}
    op.initial_state = {k: v.detach().clone()
                        for k, v in op.model.state_dict(keep_vars=True).items() if id(v) not in ids}
    op.param_versions = {n: p._version for n, p in params.items()}


def reset_state(op):
    """Restore the buffers as built; a parameter a forward changed in place is a user error."""
    for n, p in op.model.named_parameters():
        if p._version != op.param_versions.get(n, p._version):
            raise UserError(op.path, op.def_line("Model"), "forward",
                            "forward changes the parameter %s in place, so every call starts "
                            "from other weights and there is no single reference" % n,
                            "compute a new tensor from the parameter instead of updating it "
                            "(or make it a buffer that forward resets)")
    with torch.no_grad():
        op.model.load_state_dict(op.initial_state, strict=False)


def get_inputs(op, seed, device="cpu"):
    """``get_inputs()`` under ``torch.manual_seed(seed)``, checked to be a list of tensors.

    The tensors are created on ``device`` (the default device while get_inputs runs: "meta"
    gives shapes and dtypes without memory, "cuda" generates the data on the GPU) and returned
    there."""
    fn = _require(op, "get_inputs", "add `def get_inputs(): return [torch.randn(...)]`")
    torch.manual_seed(seed)
    with torch.device(device):
        inputs = _call_user(op, fn, "get_inputs", "fix get_inputs(); it must return a list of "
                                                  "the forward's input tensors")
    line = op.def_line("get_inputs")
    if isinstance(inputs, torch.Tensor):
        inputs = [inputs]
    if not isinstance(inputs, (list, tuple)):
        raise UserError(op.path, line, "get_inputs", "get_inputs() returned %s, not a list"
                        % type(inputs).__name__, "return a list of tensors")
    for i, t in enumerate(inputs):
        if not isinstance(t, (torch.Tensor,) + NUMBERS):
            raise UserError(op.path, line, "get_inputs",
                            "forward input %d is %s, not a tensor or a number" %
                            (i, type(t).__name__),
                            "every forward input must be a tensor or a Python number; pass other "
                            "constants through get_init_inputs() and Model's constructor instead")
    return [t.detach().to(device) if isinstance(t, torch.Tensor) else t for t in inputs]


# Python numbers a forward may take besides tensors: the kernel is generated for the value
# get_inputs() gives, as for the shapes (torch.export specializes them).
NUMBERS = (bool, int, float)


def tensors(inputs):
    """The tensor inputs of a get_inputs() list, in order (what the kernel takes)."""
    return [t for t in inputs if isinstance(t, torch.Tensor)]


def numbers(inputs):
    """The Python-number inputs of a get_inputs() list as (position, value)."""
    return [(i, t) for i, t in enumerate(inputs) if not isinstance(t, torch.Tensor)]
