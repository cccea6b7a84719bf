"""Cheap facts about a file, from its raw bytes: does it use CUTLASS, flash-attn, torch.compile, Triton...

The rules say what is *wrong*; these facts say what the project *is*, which is what the checklist's decision
tree asks about (a repository with .cu kernels runs all eight phases, one with flash-attn needs Phase 5...).
They are regex scans over bytes, deliberately gate-blind: a CUTLASS include under `#ifndef USE_ROCM` still
means the project uses CUTLASS. The report labels them as text-scan evidence, never as diagnostics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rocmlint.engine import MAX_FILE_BYTES
from rocmlint.source import language_of


@dataclass(frozen=True)
class FactKind:
    key: str
    label: str
    languages: frozenset[str]  # which front-end languages the pattern is looked for in
    pattern: re.Pattern[bytes] | None  # None: decided by the file name alone


PY, CU = frozenset({"python"}), frozenset({"cuda"})
BOTH = PY | CU

FACT_KINDS: tuple[FactKind, ...] = (
    FactKind("cuda_kernels", "CUDA kernel sources (.cu/.cuh)", CU, None),
    FactKind("hip_sources", "HIP sources (.hip)", CU, None),
    FactKind(
        "custom_extension",
        "custom CUDA extensions",
        PY,
        re.compile(rb"\bCUDAExtension\s*\(|\bload_inline\s*\(|\bcpp_extension\.load\s*\(|\bRaw(?:Kernel|Module)\s*\("),
    ),
    FactKind(
        "flash_attn",
        "flash-attn",
        BOTH,
        re.compile(rb"^\s*(?:import|from)\s+(?:flash_attn|flash_attn_interface)\b|#\s*include\s*[<\"]flash_attn", re.M),
    ),
    FactKind(
        "cutlass",
        "CUTLASS / CuTe",
        BOTH,
        re.compile(rb"#\s*include\s*[<\"](?:cutlass|cute)/|\bcutlass::|\bcute::|^\s*(?:import|from)\s+cutlass\b", re.M),
    ),
    FactKind(
        "torch_compile",
        "torch.compile / Inductor",
        PY,
        re.compile(rb"\btorch\.compile\b|\btorch\._dynamo\b|\btorch\._inductor\b|\bfrom\s+torch\s+import\s+compile\b"),
    ),
    FactKind(
        "triton",
        "Triton kernels",
        PY,
        re.compile(rb"^\s*(?:import\s+triton\b|from\s+triton\b)|@triton\.(?:jit|autotune)\b", re.M),
    ),
    FactKind("inline_ptx", "inline PTX (asm)", CU, re.compile(rb"\basm\s*(?:volatile\s*)?\(\s*\"")),
    FactKind("wmma", "WMMA / mma.h", CU, re.compile(rb"\bnvcuda::wmma\b|\bwmma::|#\s*include\s*[<\"]mma\.h[>\"]")),
    FactKind(
        "clusters",
        "thread-block clusters / TMA",
        CU,
        re.compile(rb"\bthis_cluster\s*\(|__cluster_dims__|cudaLaunchAttributeClusterDimension|\bCUtensorMap\b"),
    ),
    FactKind(
        "cuda_graphs",
        "CUDA graphs",
        PY,
        re.compile(rb"\btorch\.cuda\.graph\s*\(|\bCUDAGraph\s*\(|\bmake_graphed_callables\b"),
    ),
    FactKind(
        "rocm_aware",
        "existing ROCm gates",
        BOTH,
        re.compile(rb"\btorch\.version\.hip\b|\bUSE_ROCM\b|__HIP_PLATFORM_AMD__|\bIS_HIP_EXTENSION\b|\bis_rocm\s*\("),
    ),
)
FACT_BY_KEY = {kind.key: kind for kind in FACT_KINDS}


@dataclass(frozen=True)
class FileFacts:
    """Which facts hold for one file, each with the line of its first occurrence (1 for name-based facts)."""

    path: str
    language: str
    lines: tuple[tuple[str, int], ...] = ()  # (fact key, first line), in FACT_KINDS order


def scan_file(path: Path) -> FileFacts:
    """Read `path` (bounded, errors ignored: the engine reports unreadable files) and scan it."""
    data = b""
    try:
        if path.stat().st_size <= MAX_FILE_BYTES:
            data = path.read_bytes()
    except OSError:
        pass
    return scan_bytes(str(path), data)


def scan_bytes(path: str, data: bytes) -> FileFacts:
    language = language_of(path) or ""
    found: list[tuple[str, int]] = []
    for kind in FACT_KINDS:
        if language not in kind.languages:
            continue
        line = _first_line(kind, path, data)
        if line is not None:
            found.append((kind.key, line))
    return FileFacts(path, language, tuple(found))


def _first_line(kind: FactKind, path: str, data: bytes) -> int | None:
    if kind.pattern is None:
        return 1 if _name_fact(kind.key, path) else None
    match = kind.pattern.search(data)
    return None if match is None else data.count(b"\n", 0, match.start()) + 1


def _name_fact(key: str, path: str) -> bool:
    suffix = path[path.rfind(".") :].lower() if "." in path else ""
    return (key == "cuda_kernels" and suffix in (".cu", ".cuh", ".hu")) or (key == "hip_sources" and suffix == ".hip")
