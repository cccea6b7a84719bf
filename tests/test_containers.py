"""The packages a project's own ROCm container recipes install (rocmlint/python/containers.py) and ROC109, which
takes FlashAttention-2 installed by the project's ROCm image as present on ROCm."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python.containers import _installed, rocm_image_packages

ROCM_RECIPE = """
FROM rocm/pytorch:latest
ARG FA_REPO="https://github.com/ROCm/flash-attention.git"
RUN git clone ${FA_REPO} && cd flash-attention && python setup.py install
RUN pip install --no-cache-dir -r requirements.txt \\
    flash-linear-attention==0.5.1 "vllm>=0.8" --index-url https://example.org/simple
"""
IMPORTER = "import torch\nfrom flash_attn.bert_padding import pad_input\n"


def test_a_rocm_recipe_installs_its_pip_requirements_and_cloned_repositories() -> None:
    assert _installed(ROCM_RECIPE.encode()) == {"flash-attention", "flash-linear-attention", "vllm"}
    # Option values (requirement files, index URLs) and comments install nothing.
    assert _installed(b"# pip install flash-attn\nRUN pip install -r flash_attn.txt -c pins.txt\n") == set()
    assert _installed(b"RUN pip3 install -U flash_attn==2.8.3\n") == {"flash-attn"}


def test_a_recipe_built_on_a_vllm_rocm_image_ships_its_flash_attn() -> None:
    """vLLM's ROCm images hold the ROCm build of FlashAttention-2; a ROCm PyTorch image or vLLM's CUDA one do not."""
    assert _installed(b"FROM vllm/vllm-openai-rocm:v0.23.0\nRUN pip install ray\n") == {"flash-attn", "ray"}
    assert _installed(b"FROM --platform=linux/amd64 rocm/vllm-dev:nightly\n") == {"flash-attn"}
    assert _installed(b"FROM rocm/pytorch:latest\n") == set()
    assert _installed(b"FROM vllm/vllm-openai:v0.9.0\n") == set()
    assert _installed(b"FROM rocm/sgl-dev:rocm7-vllm-20250904\n") == set()  # SGLang's image; the tag names vLLM


def test_only_recipes_named_for_or_built_on_rocm_count(tmp_path: Path) -> None:
    nvidia = "FROM nvcr.io/nvidia/pytorch:24.01\nRUN pip install flash-attn\n"
    write_tree(
        tmp_path,
        {
            "docker/Dockerfile.cuda": nvidia,  # an NVIDIA image
            "docker/Dockerfile.rocm702": "FROM ${BASE}\nRUN pip install flash_attn xformers\n",  # named for ROCm
            "docker/Dockerfile": "FROM rocm/vllm-dev:main\nRUN pip install triton\n",  # built on a ROCm image
            "docker/Dockerfile.torch280.vllm.AMD": "RUN pip install ray\n",
            "docker/Dockerfile.amd64": "RUN pip install flash-attn\n",  # the x86-64 architecture, not AMD GPUs
        },
    )
    assert rocm_image_packages(tmp_path) == {
        "flash-attn": "docker/Dockerfile",  # the vLLM ROCm image it starts from ships it
        "triton": "docker/Dockerfile",
        "xformers": "docker/Dockerfile.rocm702",
        "ray": "docker/Dockerfile.torch280.vllm.AMD",
    }


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_flash_attn_the_projects_rocm_image_installs_is_no_hazard(tmp_path: Path) -> None:
    """FlashAttention-2 is there where the project runs on ROCm; not when only an NVIDIA image installs it."""
    supplied = write_tree(tmp_path / "supplied", {"docker/rocm/Dockerfile.rocm": ROCM_RECIPE, "model.py": IMPORTER})
    assert _codes(supplied, "model.py") == []
    nvidia_only = {
        "docker/Dockerfile": ROCM_RECIPE.replace("rocm/pytorch", "nvcr.io/nvidia/pytorch"),
        "model.py": IMPORTER,
    }
    assert _codes(write_tree(tmp_path / "nvidia", nvidia_only), "model.py") == [("ROC109", 2)]
