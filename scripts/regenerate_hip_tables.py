"""Regenerate rocmlint's CUDA->HIP data tables from the HIPIFY project's published mapping tables.

    python scripts/regenerate_hip_tables.py SOURCE [--out rocmlint/data] [--commit SHA] [--check]

SOURCE is a HIPIFY checkout, a bare HIPIFY git directory (read at HEAD with `git show`), or a folder
holding the `*_supported_by_HIP.md` tables (and optionally `CUDA2HIP.cpp`, the source of HIPIFY's
header map). The script reads:

- `docs/tables/<library>_supported_by_HIP.md`: one Markdown row per CUDA name, with the HIP name and
  the ROCm version that added it (empty HIP column = HIPIFY knows no HIP equivalent);
- `src/CUDA2HIP.cpp`: `CUDA_INCLUDE_MAP`, HIPIFY's CUDA header -> HIP header map;

and writes three TOML files loaded with `rocmlint.data.load(name)`:

- `cuda_api.toml`: CUDA API functions with a HIP mapping (ROC216), per library;
- `cuda_headers.toml`: CUDA headers -> HIP headers, split into runtime (ROC204) and library (ROC205)
  headers, HIPIFY's map plus the hand-curated entries below, each marked with its source;
- `no_hip_equivalent.toml`: names HIPIFY lists without a HIP equivalent, plus the hazard catalog's
  ROC217 list (WMMA, async-copy pipelines, libcu++ barriers, clusters, TMA ...), curated below.

Only the mapping facts are written, never HIPIFY's own text. The output depends on nothing but the
input tables and this script (sorted, no dates), so regenerating from the same commit gives the same
bytes; every file names its source (repository, commit, files) in its header comment. No network.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = "https://github.com/ROCm/HIPIFY"
TABLES_DIR = "docs/tables"
HEADER_MAP_PATH = "src/CUDA2HIP.cpp"
SCRIPT = "scripts/regenerate_hip_tables.py"

# (section in the output, HIPIFY table). cuDNN is left out: its HIP column names hipDNN, which no ROCm
# release ships (HIPIFY gives those rows no HIP version; cuDNN -> MIOpen is a rewrite). CUB's table
# only lists types and macros.
LIBRARIES: tuple[tuple[str, str], ...] = (
    ("runtime", "CUDA_Runtime_API_functions_supported_by_HIP.md"),
    ("driver", "CUDA_Driver_API_functions_supported_by_HIP.md"),
    ("device", "CUDA_Device_API_supported_by_HIP.md"),
    ("complex", "cuComplex_API_supported_by_HIP.md"),
    ("rtc", "CUDA_RTC_API_supported_by_HIP.md"),
    ("blas", "CUBLAS_API_supported_by_HIP.md"),
    ("rand", "CURAND_API_supported_by_HIP.md"),
    ("fft", "CUFFT_API_supported_by_HIP.md"),
    ("sparse", "CUSPARSE_API_supported_by_HIP.md"),
    ("solver", "CUSOLVER_API_supported_by_HIP.md"),
)
# Types (and enum values) without a HIP equivalent are listed for these libraries only: the runtime and
# driver rows are what code names directly (launch attributes, tensor maps ...).
UNSUPPORTED_TYPE_LIBRARIES = frozenset({"runtime", "driver"})
# HIPIFY's device-function table lags HIP's headers (it still lists `__shfl_sync`, the bf16 conversions,
# `__hmax2` ... which HIP has declared since ROCm 6.x), so only the families the hazard catalog confirmed
# missing are kept (catalog ROC226: directed-rounding arithmetic, cache-hint loads/stores, profiler
# triggers and counters, `__brkpt`). FP8 names belong to ROC218.
DEVICE_UNSUPPORTED_FAMILIES = re.compile(
    r"__[fd](?:add|sub|mul|div|rcp|sqrt)_r[duz]|__fmaf?_r[duz]|__st(?:cg|cs|wt|wb)|__ld(?:lu|cv)"
    r"|__prof_trigger|__brkpt|__pm[0-3]"
)

# Names of CUDA's own spelling; other rows (a struct field such as `memoryBarrier`, OpenCL-interop `cl_*`
# enums) read like user identifiers and would be matched by accident.
VENDOR_NAME = re.compile(r"(?:cu|CU|nv|NV|__)\w*|libraryPropertyType(?:_t)?")

# HIPIFY API kinds (CUDA2HIP.cpp) whose headers are the CUDA toolkit's runtime/device headers (ROC204);
# every other kind is a CUDA library (ROC205). Caffe2 headers are PyTorch's, not CUDA's.
# How each library's function names are spelled on both sides, for `same_suffix` in cuda_api.toml.
API_PREFIXES: dict[str, tuple[str, str]] = {
    "runtime": ("cuda", "hip"),
    "driver": ("cu", "hip"),
    "complex": ("cu", "hip"),
    "rtc": ("nvrtc", "hiprtc"),
    "blas": ("cublas", "hipblas"),
    "rand": ("curand", "hiprand"),
    "fft": ("cufft", "hipfft"),
    "sparse": ("cusparse", "hipsparse"),
    "solver": ("cusolver", "hipsolver"),
}

RUNTIME_HEADER_APIS = frozenset({"API_RUNTIME", "API_DRIVER", "API_COMPLEX"})
SKIPPED_HEADER_APIS = frozenset({"API_CAFFE2"})
# cuRAND's device-side headers (`curand_kernel.h` and the headers it includes, all mapped to
# `hiprand/hiprand_kernel.h`) are included by kernels: RULES.md lists `curand_kernel.h` under ROC204.
DEVICE_RAND_HEADER = "hiprand/hiprand_kernel.h"

TORCH_MAP = "pytorch/pytorch torch/utils/hipify/cuda_to_hip_mappings.py (CUDA_INCLUDE_MAP)"
HIP_GUIDE = "ROCm/HIP docs/how-to/hip_porting_guide.md (Library Equivalents)"


@dataclass(frozen=True)
class Curated:
    """A hand-curated header mapping: what it maps to, which table it belongs to, and why."""

    hip: str
    kind: str  # "runtime", "library" or "library_prefixes"
    source: str


# Header facts HIPIFY's map lacks or spells the pre-ROCm-6 way; these replace HIPIFY's entry.
CURATED_HEADERS: dict[str, Curated] = {
    "cuda_bf16.h": Curated("hip/hip_bf16.h", "runtime", TORCH_MAP),
    "cublas.h": Curated("hipblas/hipblas.h", "library", TORCH_MAP),
    "cublas_v2.h": Curated("hipblas/hipblas.h", "library", TORCH_MAP),
    "cublas_api.h": Curated("hipblas/hipblas.h", "library", "hipBLAS header layout, as torch maps cublas_v2.h"),
    "cublasLt.h": Curated("hipblaslt/hipblaslt.h", "library", TORCH_MAP),
    "cusparse.h": Curated("hipsparse/hipsparse.h", "library", TORCH_MAP),
    "cusparse_v2.h": Curated("hipsparse/hipsparse.h", "library", "hipSPARSE header layout, as torch maps cusparse.h"),
    "cudnn.h": Curated(
        "miopen/miopen.h", "library", f"HIPIFY's ROC column; {HIP_GUIDE}: cuDNN -> MIOpen, no drop-in API"
    ),
    "nvrtc.h": Curated("hip/hiprtc.h", "library", TORCH_MAP),
    "nccl.h": Curated("rccl/rccl.h", "library", TORCH_MAP),
    "nvToolsExt.h": Curated("roctracer/roctx.h", "library", TORCH_MAP),
    "nvml.h": Curated("rocm_smi/rocm_smi.h", "library", TORCH_MAP),
    "cub/": Curated("hipcub/hipcub.hpp", "library_prefixes", f"{TORCH_MAP}, every cub/*.cuh entry"),
    "nvtx3/": Curated("roctracer/roctx.h", "library_prefixes", f"{TORCH_MAP}, nvtx3/nvtx3.hpp"),
    "thrust/system/cuda/": Curated("thrust/system/hip/", "library_prefixes", TORCH_MAP),
}

# The hazard catalog's ROC217 list (research/hazard-catalog.md, ROC217/ROC219/ROC220): headers, qualified
# names and plain names with no HIP counterpart, each naming its reason (the message shown to users).
REASONS: dict[str, str] = {
    "wmma": "warp matrix functions (WMMA) are not supported by HIP; port to rocWMMA (`rocwmma::`) or MFMA builtins",
    "pipeline": "CUDA async-copy pipelines have no HIP equivalent; use LDS double-buffering with `__syncthreads()`",
    "barrier": "libcu++ `cuda::barrier` has no HIP equivalent; use `__syncthreads()` or atomics",
    "annotated_ptr": "libcu++ `cuda::annotated_ptr` (L2 access properties) has no HIP equivalent",
    "cg_async": "HIP cooperative groups lack `memcpy_async`/`wait`/`wait_prior`; copy through LDS and sync the group",
    "cg_collectives": "HIP cooperative groups lack the scan/async-reduce/`invoke_one` collectives; write them explicitly",
    "cluster": "thread-block clusters / distributed shared memory do not exist on AMD GPUs",
    "tma": "the Tensor Memory Accelerator (TMA) and `cuda::ptx` wrappers have no HIP equivalent",
}
CATALOG = "research/hazard-catalog.md ROC217 (HIP kernel_language.rst: WMMA unsupported; cooperative_groups.rst: unsupported features)"
CATALOG_CLUSTERS = "research/hazard-catalog.md ROC219 (HIPIFY runtime table: cluster rows have no HIP column)"

CURATED_UNSUPPORTED_HEADERS: dict[str, str] = {
    "mma.h": "wmma",
    "crt/mma.h": "wmma",
    "cuda_pipeline.h": "pipeline",
    "cuda_pipeline_primitives.h": "pipeline",
    "cuda_pipeline_helpers.h": "pipeline",
    "cuda_awbarrier.h": "barrier",
    "cuda_awbarrier_primitives.h": "barrier",
    "cuda_awbarrier_helpers.h": "barrier",
    "cuda/pipeline": "pipeline",
    "cuda/barrier": "barrier",
    "cuda/std/barrier": "barrier",
    "cuda/annotated_ptr": "annotated_ptr",
    "cuda/ptx": "tma",
    "cooperative_groups/memcpy_async.h": "cg_async",
    "cooperative_groups/scan.h": "cg_collectives",
}
_CG_NAMES = {
    "memcpy_async": "cg_async",
    "wait": "cg_async",
    "wait_prior": "cg_async",
    "inclusive_scan": "cg_collectives",
    "exclusive_scan": "cg_collectives",
    "invoke_one": "cg_collectives",
    "invoke_one_broadcast": "cg_collectives",
    "reduce_update_async": "cg_collectives",
    "reduce_store_async": "cg_collectives",
    "this_cluster": "cluster",
    "cluster_group": "cluster",
}
# Qualified-name prefixes, matched segment by segment (`wmma` also covers `using namespace nvcuda;`;
# `cg` is the usual alias of `cooperative_groups`).
CURATED_UNSUPPORTED_QUALIFIED: dict[str, str] = {
    "nvcuda::wmma": "wmma",
    "wmma": "wmma",
    "cuda::pipeline": "pipeline",
    "cuda::pipeline_shared_state": "pipeline",
    "cuda::pipeline_role": "pipeline",
    "cuda::make_pipeline": "pipeline",
    "cuda::memcpy_async": "pipeline",
    "cuda::barrier": "barrier",
    "cuda::std::barrier": "barrier",
    "cuda::annotated_ptr": "annotated_ptr",
    "cuda::ptx": "tma",
    "cuda::device::experimental": "tma",
    **{
        f"{namespace}::{name}": reason
        for namespace in ("cg", "cooperative_groups")
        for name, reason in _CG_NAMES.items()
    },
}
# Plain names (after `using namespace cooperative_groups;`, or C-style primitives).
CURATED_UNSUPPORTED_NAMES: dict[str, str] = {
    "__cluster_dims__": "cluster",
    "this_cluster": "cluster",
    "cluster_group": "cluster",
    "__pipeline_memcpy_async": "pipeline",
    "__pipeline_commit": "pipeline",
    "__pipeline_wait_prior": "pipeline",
    "__pipeline_arrive_on": "pipeline",
    "CUtensorMap": "tma",
}

_ROW = re.compile(r"^\|")
_NAME = re.compile(r"`([A-Za-z_]\w*)`")
_INCLUDE_ENTRY = re.compile(
    r'\{"([^"]+)",\s*\{"([^"]*)",\s*"([^"]*)",\s*(CONV_\w+),\s*(API_\w+),\s*\d+(?:,\s*(\w+))?\s*\}\}'
)


@dataclass(frozen=True)
class Row:
    cuda: str
    hip: str | None  # None: no HIP equivalent
    hip_added: str  # the ROCm version that added the HIP name ("" when HIPIFY gives none)
    is_type: bool  # from a "Data types" section rather than a functions section


@dataclass(frozen=True)
class HeaderEntry:
    cuda: str
    hip: str
    api: str
    unsupported: bool


# --- reading the source ---------------------------------------------------------------------------


class Source:
    """A HIPIFY checkout, a bare git directory, or a folder of tables; yields file texts by HIPIFY path."""

    def __init__(self, path: Path, commit: str | None) -> None:
        self.path = path
        self.git_dir = _git_dir(path)
        self.checkout = (path / TABLES_DIR).is_dir()
        self.commit = commit or (self._git("rev-parse", "HEAD").strip() if self.git_dir else "unknown")
        self.used: list[str] = []

    def _git(self, *args: str) -> str:
        assert self.git_dir is not None
        return subprocess.run(
            ["git", "--git-dir", str(self.git_dir), *args], check=True, capture_output=True, text=True
        ).stdout

    def read(self, hipify_path: str) -> str | None:
        """The text of `hipify_path` (e.g. docs/tables/X.md), or None when the source lacks it."""
        text: str | None = None
        if self.checkout:
            file = self.path / hipify_path
            text = file.read_text(encoding="utf-8") if file.is_file() else None
        elif self.git_dir is not None:
            try:
                text = self._git("show", f"{self.commit}:{hipify_path}")
            except subprocess.CalledProcessError:
                text = None
        else:  # a plain folder of tables: files by their base name
            file = self.path / Path(hipify_path).name
            text = file.read_text(encoding="utf-8") if file.is_file() else None
        if text is not None:
            self.used.append(hipify_path)
        return text


def _git_dir(path: Path) -> Path | None:
    if (path / ".git").exists():
        return path / ".git"
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return path
    return None


# --- parsing ----------------------------------------------------------------------------------------


def parse_table(text: str) -> list[Row]:
    """The rows of one `*_supported_by_HIP.md` table, in file order."""
    rows: list[Row] = []
    columns: list[str] = []
    is_type = False
    for line in text.splitlines():
        if line.startswith("#"):
            is_type = "type" in line.lower()  # "Data types", "Types References", "Device Types"
            continue
        if not _ROW.match(line):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0].startswith("**"):
            columns = [cell.strip("*") for cell in cells]
            continue
        if not columns or cells[0].startswith(":"):
            continue
        cuda_at, hip_at = columns.index("CUDA"), columns.index("HIP")
        cuda = _NAME.fullmatch(cells[cuda_at])
        if cuda is None:
            continue
        hip_cell = cells[hip_at] if hip_at < len(cells) else ""
        hip = _NAME.fullmatch(hip_cell)
        added = cells[hip_at + 1] if hip_at + 1 < len(cells) else ""
        if hip_cell and hip is None:
            continue  # a HIP spelling that is no identifier (`void*`): mapped, but nothing to name
        rows.append(Row(cuda.group(1), hip.group(1) if hip else None, added, is_type))
    return rows


def parse_include_map(text: str) -> list[HeaderEntry]:
    """`CUDA_INCLUDE_MAP` of HIPIFY's src/CUDA2HIP.cpp."""
    start = text.find("CUDA_INCLUDE_MAP")
    if start < 0:
        return []
    end = text.find("};", start)
    block = text[start:end]
    return [
        HeaderEntry(cuda, hip, api, flag == "UNSUPPORTED")
        for cuda, hip, _roc, _conv, api, flag in _INCLUDE_ENTRY.findall(block)
    ]


# --- building the tables ------------------------------------------------------------------------------


def api_mappings(tables: dict[str, list[Row]], types: bool = False) -> dict[str, dict[str, str]]:
    """Per library: CUDA function (or, with `types`, data type / enum value / constant) -> HIP name, for
    names HIP provides (with a ROCm version) under a different name. Same-name rows (most device
    functions) need no porting and are left out."""
    result: dict[str, dict[str, str]] = {}
    for library, rows in tables.items():
        mapping: dict[str, str] = {}
        for row in rows:
            if row.is_type != types or row.hip is None or not row.hip_added or row.hip == row.cuda:
                continue
            mapping.setdefault(row.cuda, row.hip)
        if mapping:
            result[library] = mapping
    return result


def unsupported_names(tables: dict[str, list[Row]]) -> dict[str, list[str]]:
    """Per library: the names HIPIFY lists with an empty HIP column (see the filters above)."""
    result: dict[str, list[str]] = {}
    mapped = {row.cuda for rows in tables.values() for row in rows if row.hip is not None}
    for library, rows in tables.items():
        names: set[str] = set()
        for row in rows:
            if row.hip is not None or row.cuda in mapped:
                continue
            if row.is_type and library not in UNSUPPORTED_TYPE_LIBRARIES:
                continue
            if library == "device" and not DEVICE_UNSUPPORTED_FAMILIES.fullmatch(row.cuda):
                continue
            if not VENDOR_NAME.fullmatch(row.cuda):
                continue
            names.add(row.cuda)
        if names:
            result[library] = sorted(names)
    return result


def header_mappings(entries: Iterable[HeaderEntry]) -> dict[str, dict[str, tuple[str, str | None]]]:
    """kind -> CUDA header -> (HIP header, curated source or None for HIPIFY's own entry)."""
    tables: dict[str, dict[str, tuple[str, str | None]]] = {"runtime": {}, "library": {}, "library_prefixes": {}}
    for entry in entries:
        if entry.unsupported or entry.api in SKIPPED_HEADER_APIS:
            continue
        runtime = entry.api in RUNTIME_HEADER_APIS or entry.hip == DEVICE_RAND_HEADER
        tables["runtime" if runtime else "library"][entry.cuda] = (entry.hip, None)
    for cuda, curated in CURATED_HEADERS.items():
        for table in tables.values():
            table.pop(cuda, None)
        tables[curated.kind][cuda] = (curated.hip, curated.source)
    return tables


# --- writing TOML -------------------------------------------------------------------------------------


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _quote(name)


def _preamble(source: Source, purpose: list[str]) -> list[str]:
    lines = [
        f"# Generated by {SCRIPT}; do not edit by hand (rerun the script instead).",
        f"# Source: {REPOSITORY} at commit {source.commit}, files:",
        *(f"#   {path}" for path in source.used),
        "# Only mapping facts are kept, never HIPIFY's text.",
        "#",
        *(f"# {line}" if line else "#" for line in purpose),
        "",
    ]
    return lines


def _same_suffix(cuda: str, hip: str, cuda_prefix: str, hip_prefix: str) -> bool:
    return bool(cuda_prefix) and cuda.startswith(cuda_prefix) and hip == hip_prefix + cuda[len(cuda_prefix) :]


API_PURPOSE = [
    "CUDA API functions with a HIP mapping (ROC216 cuda-api-call), per library. Kept: function rows",
    "whose HIP column names a different function and gives the ROCm version that added it.",
    "`same_suffix`: the HIP name is the CUDA name with `cuda_prefix` replaced by `hip_prefix`",
    "(cudaMalloc -> hipMalloc); `[<library>.renamed]`: every other CUDA name = HIP name.",
    "(Two lists rather than one table keep the file quick to parse.)",
]
TYPES_PURPOSE = [
    "CUDA data types, enum values and constants with a HIP mapping, per library, in the layout of",
    "cuda_api.toml. `rocmlint verify` renames them (with the functions) in the temporary copy it",
    "compiles, as PyTorch's hipify does before a ROCm build.",
]


def render_api(source: Source, mappings: dict[str, dict[str, str]], purpose: list[str] = API_PURPOSE) -> str:
    lines = _preamble(source, purpose)
    for library, _ in LIBRARIES:
        mapping = mappings.get(library)
        if not mapping:
            continue
        cuda_prefix, hip_prefix = API_PREFIXES.get(library, ("", ""))
        regular = sorted(c for c, h in mapping.items() if _same_suffix(c, h, cuda_prefix, hip_prefix))
        renamed = sorted((c, h) for c, h in mapping.items() if not _same_suffix(c, h, cuda_prefix, hip_prefix))
        lines += [
            f"[{library}]",
            f"cuda_prefix = {_quote(cuda_prefix)}",
            f"hip_prefix = {_quote(hip_prefix)}",
            "same_suffix = [",
        ]
        lines.extend(f"  {_quote(cuda)}," for cuda in regular)
        lines += ["]", ""]
        if renamed:
            lines.append(f"[{library}.renamed]")
            lines.extend(f"{_key(cuda)} = {_quote(hip)}" for cuda, hip in renamed)
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def render_headers(source: Source, tables: dict[str, dict[str, tuple[str, str | None]]]) -> str:
    lines = _preamble(
        source,
        [
            "CUDA header -> HIP header. [runtime]: CUDA toolkit runtime/device headers (ROC204",
            "cuda-runtime-header); [library]: CUDA library headers (ROC205 cuda-library-header);",
            '[library_prefixes]: every library header under that folder. "" = nothing to include on ROCm',
            "(hipify drops the line). Entries marked `curated:` are hand-curated facts (in the script), with",
            "their source; they replace HIPIFY's entry for the same header.",
        ],
    )
    for kind in ("runtime", "library", "library_prefixes"):
        lines.append(f"[{kind}]")
        for cuda, (hip, curated) in sorted(tables[kind].items()):
            comment = f"  # curated: {curated}" if curated else ""
            lines.append(f"{_quote(cuda)} = {_quote(hip)}{comment}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def render_unsupported(source: Source, names: dict[str, list[str]]) -> str:
    lines = _preamble(
        source,
        [
            "CUDA headers and names with no HIP equivalent (ROC217 no-hip-equivalent).",
            "[reasons]: the message shown for each reason id.",
            "[headers], [qualified], [names]: header / qualified-name prefix (matched segment by segment) /",
            f"plain name -> reason id, curated from {CATALOG};",
            f"clusters from {CATALOG_CLUSTERS}.",
            "[hipify]: per library, the names HIPIFY's table lists with an empty HIP column (functions; also",
            "types and enum values for runtime and driver; device functions only in the families the",
            "catalog confirmed missing, research/hazard-catalog.md ROC226).",
        ],
    )
    lines.append("[reasons]")
    lines.extend(f"{_key(key)} = {_quote(reason)}" for key, reason in sorted(REASONS.items()))
    lines.append("")
    for section, table in (
        ("headers", CURATED_UNSUPPORTED_HEADERS),
        ("qualified", CURATED_UNSUPPORTED_QUALIFIED),
        ("names", CURATED_UNSUPPORTED_NAMES),
    ):
        lines.append(f"[{section}]")
        lines.extend(f"{_quote(name)} = {_quote(reason)}" for name, reason in sorted(table.items()))
        lines.append("")
    lines.append("[hipify]")
    for library, _ in LIBRARIES:
        if library in names:
            lines.append(f"{library} = [")
            lines.extend(f"  {_quote(name)}," for name in names[library])
            lines.append("]")
    return "\n".join(lines).rstrip("\n") + "\n"


# --- main ----------------------------------------------------------------------------------------------


def generate(source: Source) -> dict[str, str]:
    """File name -> content of every generated table."""
    tables: dict[str, list[Row]] = {}
    for library, file in LIBRARIES:
        text = source.read(f"{TABLES_DIR}/{file}")
        if text is not None:
            tables[library] = parse_table(text)
    if not tables:
        raise SystemExit(f"no HIPIFY tables found under {source.path}")
    include_text = source.read(HEADER_MAP_PATH)
    headers = header_mappings(parse_include_map(include_text) if include_text else [])
    return {
        "cuda_api.toml": render_api(source, api_mappings(tables)),
        "cuda_types.toml": render_api(source, api_mappings(tables, types=True), TYPES_PURPOSE),
        "cuda_headers.toml": render_headers(source, headers),
        "no_hip_equivalent.toml": render_unsupported(source, unsupported_names(tables)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "source", type=Path, help="HIPIFY checkout, bare git dir, or folder of *_supported_by_HIP.md tables"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "rocmlint" / "data")
    parser.add_argument("--commit", help="the HIPIFY commit to read (git) or to name in the headers (folder)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a checked-in table differs; write nothing")
    args = parser.parse_args(argv)
    outputs = generate(Source(args.source, args.commit))
    stale = []
    for name, content in outputs.items():
        target = args.out / name
        if args.check:
            if not target.is_file() or target.read_bytes() != content.encode("utf-8"):
                stale.append(name)
        else:
            target.write_bytes(content.encode("utf-8"))
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
