"""The names a hand-written ROCm twin of a file or folder would have: its own name with an NVIDIA word said the ROCm
way (rocmlint/data/vendor_twin_words.toml: `cuda` as `hip` or `rocm`, `nvgpu` as `amdgpu`, `cublas` as `rocblas`,
`nvmon` as `rocmon`). A project that keeps one copy of a component per vendor side by side (`backends/cuda/` and
`backends/hip/`, `statevec_nvgpu_kernels.cuh` and `statevec_amdgpu_kernels.hpp`, `config/cublas.cc` and `config/rocblas.cc`)
compiles the ROCm copy on ROCm; `CudaProject` decides when the NVIDIA copy is left to NVIDIA (no ROCm-compiled file
includes it, nothing in it is written for ROCm)."""

from __future__ import annotations

import re
from functools import cache

from rocmlint.data import load

# One word of a file or folder name: `CUDACore` -> `CUDA`, `Core`; `cudaBackend` -> `cuda`, `Backend`.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


@cache
def _table() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    data = load("vendor_twin_words")
    words = {word: tuple(rocm) for word, rocm in data["words"].items()}
    prefixes = {prefix: tuple(rocm) for prefix, rocm in data["prefixes"].items()}
    return words, prefixes


def rocm_names(name: str) -> list[str]:
    """`name` with one of its NVIDIA words, or every occurrence of it, said each ROCm way (`cuda_fft` -> `hip_fft`,
    `rocm_fft`; `cuda/cuda_fft` keeps to one name: folders are swapped one at a time by the caller); [] when it says
    no NVIDIA word."""
    found: list[str] = []
    matches = list(_WORD.finditer(name))
    for match in matches:
        word = match.group()
        for rocm in _rocm_words(word.lower()):
            spelled = _same_case(rocm, word)
            found.append(name[: match.start()] + spelled + name[match.end() :])
            same = [m for m in matches if m.group().lower() == word.lower()]
            if len(same) > 1:
                found.append(_replaced(name, same, rocm))
    return list(dict.fromkeys(found))


def says_rocm(name: str) -> bool:
    """Whether a file or folder name says a ROCm word of the table (`hip_kernels`, `rocblas`): the ROCm side."""
    words, _ = _table()
    rocm = {spelled for spellings in words.values() for spelled in spellings}
    return any(match.group().lower() in rocm for match in _WORD.finditer(name))


def _rocm_words(word: str) -> tuple[str, ...]:
    words, prefixes = _table()
    if word in words:
        return words[word]
    return tuple(
        rocm + word[len(prefix) :]
        for prefix, spellings in prefixes.items()
        if word.startswith(prefix) and len(word) > len(prefix) + 1
        for rocm in spellings
    )


def _replaced(name: str, matches: list[re.Match[str]], rocm: str) -> str:
    parts: list[str] = []
    at = 0
    for match in matches:
        parts += [name[at : match.start()], _same_case(rocm, match.group())]
        at = match.end()
    return "".join([*parts, name[at:]])


def _same_case(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word.capitalize() if like[0].isupper() else word
