"""The C API a header tree declares: function prototypes, named integer constants, typedefs and enums.

The same reading as the operator registry (:mod:`.cheader`: comments, directives and attributes
blanked, a declaration found by the function it declares, parameters taken apart token by token),
extended to everything else a binding mirrors:

* named integer constants: enum members (implicit values counted), ``static const`` / ``constexpr``
  integers and object-like ``#define NAME <integer expression>``, all as ``NAME -> value``;
* typedefs (``aclrtStream=void*``, ``aclError=int``, ``aclrtCallback=void(*)(void*)``,
  ``aclrtUuid=struct{char[16] bytes}``, ``aclDataType=enum``) and each enum's members in order;
* attribute macros: a macro the headers define as empty or as an attribute (``ACL_FUNC_VISIBILITY``,
  ``ACL_DEPRECATED_MESSAGE(m)``) is dropped wherever it is used.

:func:`facts` prints them in the normalised one-line form of ``tests/data/real_headers.txt`` (the
measured list of the vendor's declarations), so that two header trees compare with ``diff``:
parameter names, default arguments, top-level ``const`` and ``struct``/``enum`` tags are dropped,
``*`` sticks to the type, an empty parameter list is ``(void)``. Type names are not resolved through
typedefs (``aclError`` and ``int`` stay different). Conditional compilation is not evaluated: every
branch of every ``#if`` is read. C++-only constructs (namespaces, templates, inline bodies) are skipped.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from . import cexpr
from .cheader import CleanHeader, clean, find_declarations, matching_paren, parse_param, split_params

# Macros that decorate declarations in CANN and compiler headers even when their #define is not in the tree.
ATTRIBUTE_MACROS = frozenset({
    "ACL_FUNC_VISIBILITY", "ACLNN_API", "ACL_DEPRECATED", "GE_FUNC_VISIBILITY", "GE_FUNC_HOST_VISIBILITY",
    "GE_FUNC_DEV_VISIBILITY", "TORCH_NPU_API", "MSVP_PROF_API", "ACL_EXPORT", "extern", "inline", "__inline",
    "__inline__", "__extension__"})
ATTRIBUTE_FUNCTION_MACROS = frozenset({
    "ACL_DEPRECATED_MESSAGE", "__attribute__", "__declspec", "_declspec", "__asm__", "asm", "alignas", "__nonnull"})
_ATTRIBUTE_BODY = re.compile(r"(?:__attribute__|__declspec|_declspec|\[\[)")
_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$")
_EXTERN_C_BLOCK = re.compile(r'\bextern\s*"C(?:\+\+)?"\s*\{')
_EXTERN_C = re.compile(r'\bextern\s*"C(?:\+\+)?"')
_CXX_BLOCK = re.compile(r"\bnamespace\b[^;{]*\{")
_TEMPLATE = re.compile(r"\btemplate\s*<")
_HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx")
_BRACE = re.compile(r"[{}]")
_WORD = re.compile(r"\b[A-Za-z_]\w*")
_BODY_FOLLOWS = re.compile(r"\s*\{")


@dataclass(frozen=True)
class Function:
    name: str
    declaration: str   # normalised: "aclError aclrtMemcpy(void*, size_t, const void*, size_t, aclrtMemcpyKind);"
    returns: str       # normalised return type
    params: tuple[str, ...]   # each parameter as the header spells it, whitespace collapsed
    params_text: str   # the whole list so spelt: "void" for (void), "" for ()
    header: str        # path relative to the tree's root


@dataclass
class Declarations:
    """Everything found in a header tree, in header order (files sorted by relative path)."""

    functions: dict[str, list[Function]] = field(default_factory=dict)
    constants: dict[str, dict[int, str]] = field(default_factory=dict)   # name -> {value: first header}
    typedefs: dict[str, dict[str, str]] = field(default_factory=dict)    # name -> {text: first header}
    enums: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # type -> (header, members)

    def function(self, name: str) -> Function:
        return self.functions[name][0]


def header_paths(root: Path) -> list[tuple[Path, str]]:
    root = Path(root)
    if root.is_file():
        return [(root, root.name)]
    found = [(p, p.relative_to(root).as_posix()) for p in root.rglob("*") if p.suffix in _HEADER_SUFFIXES]
    return sorted(found, key=lambda pr: pr[1])


def read_tree(*roots: str | Path) -> Declarations:
    """Every declaration of the headers under ``roots`` (directories searched recursively, or files)."""
    files = sorted((rel, p.read_text(encoding="utf-8", errors="replace"))
                   for root in roots for p, rel in header_paths(Path(root)))
    headers = [(rel, clean(text)) for rel, text in files]
    reader = _Reader()
    for rel, header in headers:
        reader.directives(header, rel)
    reader.resolve_defines()
    for rel, header in headers:
        reader.read(reader.strip(header.text), rel)
    reader.resolve_defines()   # a #define may name an enum member
    return reader.out


class _Reader:
    def __init__(self) -> None:
        self.out = Declarations()
        self.known: dict[str, int] = {}          # values so far, for the expressions that follow
        self.attribute_macros = set(ATTRIBUTE_MACROS)
        self.attribute_function_macros = set(ATTRIBUTE_FUNCTION_MACROS)
        self.pending: list[tuple[str, list[str], str]] = []   # defines not evaluated yet
        self._calls: re.Pattern[str] | None = None

    # -- preprocessor ------------------------------------------------------------------------------
    def directives(self, header: CleanHeader, rel: str) -> None:
        for d in header.directives:
            m = _DEFINE.match(d)
            if not m:
                continue
            name, args, body = m.group(1), m.group(2), m.group(3).strip()
            attribute = body == "" or bool(_ATTRIBUTE_BODY.match(body))
            if args is not None:
                if attribute:
                    self.attribute_function_macros.add(name)
            elif attribute:
                self.attribute_macros.add(name)
            else:
                self.pending.append((name, cexpr.tokens(body), rel))

    def resolve_defines(self) -> None:
        progress = True
        while progress and self.pending:
            progress, rest = False, []
            for name, toks, rel in self.pending:
                v = cexpr.evaluate(toks, self.known)
                if v is None:
                    rest.append((name, toks, rel))
                else:
                    self._constant(name, v, rel)
                    progress = True
            self.pending = rest

    def _constant(self, name: str, value: int, rel: str) -> None:
        self.known.setdefault(name, value)
        self.out.constants.setdefault(name, {}).setdefault(value, rel)

    # -- blanking what is not a C declaration --------------------------------------------------------
    def strip(self, text: str) -> str:
        """``text`` with attribute macros, ``extern "C"`` wrappers, namespaces and templates blanked."""
        spans: list[tuple[int, int]] = []
        for m in _EXTERN_C_BLOCK.finditer(text):
            close = _matching_brace(text, m.end() - 1)
            spans.append((m.start(), m.end()))
            if close is not None:
                spans.append((close, close + 1))
        spans += [m.span() for m in _EXTERN_C.finditer(text)]
        for m in _CXX_BLOCK.finditer(text):
            close = _matching_brace(text, m.end() - 1)
            spans.append((m.start(), (close + 1) if close is not None else len(text)))
        for m in _TEMPLATE.finditer(text):
            end = text.find(";", m.end())
            spans.append((m.start(), end + 1 if end >= 0 else len(text)))
        if self._calls is None:   # once, after every header's directives were read
            names = "|".join(map(re.escape, sorted(self.attribute_function_macros)))
            self._calls = re.compile(rf"\b(?:{names})\s*\(")
        attribute_macros = self.attribute_macros
        spans += [m.span() for m in _WORD.finditer(text) if m.group(0) in attribute_macros]
        for m in self._calls.finditer(text):
            close = matching_paren(text, m.end() - 1)
            if close is not None:
                spans.append((m.start(), close + 1))
        pieces, pos = [], 0
        for a, b in sorted(spans):
            if b <= pos:
                continue
            a = max(a, pos)
            pieces += [text[pos:a], re.sub(r"[^\n]", " ", text[a:b])]
            pos = b
        pieces.append(text[pos:])
        return "".join(pieces)

    # -- declarations --------------------------------------------------------------------------------
    def read(self, text: str, rel: str) -> None:
        for stmt, body in _statements(text):
            self._statement(stmt, body, rel)
        self._functions(text, rel)

    def _functions(self, text: str, rel: str) -> None:
        header = CleanHeader(text, (), ())
        for decl in find_declarations(header, r"[A-Za-z_]\w*"):
            close = matching_paren(text, text.index("(", decl.name_pos))
            prefix = text[decl.start:decl.name_pos].split()
            if (_BODY_FOLLOWS.match(text, close + 1) or not prefix
                    or prefix[0] in ("static", "typedef", "using", "return")):
                continue   # a definition, a static helper, a typedef or a statement: nothing a binding calls
            if any(w in ("=", "<", ">", "::", "~", "operator") or "::" in w for w in prefix):
                continue
            returns = parse_param(" ".join(prefix)).ctype
            raw = split_params(decl.params_text)
            types = [parse_param(p).ctype for p in raw]
            line = f"{returns} {decl.name}({', '.join(types) if types else 'void'});"
            fn = Function(decl.name, line, returns, tuple(raw), " ".join(decl.params_text.split()), rel)
            known = self.out.functions.setdefault(decl.name, [])
            if all(f.declaration != line for f in known):
                known.append(fn)

    def _statement(self, toks: list[str], body: list[str] | None, rel: str) -> None:
        if not toks:
            return
        if toks[0] == "typedef":
            self._typedef(toks[1:], body, rel)
        elif "enum" in toks[:3] and body is not None:
            head = toks[toks.index("enum") + 1:toks.index("{")]
            head = head[1:] if head[:1] in (["class"], ["struct"]) else head
            head = head[:head.index(":")] if ":" in head else head
            members = self._enum_body(body, rel)
            if head and _is_ident(head[0]):
                self._enum_members(head[0], members, rel)
        elif "=" in toks and "(" not in toks[:toks.index("=")] and body is None:
            k = toks.index("=")
            words = toks[:k]
            if any(w in ("const", "constexpr") for w in words) and _is_ident(words[-1]):
                v = cexpr.evaluate(toks[k + 1:], self.known)
                if v is not None:
                    self._constant(words[-1], v, rel)

    def _enum_body(self, body: list[str], rel: str) -> list[str]:
        members, following = [], 0
        for item in _split_top(body, ","):
            if not item:
                continue
            name = item[0]
            value = cexpr.evaluate(item[item.index("=") + 1:], self.known) if "=" in item else following
            if value is not None:
                self._constant(name, value, rel)
            following = 0 if value is None else value + 1
            members.append(name)
        return members

    def _enum_members(self, name: str, members: list[str], rel: str) -> None:
        _, known = self.out.enums.setdefault(name, (rel, []))
        known.extend(m for m in members if m not in known)

    def _typedef(self, rest: list[str], body: list[str] | None, rel: str) -> None:
        if not rest:
            return
        if body is not None and rest[0] in ("enum", "struct", "union"):
            k = rest.index("{")
            names = [t for t in rest[k + 1:] if _is_ident(t)]
            tag = rest[1] if k >= 2 and _is_ident(rest[1]) else None
            if rest[0] == "enum":
                members = self._enum_body(body, rel)
                for name in names + ([tag] if tag else []):
                    self._enum_members(name, members, rel)
                text = "enum"
            else:
                fields = [_field(f) for f in _split_top(body, ";") if f]
                text = f"{rest[0]}{{{'; '.join(fields)}}}"
            for name in names:
                self.out.typedefs.setdefault(name, {}).setdefault(text, rel)
            return
        if "(" in rest:     # R (*NAME)(params)
            k = rest.index("(")
            if rest[k + 1:k + 2] == ["*"] and len(rest) > k + 2 and _is_ident(rest[k + 2]):
                ret = parse_param(" ".join(rest[:k])).ctype
                args = " ".join(rest[k + 4:])   # after "(* NAME )"
                inner = args[args.index("(") + 1:args.rindex(")")] if "(" in args else ""
                types = [parse_param(p).ctype for p in split_params(inner)] or ["void"]
                self.out.typedefs.setdefault(rest[k + 2], {}).setdefault(f"{ret}(*)({', '.join(types)})", rel)
            return
        if _is_ident(rest[-1]):
            words = rest[:-1]
            tag = words[0] if words[0] in ("struct", "enum", "union") else None
            text = parse_param(" ".join(words)).ctype   # drops the tag; typedefs of a tag keep it
            if tag:
                text = f"{tag} {text}" if not text.startswith("const ") else f"const {tag} {text[6:]}"
            self.out.typedefs.setdefault(rest[-1], {}).setdefault(text, rel)


def _field(toks: list[str]) -> str:
    """A structure member, ``uint8_t[8] rsv`` / ``aclrtMallocAttribute* attrs``."""
    dims = ""
    if "[" in toks:
        k = toks.index("[")
        dims = "".join(toks[k:])
        toks = toks[:k]
    p = parse_param(" ".join(toks))
    return f"{p.ctype}{dims} {p.name}" if p.name else f"{p.ctype}{dims}"


def _is_ident(t: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*", t) is not None


def _matching_brace(text: str, open_pos: int) -> int | None:
    depth = 0
    for m in _BRACE.finditer(text, open_pos):
        depth += 1 if m.group(0) == "{" else -1
        if depth == 0:
            return m.start()
    return None


def _split_top(toks: list[str], sep: str) -> list[list[str]]:
    parts, cur, depth = [], [], 0
    for t in toks:
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
        if t == sep and depth == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    parts.append(cur)
    return parts


def _statements(text: str) -> Iterable[tuple[list[str], list[str] | None]]:
    """Top-level statements as tokens (a ``{...}`` body replaced by ``{ }``) with the body's tokens.
    A function definition (a body right after ``)``) ends its statement without a ``;``."""
    toks = cexpr.tokens(text)
    cur: list[str] = []
    body = None
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "{":
            depth, j = 0, i
            while j < len(toks):
                depth += toks[j] == "{"
                depth -= toks[j] == "}"
                if depth == 0:
                    break
                j += 1
            inner = toks[i + 1:j]
            if cur and cur[-1] in (")", "const", "noexcept", "override") and cur[0] not in ("typedef", "enum"):
                yield cur + ["{", "}"], inner   # a function definition: not a declaration
                cur, body = [], None
            else:
                cur += ["{", "}"]
                body = inner if body is None else body
            i = j + 1
            continue
        if t == ";":
            yield cur, body
            cur, body = [], None
        elif t == "}":
            cur, body = [], None    # the end of a block this reader does not enter
        else:
            cur.append(t)
        i += 1


# ---------------------------------------------------------------------------------------------------
# The normalised one-line form (tests/data/real_headers.txt)
# ---------------------------------------------------------------------------------------------------
def facts(decls: Declarations, selection: Iterable[str] | None = None) -> list[str]:
    """Sorted, de-duplicated lines: prototypes, ``ENUM NAME=value``, ``TYPEDEF name=text``.

    ``selection`` holds names and shell globs (``ACL_ERROR_*``); an enum type in it brings all its
    members. ``None`` selects everything.
    """
    if selection is None:
        def want(name: str) -> bool:
            return True
    else:
        exact = {s for s in selection if not any(c in s for c in "*?[")}
        globs = [s for s in selection if s not in exact]

        def want(name: str) -> bool:
            return name in exact or any(fnmatch.fnmatchcase(name, g) for g in globs)
    members = {m for name, (_, ms) in decls.enums.items() if want(name) for m in ms}
    lines = {f.declaration for name, fs in decls.functions.items() if want(name) for f in fs}
    lines |= {f"ENUM {name}={v}" for name, vs in decls.constants.items() if want(name) or name in members
              for v in vs}
    lines |= {f"TYPEDEF {name}={t}" for name, ts in decls.typedefs.items() if want(name) for t in ts}
    return sorted(lines)


def missing(decls: Declarations, selection: Iterable[str]) -> list[str]:
    """Names and globs of ``selection`` that the headers declare nowhere."""
    found = set(decls.functions) | set(decls.constants) | set(decls.typedefs) | set(decls.enums)
    return sorted(s for s in selection
                  if not any(fnmatch.fnmatchcase(n, s) for n in found) and s not in found)
