"""Regular expressions for Python's lexical layer: string literals and comments.

Both the region scan (rocmlint/python/regions.py) and noqa discovery (rocmlint/suppression.py) must
step over string literals to find what is code or comment; `tokenize` does it exactly but in pure
Python at about 1 MB/s, these run in the regex engine. Exact for code CPython 3.11 compiles.
"""

from __future__ import annotations

import re

# Any string literal: optional prefix, then triple- or single-quoted, escapes included.
STRING = r"""(?:[rRbBuUfF]{1,2})?(?:
        \"\"\"(?:[^\\]|\\(?:\r\n|.))*?\"\"\"
      | '''(?:[^\\]|\\(?:\r\n|.))*?'''
      | "(?:[^"\\\r\n]|\\(?:\r\n|.))*"
      | '(?:[^'\\\r\n]|\\(?:\r\n|.))*'
    )"""
COMMENT = r"\#[^\r\n]*"

# Plain code is skipped by a possessive character-class loop inside each match (fast in the regex
# engine); the token is optional so that a tail without one is consumed once, not rescanned per
# character. Read a token's position with match.start("string") / match.start("comment").
STRING_OR_COMMENT = re.compile(
    rf"""[^"'\#]*+(?:(?P<string>{STRING})|(?P<comment>{COMMENT}))?""", re.VERBOSE | re.DOTALL
)


def import_statement_pattern(top_level: str) -> str:
    """A regular expression (for `Rule.trigger_pattern`) matching, at its `from` or `import` keyword,
    every import statement whose imported module's top-level package matches `top_level` (a pattern
    ending at the name's end: `(?:pynvml|nvidia_smi)\\b`).

    A superset of those statements: an ImportFrom's module follows `from` after only whitespace
    (spaces, tabs, form feeds, backslash continuations; a relative import's dots do not match), and an
    Import's modules follow `import` after a run of what `import a.b as c, d` may hold (identifier
    characters, non-ASCII ones included, `.`, `,`, whitespace, continuations; never brackets or
    comments), the module itself after a separator, not after `.` or inside a longer name. The match
    lands in the import statement, so region parsing keeps the block holding it. `from pkg import
    <name>` and `import x as <name>` match too: harmless over-matches.
    """
    whitespace = r"(?:[ \t\f]|\\(?:\r\n|\r|\n))"
    import_list = r"(?:[\w \t\f.,]|[^\x00-\x7f]|\\(?:\r\n|\r|\n))"
    return rf"\bfrom{whitespace}+{top_level}|\bimport{whitespace}{import_list}*?(?<![\w.]){top_level}"
