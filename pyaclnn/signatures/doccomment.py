"""What a prototype's doc comment adds: the ``@domain`` tag and which parameters may be NULL.

Directions written in doc comments (``@param [in]``) are not used: the vendor headers often tag
outputs ``[in]`` (``@param [in] y1Out``), so the prototype itself is the better witness.
"""

from __future__ import annotations

import re

# "@param [in] name: text", "@param[out] name：text", "@param name [in] text", "@param [in] name(aclTensor*): text"
_PARAM = re.compile(r"@param\s*(?:\[[^\]]*\]\s*)?([A-Za-z_]\w*)")
# Generated headers: " * name : optional" lines under "parameters :".
_GENERATED_PARAM = re.compile(r"^[\s*]*([A-Za-z_]\w*)\s*:\s*(required|optional|dynamic)\b", re.M)
_DOMAIN = re.compile(r"@domain\s+([A-Za-z_]\w*)")
# The description says this parameter may be a null pointer. Kept narrow on purpose: descriptions also
# mention other parameters' null cases ("batchSizes为nullptr时"), negations ("不支持空指针") and empty
# (zero-element) tensors ("支持空Tensor"), none of which makes this parameter nullable.
_NULL_ALLOWED = re.compile(
    r"(?<!不)(?:支持|可以?)(?:传入?|输入)?为?空指针"  # 支持传空指针, 支持空指针, 可为空指针
    r"|可以?为空(?![A-Za-z])"                          # 可为空, 可以为空
    r"|(?:如果|若)传入?空指针|传入?空指针(?:时|表示)"  # 如果传入空指针，则 ..., 传入空指针表示 ...
    r"|\b(?:can|may) be (?:a )?null(?:ptr)?\b",
    re.I)
# The description calls it optional ("可选参数", generated "x : optional"). For an attribute such as a
# string this means "has a default", which does not make NULL acceptable; see classify.
_OPTIONAL_WORD = re.compile(r"可选参数|^[\s:：*]*可选(?:输入|输出)|^[\s:：*]*optional\b", re.I)


def domain(doc: str) -> str | None:
    m = _DOMAIN.search(doc)
    return m.group(1) if m else None


def is_generated(doc: str) -> bool:
    """Whether the doc comment is the op-build tool's ("parameters :" then "x1 : required" lines).

    Generated headers name every output ``...Out`` (or ``out``) and every in-place input ``...Ref``.
    """
    return "parameters :" in doc and bool(_GENERATED_PARAM.search(doc))


def param_descriptions(doc: str) -> dict[str, str]:
    """Description of each ``@param`` (the text up to the next ``@`` tag)."""
    out: dict[str, str] = {}
    matches = list(_PARAM.finditer(doc))
    for m, nxt in zip(matches, matches[1:] + [None]):
        end = nxt.start() if nxt else len(doc)
        stop = doc.find("@", m.end(), end)
        out.setdefault(m.group(1), doc[m.end():stop if stop >= 0 else end])
    for m in _GENERATED_PARAM.finditer(doc):
        out.setdefault(m.group(1), m.group(2))
    return out


def nullable_params(doc: str) -> tuple[frozenset[str], frozenset[str]]:
    """Parameters whose description says (explicitly may be NULL, is optional)."""
    descriptions = param_descriptions(doc)
    null = frozenset(n for n, text in descriptions.items() if _NULL_ALLOWED.search(text))
    optional = frozenset(n for n, text in descriptions.items() if _OPTIONAL_WORD.search(text))
    return null, optional
