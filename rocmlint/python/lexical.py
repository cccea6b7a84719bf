"""Regular expressions for Python's lexical layer: string literals and comments.

Noqa discovery (rocmlint/suppression.py) must step over string literals to find what is code or
comment, and rules' trigger patterns must find code in raw bytes; `tokenize` does it exactly but in pure
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
    comments), the module itself after a separator, not after `.` or inside a longer name. `from pkg
    import <name>` and `import x as <name>` match too: harmless over-matches.
    """
    whitespace = r"(?:[ \t\f]|\\(?:\r\n|\r|\n))"
    import_list = r"(?:[\w \t\f.,]|[^\x00-\x7f]|\\(?:\r\n|\r|\n))"
    return rf"\bfrom{whitespace}+{top_level}|\bimport{whitespace}{import_list}*?(?<![\w.]){top_level}"


def setting_key_pattern(whole_keys: tuple[str, ...], dotted_tails: tuple[str, ...]) -> str:
    """A regular expression (for `Rule.trigger_pattern`) matching where code may set a configuration key:
    each of `whole_keys` (`max_autotune`) and each last segment of a dotted key (`cudagraphs` of
    `triton.cudagraphs`) written as

    (1) an identifier set with `=` (not `==`): an assignment target `cfg.max_autotune = ...` (also
        `(cfg.triton.cudagraphs) = ...`, `a = b = ...`) or a keyword argument `patch(max_autotune=...)`,
        with blanks, `\\` continuations, `)` or comments before the `=`;
    (2) a string literal whose value ends with the key (`"max_autotune"`, `"triton.cudagraphs"`): the
        word is followed by its closing quote after nothing but `\\`-newline continuations (which add no
        character). Before a whole key there is its opening quote or such a continuation's newline; before
        a dotted tail there is `.`, the last character of an escape spelling `.` (`\\x2e`, `\\u002E`,
        `\\056`, `\\N{FULL STOP}`), a continuation's newline, or the opening quote of a piece that follows
        another string (`"triton." "cudagraphs"`, possibly on the next line, after a comment, or with a
        prefix: `r"cudagraphs"`).

    Left out: reads (`if cfg.max_autotune:`), prose in comments and strings (`"max-autotune-no-cudagraphs"`)
    and longer names (`max_autotune_gemm_backends`, `use_cudagraphs`). A key whose word is itself split by an escape
    or a concatenation (`"max_" "autotune"`) is not matched. Each alternative starts with its word (or, for
    a concatenation, a quote) and looks behind from there: the regex engine skips to those first
    characters, and a comment in a gap must end its line, so no run of `#` can be split in many ways.
    """
    set_with_equals = r"(?:[\s\\)]|#[^\r\n]*[\r\n])*=(?!=)"
    key_end = r"(?:\\(?:\r\n|\r|\n))*[\"']"

    def key_word(word: str, before: str) -> str:
        return rf"{word}(?:(?<={before}{word}){key_end}|(?<!\w{word}){set_with_equals})"

    concatenated_tail = r"[\"'](?:[\s\\]|#[^\r\n]*[\r\n])*[A-Za-z]{0,2}[\"'](?:" + "|".join(dotted_tails) + ")"
    return "|".join(
        [key_word(word, r"[\"'\r\n]") for word in whole_keys]
        + [key_word(word, r"[.\r\n}eE6]") for word in dotted_tails]
        + [concatenated_tail + key_end]
    )


def assigned_attribute_pattern(*names: str) -> str:
    """A regular expression (for `Rule.trigger_pattern`) matching, from its dot, every attribute named one
    of `names` that an `=` assigns (`torch.backends.cudnn.allow_tf32 = True`).

    After the dot any whitespace, line continuation or comment may come before the name (the match starts
    at the dot, in the same statement; a comment is taken to its line end in one piece, or a run of `#`
    would backtrack exponentially); after it `=` (not `==`), `)` (a parenthesised target), a line
    continuation, a comment or the end of the line. Left out: reads (`if x.allow_tf32:`, `y = x.allow_tf32,`),
    keyword arguments (`flags(allow_tf32=True)`), dictionary keys and longer names (`_get_allow_tf32`).
    """
    alternatives = "|".join(names)
    return rf"\.(?:\s|\\|#[^\r\n]*[\r\n])*\b(?:{alternatives})(?=[ \t\f]*(?:=(?!=)|[)\\#\r\n]|$))"


def called_name_pattern(*names: str) -> str:
    """A regular expression (for `Rule.trigger_pattern`) matching every whole word of `names` that may be the
    last name of a called function: left out when `,`, `]`, `}`, `:`, `=` or `.` follows it (an element,
    key, argument or attribute of it, never the function called) or a quote or backtick does (no code: in
    valid Python a name never precedes a string, and a backtick is not a token)."""
    alternatives = "|".join(names)
    return rf"""\b(?:{alternatives})(?![ \t]*[,\]}}:=.]|['"`])"""


# A call's parentheses, balanced three deep, with no string or comment inside (so the scan reads code exactly).
_BALANCED_CALL = r"""\((?:[^()'"#]|\((?:[^()'"#]|\([^()'"#]*\))*\))*\)"""


def value_word_pattern(words: str, *, after_call: bool = False, attributes: tuple[str, ...] = ()) -> str:
    """A regular expression (for `Rule.trigger_pattern`) matching each whole word of the alternation `words`
    where it may stand for its value: not directly followed by an attribute (`helper.return_value`) unless
    the attribute is one of `attributes`; with `after_call`, not when its call is (`f(x).total_memory`,
    parentheses balanced three deep with no string or comment inside, blanks around). Left out too: a word
    followed by a quote or backtick, which is no code in a file that parses (`mock.patch("torch.cuda.f")`,
    a docstring ending in the word). An import or assignment aliasing the word matches."""
    call = rf"(?:{_BALANCED_CALL}[ \t]*)?" if after_call else ""
    allowed = rf"(?!(?:{'|'.join(attributes)})\b)" if attributes else ""
    return rf"""\b(?:{words})(?![ \t]*{call}\.[ \t]*{allowed}[A-Za-z_])(?![\w'"`])"""
