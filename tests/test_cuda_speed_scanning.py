"""The faster text scans of the C++ front end find what the plain scans they replace find: directives (the
`#` searched first), block comments (only the lines holding a `/*` scanned), and ROC208's split literals
(rocmlint/cuda/warp.py)."""

from __future__ import annotations

import bisect
import random
import re

import pytest

from rocmlint.cuda import preprocessor
from rocmlint.cuda.preprocessor import parse_int
from rocmlint.cuda.syntax import literal_pattern
from rocmlint.cuda.warp import LANE_SPLITS, SPLIT_TEXTS

# The plain scans, as the front end had them.
_PLAIN_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*([A-Za-z_]\w*)((?:[^\n\\]|\\\r?\n|\\.)*)", re.M)


def _plain_block_comments(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in preprocessor._COMMENT_OR_STRING.finditer(text) if m.group().startswith("/*")]


def _plain_directives(text: str) -> list[tuple[str, str, int, int, int]]:
    comments = _plain_block_comments(text)
    starts = [start for start, _ in comments]
    found = []
    for match in _PLAIN_DIRECTIVE.finditer(text):
        start = match.start()
        index = bisect.bisect_right(starts, start) - 1
        if index >= 0 and start < comments[index][1]:
            continue
        body = match.group(0).rstrip("\r\n")
        line = text.count("\n", 0, start) + 1
        byte = len(text[:start].encode("utf-8", "surrogatepass"))
        end = byte + len(body.encode("utf-8", "surrogatepass"))
        joined = preprocessor._COMMENT.sub(" ", preprocessor._CONTINUATION.sub("", match.group(2)))
        found.append((match.group(1), joined.split("/*")[0].rstrip("\r"), byte, end, line))
    return found


def _directives(text: str) -> list[tuple[str, str, int, int, int]]:
    return [(d.kind, d.text, d.start_byte, d.end_byte, d.line) for d in preprocessor._directives(text)]


TRICKY = [
    '#define A "/*"\n#if X\n*/\n#endif\n',
    'x = "a\\\n/* not a comment */ b";\n#if Y\n#endif\n',
    'x = "a\\\r\n/* comment */\n#if Z\n#endif\n',
    "//* a line comment\n#ifdef USE_ROCM\n#endif\n",
    "/* a /* b */ #if NOT\n#if YES /* c\n*/ #endif\n#endif\n",
    "int a; # if ALSO_NOT\n  #  ifdef INDENTED\n\t#endif\n",
    "#define STR(x) #x \\\n  # continued\n#endif\n",
    '"#if NOT" // "/*\n#if YES\n#endif /* unterminated',
    "é #if NOT\n#if ÉTÉ\n#endif\n",
    "\\\n#if AFTER_CONTINUATION\n#endif\n",
    "#",
    "",
]
ATOMS = [
    "#",
    "#if X\n",
    "#endif\n",
    "/*",
    "*/",
    "//",
    '"',
    "\\\n",
    "\\\r\n",
    "\n",
    "\r\n",
    " ",
    "\t",
    "a",
    "'",
    "é",
    "\r",
    "#define A 1\n",
    'x = "/*";\n',
    "  # ifdef USE_ROCM\n",
    "#else\n",
    "\\",
]


def _random_texts(count: int) -> list[str]:
    generator = random.Random(20261121)
    return ["".join(generator.choice(ATOMS) for _ in range(generator.randint(1, 60))) for _ in range(count)]


@pytest.mark.parametrize("text", TRICKY + _random_texts(3000))
def test_scans_find_what_the_plain_scans_find(text: str) -> None:
    assert preprocessor._block_comments(text) == _plain_block_comments(text)
    assert _directives(text) == _plain_directives(text)


def test_tricky_texts_hold_directives_and_comments() -> None:
    """The comparison above is about something: directives are found and some are skipped."""
    assert [kind for kind, *_ in _directives(TRICKY[0])] == ["define", "if", "endif"]
    assert [kind for kind, *_ in _directives(TRICKY[4])] == ["if", "endif"]
    assert [(kind, text) for kind, text, *_ in _directives(TRICKY[5])] == [("ifdef", " INDENTED"), ("endif", "")]


def test_a_long_line_of_hashes_is_scanned_in_linear_time() -> None:
    text = "x" + "#" * 200_000 + "\n#if A\n#endif\n"
    assert [kind for kind, *_ in _directives(text)] == ["if", "endif"]


@pytest.mark.parametrize("value", [32, 31, 5])
@pytest.mark.parametrize("spelling", ["{d}", "0x{x}", "0X{X}", "0x00{x}", "0{o}", "00{o}", "{d}u", "{d}UL", "0x{x}ull"])
def test_literal_text_matches_what_parse_int_reads(value: int, spelling: str) -> None:
    literal = spelling.format(d=value, x=f"{value:x}", X=f"{value:X}", o=f"{value:o}")
    assert parse_int(literal) == value
    assert re.fullmatch(literal_pattern(value), literal.encode())


@pytest.mark.parametrize("text", ["32.0", "320", "32f", "3'2", "-32", "0x200"])
def test_literal_text_rejects_other_tokens(text: str) -> None:
    assert not re.match(literal_pattern(32), text.encode())


@pytest.mark.parametrize(
    "code",
    [
        "lane = tid % 32;",
        "warp = tid/32;",
        "lane = tid & 0x1f;",
        "warp = tid >> 5;",
        "lane = tid % /* lanes */ 32;",
        "lane = tid %  // lanes\n 32;",
        "lane = tid % \\\n 32u;",
        "lane = tid %\u00a032;",
    ],
)
def test_split_texts_find_every_split(code: str) -> None:
    assert any(split.search(code.encode()) for split in SPLIT_TEXTS)


@pytest.mark.parametrize("code", ["x = y % 320;", "x = y / 32.0f;", "x = y & 31ull2;", "x = y >> 50;"])
def test_split_texts_skip_other_numbers(code: str) -> None:
    assert not any(split.search(code.encode()) for split in SPLIT_TEXTS)


def test_one_split_text_per_operator() -> None:
    assert len(SPLIT_TEXTS) == len(LANE_SPLITS)
