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
