"""What the report knows beyond the rules: the porting checklist's phases, which rules mean a rewrite,
and which ROCm targets each hazard bites on. Kept as data so the model code stays generic.

Sources: the porting checklist (decision tree and phases 0-8), RULES.md, and the hazard catalog
(wave64 rules matter on CDNA gfx9xx, not on RDNA gfx10/11/12; FP8 is FNUZ on gfx940-942; LDS is 64 KiB
on gfx90a/gfx942).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Phase:
    number: int
    title: str
    goal: str


PHASES: tuple[Phase, ...] = (
    Phase(0, "Environment setup", "Audit the ROCm PyTorch install; never let `pip install -e .` replace ROCm torch."),
    Phase(
        1,
        "ROCm detection and flags",
        "Detect ROCm with torch.version.hip, detect the gfx arch at run time, gate NVIDIA-only settings.",
    ),
    Phase(
        2,
        "Source translation (C/C++)",
        "hipify the CUDA sources; flag inline PTX and CUTLASS, which hipify cannot port.",
    ),
    Phase(
        3,
        "Architecture adaptation (C/C++, Triton)",
        "64-wide wavefronts on CDNA: 64-bit ballot masks, __popcll, lane math, block sizes.",
    ),
    Phase(4, "Build system", "hipcc flags, --offload-arch/PYTORCH_ROCM_ARCH targets, no unconditional nvcc/CUDA_HOME."),
    Phase(
        5,
        "Library replacement",
        "flash-attn -> aiter with a three-tier fallback, NVML -> amdsmi, RCCL, allocator settings.",
    ),
    Phase(
        6,
        "torch.compile adaptation",
        'mode="default" on ROCm; Inductor cudagraphs, memory_planning and max_autotune off.',
    ),
    Phase(
        7,
        "CUDA graph / HIP graph (optional)",
        "Manual graph capture only where launch overhead matters; validate replays.",
    ),
    Phase(8, "Verification", "Build, run forward/backward, compare against a reference with tolerances."),
)

# The checklist phase each rule's fix belongs to. Codes not listed fall back by range (see phase_of).
PHASE_OF_CODE: dict[str, int] = {
    "ROC101": 6,
    "ROC102": 1,
    "ROC103": 5,
    "ROC104": 5,
    "ROC105": 1,
    "ROC106": 6,
    "ROC107": 1,
    "ROC108": 7,
    "ROC109": 5,
    "ROC110": 1,
    "ROC111": 1,
    "ROC112": 1,
    "ROC113": 1,
    "ROC114": 1,
    "ROC115": 1,
    "ROC116": 5,
    "ROC117": 5,
    "ROC118": 5,
    "ROC119": 5,
    "ROC120": 5,
    "ROC124": 3,
    "ROC125": 2,
    "ROC133": 5,
    "ROC201": 3,
    "ROC202": 3,
    "ROC208": 3,
    "ROC209": 3,
    "ROC210": 3,
    "ROC211": 3,
    "ROC212": 3,
    "ROC221": 3,
}
TOOL_CODES = frozenset({"ROC001", "ROC002", "ROC900"})


def phase_of(code: str) -> int | None:
    """None for tool diagnostics (parse errors, unused noqa, crashes): they belong to no porting phase."""
    if code in TOOL_CODES:
        return None
    if code in PHASE_OF_CODE:
        return PHASE_OF_CODE[code]
    return {"ROC1": 1, "ROC2": 2, "ROC3": 4}.get(code[:4])


@dataclass(frozen=True)
class RewriteKind:
    """Work that no fix and no hipify pass does: a component has to be rewritten for ROCm."""

    key: str
    title: str
    codes: tuple[str, ...]
    fact: str  # the text-scan fact used as evidence when none of `codes` ran
    action: str


REWRITES: tuple[RewriteKind, ...] = (
    RewriteKind(
        "cutlass",
        "CUTLASS / CuTe kernels",
        ("ROC206",),
        "cutlass",
        "Rewrite on Composable Kernel (CK) or hipBLASLt; there is no CUTLASS for ROCm.",
    ),
    RewriteKind(
        "ptx",
        "Inline PTX",
        ("ROC203", "ROC125"),
        "inline_ptx",
        "Replace with HIP intrinsics, __builtin_amdgcn_* or AMDGCN asm under a ROCm gate.",
    ),
    RewriteKind(
        "wmma",
        "WMMA and other APIs with no HIP equivalent",
        ("ROC217",),
        "wmma",
        "Port to rocWMMA/MFMA intrinsics (different fragment shapes), LDS double-buffering for pipelines.",
    ),
    RewriteKind(
        "clusters",
        "Thread-block clusters, TMA, PDL",
        ("ROC219",),
        "clusters",
        "Restructure without clusters/distributed shared memory (no ROCm counterpart).",
    ),
)


def _is_cdna(arch: str) -> bool:
    # gfx8 (GCN) and gfx9 (Vega, CDNA: MI100 gfx908, MI200 gfx90a, MI300 gfx942, MI350 gfx950) run wave64.
    return arch.startswith(("gfx8", "gfx9"))


def _is_fnuz(arch: str) -> bool:
    return arch.startswith(("gfx940", "gfx941", "gfx942"))


def _has_64k_lds(arch: str) -> bool:
    return _is_cdna(arch) and not arch.startswith("gfx95")


@dataclass(frozen=True)
class TargetGroup:
    key: str
    title: str
    archs: str  # which GPUs, for people
    codes: tuple[str, ...]
    note: str
    matches: Callable[[str], bool]  # does a configured gfx target belong to this group


TARGET_GROUPS: tuple[TargetGroup, ...] = (
    TargetGroup(
        "wave64",
        "Wave64 (CDNA)",
        "gfx908 MI100, gfx90a MI200, gfx942 MI300, gfx950 MI350",
        ("ROC201", "ROC202", "ROC208", "ROC209", "ROC210", "ROC211", "ROC124"),
        "32-lane warp assumptions break on 64-wide wavefronts; on RDNA (wave32, gfx10/11/12) they do not, "
        "except that ROC210's 32-bit sync masks fail to compile on every ROCm target.",
        _is_cdna,
    ),
    TargetGroup(
        "fp8_fnuz",
        "FP8 FNUZ (gfx942)",
        "gfx940-gfx942 MI300/MI325",
        ("ROC107", "ROC218"),
        "gfx942 has only the FNUZ FP8 formats (float8_e4m3fnuz, max 240); gfx950 and gfx12 use OCP FP8 like NVIDIA.",
        _is_fnuz,
    ),
    TargetGroup(
        "lds64k",
        "64 KiB LDS",
        "gfx90a MI200, gfx942 MI300 (gfx950 has 160 KiB)",
        ("ROC221",),
        "Shared memory above 64 KiB per block does not fit.",
        _has_64k_lds,
    ),
)
