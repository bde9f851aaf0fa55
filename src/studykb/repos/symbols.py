"""The symbols a source file defines, found with tree-sitter: dotted name -> lines.

Python: classes, functions and methods (``LLM.generate``), and names assigned at the top
of a module. C, C++ and CUDA: functions (kernels too), classes, structs, unions, enums,
namespaces and macros, a method defined outside its class under its qualified name
(``void Gemm::run()`` is ``Gemm.run``, inside ``namespace ops`` ``ops.Gemm.run``), and
method declarations inside a class. Each grammar is its own wheel (tree-sitter-python,
-c, -cpp, -cuda) holding a compiled parser: nothing is downloaded or compiled at run time.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Any

from studykb.runtime import process

#: File extension -> grammar.
LANGUAGES: MappingProxyType[str, str] = MappingProxyType(
    {
        ".py": "python",
        ".pyi": "python",
        ".c": "c",
        ".h": "cpp",
        ".cc": "cpp",
        ".cpp": "cpp",
        ".cxx": "cpp",
        ".hpp": "cpp",
        ".hh": "cpp",
        ".hxx": "cpp",
        ".inl": "cpp",
        ".ipp": "cpp",
        ".cu": "cuda",
        ".cuh": "cuda",
    }
)

#: Symbol name -> (first line, last line), 1-based.
Symbols = dict[str, tuple[int, int]]

_SCOPES = ("class_specifier", "struct_specifier", "union_specifier", "enum_specifier")
_NAMES = ("identifier", "field_identifier", "type_identifier", "destructor_name",
          "operator_name", "namespace_identifier")  # fmt: skip


def language_of(path: str) -> str | None:
    return LANGUAGES.get(posixpath.splitext(path)[1].lower())


@process.memo(maxsize=None)
def _parser(language: str) -> Any:
    # deferred: tree-sitter and its grammars load only where code is parsed
    import tree_sitter

    grammar: Callable[[], object]
    if language == "python":
        import tree_sitter_python  # deferred: one grammar, loaded when needed

        grammar = tree_sitter_python.language
    elif language == "c":
        import tree_sitter_c  # deferred: one grammar, loaded when needed

        grammar = tree_sitter_c.language
    elif language == "cuda":
        import tree_sitter_cuda  # deferred: one grammar, loaded when needed

        grammar = tree_sitter_cuda.language
    else:
        import tree_sitter_cpp  # deferred: one grammar, loaded when needed

        grammar = tree_sitter_cpp.language
    return tree_sitter.Parser(tree_sitter.Language(grammar()))


def symbols(data: bytes, path: str) -> Symbols | None:
    """The symbols of the file at ``path`` holding ``data``; None for a language studykb
    does not parse."""
    language = language_of(path)
    if language is None:
        return None
    tree = _parser(language).parse(data)
    out: Symbols = {}
    walk = _python if language == "python" else _c_like
    for name, node, definition in walk(tree.root_node, ""):
        span = (node.start_point[0] + 1, node.end_point[0] + 1)
        if definition or name not in out:
            out[name] = span
    return out


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def _python(node: Any, scope: str) -> Iterator[tuple[str, Any, bool]]:
    for child in node.named_children:
        target = child
        if child.type == "decorated_definition":
            target = child.child_by_field_name("definition") or child
        if target.type in ("class_definition", "function_definition"):
            name = target.child_by_field_name("name")
            if name is None:
                continue
            full = scope + _text(name)
            yield full, child, True
            body = target.child_by_field_name("body")
            if body is not None and target.type == "class_definition":
                yield from _python(body, full + ".")
        elif child.type == "expression_statement" and not scope:
            for part in child.named_children:
                left = part.child_by_field_name("left") if part.type == "assignment" else None
                if left is not None and left.type == "identifier":
                    yield _text(left), child, True
        elif child.type in ("if_statement", "try_statement", "block", "else_clause"):
            yield from _python(child, scope)  # definitions under `if TYPE_CHECKING:` etc.


def _c_like(node: Any, scope: str) -> Iterator[tuple[str, Any, bool]]:
    for child in node.named_children:
        kind = child.type
        if kind == "function_definition":
            name = _declared_name(child.child_by_field_name("declarator"))
            if name:
                yield scope + name, child, True
        elif kind in ("field_declaration", "declaration"):
            declarator = child.child_by_field_name("declarator")
            if declarator is not None and _has_function(declarator):
                name = _declared_name(declarator)
                if name:
                    yield scope + name, child, False
        elif kind in _SCOPES:
            name = child.child_by_field_name("name")
            body = child.child_by_field_name("body")
            if name is None:
                continue
            full = scope + _text(name).replace("::", ".")
            if body is not None:
                yield full, child, True
                yield from _c_like(body, full + ".")
        elif kind == "namespace_definition":
            name = child.child_by_field_name("name")
            body = child.child_by_field_name("body")
            inner = scope + (_text(name).replace("::", ".") + "." if name is not None else "")
            if name is not None:
                yield inner[:-1], child, True
            if body is not None:
                yield from _c_like(body, inner)
        elif kind in ("preproc_def", "preproc_function_def"):
            name = child.child_by_field_name("name")
            if name is not None:
                yield _text(name), child, True
        elif (
            kind
            in (
                "template_declaration",
                "linkage_specification",
                "declaration_list",
                "preproc_if",
                "preproc_ifdef",
                "preproc_else",
                "preproc_elif",
                "access_specifier",
            )
            or kind == "field_declaration_list"
        ):
            yield from _c_like(child, scope)


def _has_function(node: Any) -> bool:
    while node is not None:
        if node.type == "function_declarator":
            return True
        node = node.child_by_field_name("declarator")
    return False


def _declared_name(node: Any) -> str:
    """The name a declarator declares (through pointers, references and the function
    declarator), ``A::f`` as ``A.f``; empty when it has none."""
    while node is not None:
        if node.type in _NAMES or node.type in ("qualified_identifier", "template_function"):
            text = _text(node)
            return text.split("<", 1)[0].replace("::", ".").replace(" ", "")
        node = node.child_by_field_name("declarator")
    return ""


def lines_of(data: bytes) -> int:
    """How many lines the file has (a last line without a line end counts)."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
