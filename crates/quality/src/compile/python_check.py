"""atto's Python check: syntax and imports of the files named in argv, none of them run.

Each file is compiled (syntax, indentation, `return` outside a function ...); then every
module it imports is looked up the way the import system would find it, from the
workspace (the current directory), the project's virtual environment (its site-packages
directories, given as `--site DIR` before `--` and the files) and the interpreter's own
environment, without importing it. Imports
guarded by `try: ... except ImportError` or a version or platform test are optional and
not checked. Prints one JSON object per finding, then {"done": N}.
"""

import sys

# `python3 -c` puts the current directory first on sys.path (atto runs it with `-I`, which
# does not): a workspace file named like a module this script needs (ast.py, json.py) must
# not be run in its place.
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]

import ast
import importlib.machinery
import importlib.util
import json
import os
import warnings

MAX_FINDINGS = 200
WORKSPACE = os.path.realpath(os.getcwd())
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
CONDITIONS = {"version_info", "hexversion", "platform", "implementation", "PY2", "PY3"}
STDLIB = set(getattr(sys, "stdlib_module_names", ()))
UNKNOWN = object()  # a finder failed: whether the module exists is not known
SITE = []  # the project environment's package directories, read, never run
DYNAMIC_SITE = False  # a .pth file there runs code: only running it could tell what it adds
emitted = 0
omitted = 0


def emit(index, line, message, kind="error"):
    global emitted, omitted
    if emitted >= MAX_FINDINGS:
        omitted += 1
        return
    emitted += 1
    print(json.dumps({"i": index, "line": line, "msg": message[:400], "kind": kind}))


def catches_import_error(handler):
    if handler is None:
        return True
    names = handler.elts if isinstance(handler, ast.Tuple) else [handler]
    for name in names:
        if isinstance(name, ast.Name) and name.id in IMPORT_ERRORS:
            return True
        if isinstance(name, ast.Attribute) and name.attr in IMPORT_ERRORS:
            return True
    return False


def is_condition(test):
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and node.attr in CONDITIONS:
            return True
        if isinstance(node, ast.Name) and node.id in CONDITIONS:
            return True
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "name"
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            return True
    return False


def unconditional_imports(statements, guarded=False, found=None):
    """The imports a file makes unconditionally: (line, level, dotted module). Imports are
    statements, so only statement blocks are walked, never expressions."""
    found = [] if found is None else found
    for node in statements:
        if isinstance(node, ast.Import):
            if not guarded:
                found.extend((node.lineno, 0, alias.name) for alias in node.names)
            continue
        if isinstance(node, ast.ImportFrom):
            # `from . import name`: the name may be defined in __init__.py, not a module.
            if not guarded and node.module:
                found.append((node.lineno, node.level, node.module))
            continue
        handlers = getattr(node, "handlers", None) or []
        inner = (
            guarded
            or any(catches_import_error(h.type) for h in handlers)
            or (isinstance(node, ast.If) and is_condition(node.test))
        )
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                unconditional_imports(block, inner, found)
        for nested in handlers + (getattr(node, "cases", None) or []):
            unconditional_imports(nested.body, inner, found)
    return found


def package_root(directory):
    """The first directory up from `directory` that is not a package."""
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


def inside_workspace(path):
    return path is not None and os.path.realpath(path).startswith(WORKSPACE + os.sep)


def read_site(directory):
    """Adds a package directory and the directories its .pth files name, as `site` would,
    without running the .pth files' `import` lines."""
    global DYNAMIC_SITE
    SITE.append(directory)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        if not name.endswith(".pth"):
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            DYNAMIC_SITE = True
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith(("import ", "import\t")):
                DYNAMIC_SITE = True
                continue
            path = os.path.join(directory, line)
            if os.path.isdir(path):
                SITE.append(path)


def compiled_in_site(name):
    """An extension module in the environment built for another Python version, which this
    interpreter's finders do not recognise (`name.cpython-312-x86_64-linux-gnu.so`)."""
    for directory in SITE:
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for entry in entries:
            if entry.startswith(name + ".") and entry.endswith((".so", ".pyd")):
                return True
    return False


def find_top(name, directories):
    spec = importlib.machinery.PathFinder.find_spec(name, directories + SITE)
    if spec is not None:
        return spec
    try:
        spec = importlib.util.find_spec(name)
    except Exception:  # noqa: BLE001 (a finder that fails cannot say the module is missing)
        return UNKNOWN
    if spec is None and (DYNAMIC_SITE or compiled_in_site(name)):
        return UNKNOWN
    return spec


def walk(spec, parts, certain):
    """Follows submodules through package directories. Returns the first missing dotted
    name, or None when found or when only importing the package could tell."""
    name = spec.name
    for part in parts:
        full = f"{name}.{part}"
        locations = spec.submodule_search_locations
        if locations is None:
            # A module, not a package (`os.path`): only the imported module knows, and
            # asking is safe only when it is already imported.
            if name in sys.modules:
                try:
                    found = importlib.util.find_spec(full)
                except Exception:  # noqa: BLE001
                    return None
                return None if found is not None else full
            return None
        sub = importlib.machinery.PathFinder.find_spec(full, list(locations))
        if sub is None:
            # A package outside the workspace and the standard library may add its
            # submodules at import time: not knowable without running it.
            return full if certain else None
        spec, name = sub, full
    return None


def missing_module(path, level, module):
    parts = module.split(".")
    if level:
        base = os.path.dirname(path)
        for _ in range(level - 1):
            base = os.path.dirname(base)
        spec = importlib.machinery.PathFinder.find_spec(parts[0], [base])
        if spec is None:
            return "." * level + parts[0]
        missing = walk(spec, parts[1:], certain=True)
        return "." * level + missing if missing else None
    directory = os.path.dirname(path)
    search = [directory, package_root(directory), WORKSPACE]
    src = os.path.join(WORKSPACE, "src")
    if os.path.isdir(src) and not os.path.isfile(os.path.join(src, "__init__.py")):
        search.append(src)
    spec = find_top(parts[0], search)
    if spec is None:
        return parts[0]
    if spec is UNKNOWN or len(parts) == 1:
        return None
    certain = (
        parts[0] in STDLIB
        or inside_workspace(spec.origin)
        or any(inside_workspace(p) for p in (spec.submodule_search_locations or []))
    )
    return walk(spec, parts[1:], certain)


def check(index, name):
    path = os.path.realpath(name)
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as err:
        emit(index, None, f"not checked: it cannot be read ({err.strerror})", "warning")
        return
    try:
        tree = ast.parse(source, filename=name)
        compile(tree, name, "exec", dont_inherit=True)
    except SyntaxError as err:
        emit(index, err.lineno, f"SyntaxError: {err.msg}")
        return
    except ValueError as err:  # NUL bytes, bad encoding declaration
        emit(index, None, f"SyntaxError: {err}")
        return
    except (RecursionError, MemoryError) as err:
        emit(
            index,
            None,
            f"not checked: too deeply nested to compile ({type(err).__name__})",
            "warning",
        )
        return
    reported = set()
    for line, level, module in unconditional_imports(tree.body):
        missing = missing_module(path, level, module)
        if missing and (line, missing) not in reported:
            reported.add((line, missing))
            emit(index, line, f"ImportError: No module named '{missing}'")


def main():
    warnings.simplefilter("ignore")
    args = sys.argv[1:]
    while len(args) >= 2 and args[0] == "--site":
        read_site(args[1])
        args = args[2:]
    files = args[1:] if args[:1] == ["--"] else args
    for index, name in enumerate(files):
        try:
            check(index, name)
        except Exception as err:  # noqa: BLE001 (one odd file must not hide the others)
            emit(
                index,
                None,
                f"not checked: the checker failed ({type(err).__name__}: {err})",
                "warning",
            )
    print(json.dumps({"done": len(files), "omitted": omitted}))


main()
