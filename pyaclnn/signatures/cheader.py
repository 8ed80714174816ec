"""Just enough C to read function prototypes out of a header.

Not a C parser: comments and preprocessor lines are blanked (offsets are kept, so positions in the
cleaned text are positions in the original), attributes are removed, and a declaration is found by
the name of the function it declares. Parameter declarations are then taken apart token by token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A comment, or a string/char literal that must be skipped so that "//" inside it is not a comment.
_COMMENT_OR_LITERAL = re.compile(
    r'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
# A preprocessor directive with its backslash continuations.
_DIRECTIVE = re.compile(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', re.M)
# GCC/Clang attributes, MSVC declspec, C++11/C23 attributes: removed before anything else is read.
_ATTRIBUTE_START = re.compile(r'\b(?:__attribute__|__declspec)\s*\(|\[\[')

_IDENT = re.compile(r'[A-Za-z_]\w*')
# What may follow a prototype's parameter list: trailing macros / noexcept, then ';' or a body.
_DECLARATION_END = re.compile(r'\s*(?:[A-Za-z_]\w*\b\s*(?:\([^()]*\)\s*)?)*[;{]')
_FUNCTION_POINTER = re.compile(r'\(\s*\*\s*([A-Za-z_]\w*)?\s*\)\s*\(')
_TOKEN = re.compile(r'[A-Za-z_]\w*|\*|&|\[[^\]]*\]|\S')

QUALIFIERS = frozenset({"const", "volatile", "restrict", "__restrict", "__restrict__", "struct",
                        "enum", "union", "class", "register"})
BUILTIN_TYPE_WORDS = frozenset({"void", "bool", "_Bool", "char", "short", "int", "long", "signed",
                                "unsigned", "float", "double"})


@dataclass(frozen=True)
class Comment:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class CleanHeader:
    """Header text with comments, directives and attributes blanked out (same length as the original)."""

    text: str
    comments: tuple[Comment, ...]
    directive_ends: tuple[int, ...]  # offsets just after each preprocessor directive
    directives: tuple[str, ...] = ()  # their text, comments removed, continuation lines joined


def clean(text: str) -> CleanHeader:
    comments: list[Comment] = []

    def blank_comment(m: re.Match[str]) -> str:
        s = m.group(0)
        if s[0] in "\"'":
            return s
        comments.append(Comment(m.start(), m.end(), s))
        return _blank(s)

    out = _COMMENT_OR_LITERAL.sub(blank_comment, text)
    found = list(_DIRECTIVE.finditer(out))
    directives = tuple(" ".join(re.sub(r"\\\n", " ", m.group(0)).split()) for m in found)
    out = _DIRECTIVE.sub(lambda m: _blank(m.group(0)), out)
    out = _blank_attributes(out)
    return CleanHeader(out, tuple(comments), tuple(m.end() for m in found), directives)


def _blank(s: str) -> str:
    """Spaces in place of every character but newlines, so offsets and line numbers survive."""
    return re.sub(r'[^\n]', ' ', s)


def _blank_attributes(text: str) -> str:
    pieces = []
    pos = 0
    for m in _ATTRIBUTE_START.finditer(text):
        if m.start() < pos:
            continue  # nested inside an attribute already blanked
        if m.group(0) == "[[":
            end = text.find("]]", m.end())
            end = len(text) if end < 0 else end + 2
        else:
            end = matching_paren(text, m.end() - 1)
            if end is None:
                continue
            end += 1
        pieces.append(text[pos:m.start()])
        pieces.append(_blank(text[m.start():end]))
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def matching_paren(text: str, open_pos: int) -> int | None:
    """Offset of the parenthesis closing the one at ``open_pos`` (None when unbalanced)."""
    depth = 0
    for i in range(open_pos, len(text)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


@dataclass(frozen=True)
class FunctionDecl:
    name: str
    params_text: str  # between the parentheses
    start: int        # start of the declaration (after the previous ';', '{', '}' or directive)
    name_pos: int


def find_declarations(header: CleanHeader, name_pattern: str) -> list[FunctionDecl]:
    """Declarations (or definitions) of functions whose whole name matches ``name_pattern``.

    A match counts only when it is followed by a balanced parameter list and then ``;`` or ``{``,
    and preceded by a return type: this skips calls, function-pointer typedefs and mentions.
    """
    text = header.text
    found = []
    for m in re.finditer(rf'\b(?:{name_pattern})(?=\s*\()', text):
        open_pos = text.index("(", m.end())
        close = matching_paren(text, open_pos)
        if close is None:
            continue
        if not _DECLARATION_END.match(text, close + 1):
            continue
        start = _declaration_start(header, m.start())
        prefix = text[start:m.start()].rstrip()
        words = _IDENT.findall(prefix)
        if not words or words[-1] in {"return", "typedef"} or prefix[-1] in "(=,":
            continue
        found.append(FunctionDecl(m.group(0), text[open_pos + 1:close], start, m.start()))
    return found


def _declaration_start(header: CleanHeader, pos: int) -> int:
    text = header.text
    start = max(text.rfind(";", 0, pos), text.rfind("{", 0, pos), text.rfind("}", 0, pos)) + 1
    for end in header.directive_ends:
        if start < end <= pos:
            start = end
    return start


def comments_between(header: CleanHeader, start: int, end: int) -> str:
    """The text of every comment lying in ``[start, end)`` (a declaration's doc comment)."""
    return "\n".join(c.text for c in header.comments if start <= c.start and c.end <= end)


# ---------------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CParam:
    """A parameter declaration taken apart. ``name`` is None for an unnamed parameter."""

    name: str | None
    base: str            # the type words without qualifiers, e.g. "aclTensor", "unsigned int"
    pointers: int        # levels of indirection ('*' and '[]')
    pointee_const: bool  # const qualifies the base type (const aclTensor*); top-level const is dropped
    # Pointer levels that are themselves const, counted from the base: 1 in ``const aclTensor* const*``.
    # The outermost level (``T* const p``) is top-level, hence not ABI, and never listed.
    const_levels: tuple[int, ...] = ()

    @property
    def ctype(self) -> str:
        """Normalised spelling: ``const aclTensor*``, ``aclOpExecutor**``, ``int64_t``, ``const aclTensor* const*``."""
        const = "const " if self.pointee_const and self.pointers else ""
        stars = "".join("* const" if k in self.const_levels else "*" for k in range(1, self.pointers + 1))
        return f"{const}{self.base}{stars}"


def split_params(params_text: str) -> list[str]:
    """Split a parameter list at top-level commas; ``()`` and ``(void)`` give no parameters."""
    parts, depth, cur = [], 0, []
    for c in params_text:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    parts = [" ".join(p.split()) for p in parts]
    if parts == [""] or parts == ["void"]:
        return []
    return parts


def parse_param(decl: str) -> CParam:
    """Take one parameter declaration apart (``aclTensor const * const self = nullptr``)."""
    decl = decl.split("=", 1)[0]  # C++ default argument
    fn_ptr = _FUNCTION_POINTER.search(decl)
    if fn_ptr:  # void (*callback)(int): passed as a plain pointer
        return CParam(name=fn_ptr.group(1), base="void", pointers=1, pointee_const=False)
    tokens = _TOKEN.findall(decl)
    pointers = 0
    const_before_star = False
    words: list[str] = []
    const_levels: list[int] = []
    for tok in tokens:
        if tok == "*" or tok.startswith("["):
            pointers += 1
        elif tok == "&":
            pointers += 1  # a C++ reference is a pointer at the ABI level
        elif tok == "const" and pointers == 0:
            const_before_star = True
        elif tok == "const":
            const_levels.append(pointers)
        elif tok in QUALIFIERS or not _IDENT.fullmatch(tok):
            continue
        else:
            words.append(tok)
    name = None
    # The last word is the name when something else names the type; "unsigned int" has no name.
    if len(words) >= 2 and words[-1] not in BUILTIN_TYPE_WORDS and _name_position_ok(tokens, words[-1]):
        name = words.pop()
    inner = tuple(k for k in dict.fromkeys(const_levels) if k < pointers)
    return CParam(name=name, base=" ".join(words), pointers=pointers, pointee_const=const_before_star,
                  const_levels=inner)


def _name_position_ok(tokens: list[str], word: str) -> bool:
    """The name comes after every '*' (``aclTensor* x``), never before one (``x*`` is a type)."""
    last_word = max(i for i, t in enumerate(tokens) if t == word)
    return all(not (t == "*" or t == "&") for t in tokens[last_word + 1:])
