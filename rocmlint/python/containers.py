"""The packages a project's own ROCm container recipes install: a Dockerfile (or Containerfile, Apptainer/Singularity
definition) meant for AMD GPUs that `pip install`s a package, clones its repository or starts from a ROCm image that
ships it (vLLM's ROCm images hold FlashAttention-2) ships it in the project's ROCm image, so an import of it with no fallback works where the project says to run on ROCm."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from rocmlint.python.importers import read_small_file

_SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox"})
_MAX_FOLDERS = 20_000
# A container recipe by its file name: `Dockerfile`, `Dockerfile.rocm`, `rocm.dockerfile`, `Containerfile`,
# `Apptainerfile.rocm`, `Singularity.def`.
_RECIPE_NAME = re.compile(r"dockerfile|containerfile|apptainerfile|singularity", re.IGNORECASE)
# A recipe meant for AMD GPUs: its name says ROCm or AMD (`Dockerfile.rocm702`, `Dockerfile.torch280.vllm.AMD`), not
# the x86-64 architecture (`Dockerfile.amd64`).
_AMD_NAME = re.compile(r"(?<![a-z])(?:rocm|amd(?!64))", re.IGNORECASE)
# ... or it starts from a ROCm base image (`FROM rocm/pytorch:...`, `FROM ${BASE} ` is not one).
_ROCM_BASE = re.compile(rb"^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*\S*rocm", re.IGNORECASE | re.MULTILINE)
# ... and what a ROCm base image it starts from ships: vLLM's ROCm images (`vllm/vllm-openai-rocm`, `rocm/vllm`,
# `rocm/vllm-dev`) hold the ROCm build of FlashAttention-2 that vLLM's docker/Dockerfile.rocm_base builds (`BUILD_FA`,
# `FA_REPO`) beside vLLM itself.
# `FROM` and the image's repository, without its tag (`rocm/sgl-dev:rocm7-vllm-...` is SGLang's image, not vLLM's).
_BASE_IMAGE = re.compile(rb"^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*\"?([^\s:\"@]+)", re.IGNORECASE | re.MULTILINE)
_BASE_IMAGE_PACKAGES = ((re.compile(rb"vllm.*rocm|rocm.*vllm", re.IGNORECASE), ("flash-attn",)),)
# `pip install` (also `uv pip`, `python -m pip`) up to the end of its command (a line continuation joins lines).
_PIP_INSTALL = re.compile(rb"pip3?[ \t]+install((?:\\\n|[^\n&;|])*)")
# A requirement word of an install command: a distribution name, before a version or extras (`flash-attn==2.8`).
_REQUIREMENT = re.compile(rb"(?<![\w./=-])([A-Za-z][A-Za-z0-9._-]*)")
# A repository on a code host the recipe fetches (`git clone https://github.com/ROCm/flash-attention`,
# `ARG FA_REPO=...`): its name.
_REPOSITORY = re.compile(
    rb"https?://(?:github\.com|gitlab\.com|bitbucket\.org)/[\w.-]+/([\w.-]+?)(?:\.git)?(?=[\s\"'@#/]|$)", re.MULTILINE
)


def rocm_image_packages(root: Path) -> dict[str, str]:
    """The normalised names (`normalise`) of the packages the ROCm container recipes under `root` install, each with
    the recipe that installs it (relative to `root`)."""
    return dict(_packages(str(root)))


def normalise(name: str) -> str:
    """A distribution or repository name as the recipes are matched on: lower case, `_` and `.` read as `-`."""
    return re.sub(r"[_.]+", "-", name.lower())


@lru_cache(maxsize=8)
def _packages(root: str) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for recipe in _rocm_recipes(root):
        data = read_small_file(recipe) or b""
        for name in _installed(data):
            found.setdefault(name, os.path.relpath(recipe, root))
    return tuple(found.items())


def _rocm_recipes(root: str) -> list[str]:
    recipes: list[str] = []
    for count, (folder, subfolders, names) in enumerate(os.walk(root)):
        if count >= _MAX_FOLDERS:
            break
        subfolders[:] = sorted(s for s in subfolders if s not in _SKIPPED_FOLDERS and not s.startswith("."))
        for name in sorted(names):
            path = os.path.join(folder, name)
            if _RECIPE_NAME.search(name) and (_AMD_NAME.search(name) or _starts_from_rocm(path)):
                recipes.append(path)
    return recipes


def _starts_from_rocm(path: str) -> bool:
    data = read_small_file(path)
    return data is not None and _ROCM_BASE.search(data) is not None


def _installed(data: bytes) -> set[str]:
    """The packages a recipe's text installs: the requirements of its `pip install` commands (options and their
    values, paths and URLs left out) and the repositories it fetches."""
    text = b"\n".join(line for line in data.splitlines() if not line.lstrip().startswith(b"#"))
    names = {match.group(1) for match in _REPOSITORY.finditer(text)}
    for image in _BASE_IMAGE.finditer(text):
        for repository, shipped in _BASE_IMAGE_PACKAGES:
            if repository.search(image.group(1)):
                names.update(name.encode("ascii") for name in shipped)
    for command in _PIP_INSTALL.finditer(text):
        arguments = command.group(1).replace(b"\\\n", b" ")
        names.update(
            match.group(1) for match in _REQUIREMENT.finditer(arguments) if not _is_option_value(arguments, match)
        )
    return {normalise(name.decode("ascii", "replace")) for name in names}


def _is_option_value(arguments: bytes, match: re.Match[bytes]) -> bool:
    """A word that is the value of an option (`-r requirements.txt`, `--index-url x`), not a requirement."""
    before = arguments[: match.start()].rstrip()
    previous = before.rsplit(None, 1)[-1] if before.split() else b""
    return previous.startswith(b"-") and not previous.startswith(b"--no-") and previous not in _FLAGS


# Options that take no value: the word after one is a requirement.
_FLAGS = frozenset({b"-U", b"--upgrade", b"-e", b"--editable", b"-v", b"-q", b"--user", b"--pre", b"--force-reinstall"})
