"""No import cycle between minidl modules, counting imports inside functions too.

Every module under minidl/ is parsed (nothing is imported). `import a.b` and
`from a import b` where a/b is a module are edges to that module; `from a import name`
where name is not a module is an edge to the package a (its __init__). A parent
package's own __init__ is not counted as a dependency of its children: a package that
re-exports its submodules is the usual layout, not a cycle.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "minidl"


def module_files():
    """{dotted module name: path} for every .py file of the package."""
    modules = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _absolute(module, is_package, level, target):
    """The dotted name a (possibly relative) import in `module` refers to."""
    if level == 0:
        return target
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module, path, modules):
    """The minidl modules that `module` imports anywhere in its source."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, is_package, node.level, node.module)
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                     for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in modules and name != module)
    return found


def find_cycle(graph):
    """One cycle of `graph` ({node: set of nodes}) as a list of nodes, or None."""
    state = {}   # node -> "active" while on the current path, "done" after

    def visit(node, path):
        state[node] = "active"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "active":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, path)
                if cycle:
                    return cycle
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [])
            if cycle:
                return cycle
    return None


def import_graph():
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_the_scanner_sees_imports_inside_functions():
    graph = import_graph()
    assert "minidl.layers.base" in graph["minidl.layers.core"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_minidl_modules():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
