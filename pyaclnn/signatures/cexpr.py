"""Integer constant expressions of C headers (enum values, ``#define`` bodies, ``static const`` initialisers).

Only what headers use: integer literals with suffixes, names already known, unary and binary
arithmetic and bit operators, parentheses and casts to integer types. Anything else is "not an
integer constant" (None), never an error: a header may define strings, floats or macros with arguments.
"""

from __future__ import annotations

import ast
import operator
import re

from .._exceptions import InvalidArgumentError

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.BitXor: operator.xor,
}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_CAST_WORDS = frozenset({"int", "unsigned", "signed", "long", "short", "char", "int8_t", "int16_t", "int32_t",
                         "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t"})
_OPERATORS = frozenset({"+", "-", "*", "%", "<<", ">>", "|", "&", "^", "~", "(", ")"})
TOKEN = re.compile(r'\.?\d(?:[\w.]|[eEpP][+-])*|[A-Za-z_]\w*|<<|>>|::|"(?:\\.|[^"\\])*"|\S')


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def int_literal(tok: str) -> int | None:
    t = tok.rstrip("uUlL")
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", t):
        return int(t, 16)
    if re.fullmatch(r"0[bB][01]+", t):
        return int(t[2:], 2)
    if re.fullmatch(r"0[0-7]*", t):
        return int(t, 8) if len(t) > 1 else 0
    if re.fullmatch(r"[1-9]\d*", t):
        return int(t)
    return None


def evaluate(toks: list[str], known: dict[str, int]) -> int | None:
    """The value of the expression ``toks``, names looked up in ``known``; None when it is not one."""
    expr: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "(" and i + 2 < len(toks) and toks[i + 2] == ")" and toks[i + 1] in _CAST_WORDS:
            i += 3      # (uint32_t) 5: the value is what matters, not its C type
            continue
        if t == "static_cast" and "<" in toks[i:] and ">" in toks[i:]:
            i = toks.index(">", i) + 1
            continue
        if t[0].isdigit():
            v = int_literal(t)
            if v is None:
                return None
            expr.append(str(v))
        elif re.fullmatch(r"[A-Za-z_]\w*", t):
            if t not in known:
                return None
            expr.append(str(known[t]))
        elif t == "/":
            expr.append("//")
        elif t in _OPERATORS:
            expr.append(t)
        else:
            return None
        i += 1
    if not expr:
        return None
    try:
        return _eval(ast.parse(" ".join(expr), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError):
        return None


def _eval(n: ast.AST) -> int:
    if isinstance(n, ast.Constant) and isinstance(n.value, int):
        return n.value
    if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
        return _BINOPS[type(n.op)](_eval(n.left), _eval(n.right))
    if isinstance(n, ast.UnaryOp) and type(n.op) in _UNOPS:
        return _UNOPS[type(n.op)](_eval(n.operand))
    raise InvalidArgumentError(ast.dump(n))   # caught by evaluate: not an integer constant
