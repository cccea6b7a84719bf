"""The runtime requirements a project declares at its root (rocmlint/cuda/declared_requirements.py): the names of its
default install, and which exist for one GPU vendor only."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.cuda.declared_requirements import DeclaredRequirements, declared_requirements, normalise


def test_requirement_lines_are_names_not_comments_options_or_urls(tmp_path: Path) -> None:
    text = (
        "# amdsmi is optional\n"
        "-r requirements-rocm.txt\n"
        "--extra-index-url https://example.invalid/simple amdsmi\n"
        "git+https://example.invalid/amd/pyrsmi.git\n"
        "./vendor/pyrsmi\n"
        "mlperf-logging @ git+https://example.invalid/mlperf/logging.git\n"
        "Hip_Python[extras]>=6.2 ; platform_machine == 'x86_64'  # HIP Python\n"
    )
    root = write_tree(tmp_path, {"requirements.txt": text})
    assert declared_requirements(str(root)) == DeclaredRequirements(
        "requirements.txt:7: hip-python", "", (str(root / "requirements.txt"),)
    )


def test_pyproject_dependencies_name_the_line_that_declares_them(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "x"\ndependencies = [\n    "torch",\n    \'amdsmi\',\n    "cupy-cuda12x",\n]\n'
    root = write_tree(tmp_path, {"pyproject.toml": pyproject})
    declared = declared_requirements(str(root))
    assert (declared.rocm_only, declared.nvidia_only) == ("pyproject.toml:5: amdsmi", "pyproject.toml:6: cupy-cuda12x")


def test_files_that_cannot_be_read_as_declarations_declare_nothing(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path, {"pyproject.toml": "[project\ndependencies = ['pyrsmi']\n", "sub/requirements.txt": "pyrsmi"}
    )
    assert declared_requirements(str(root)) == DeclaredRequirements("", "", (str(root / "pyproject.toml"),))


def test_names_are_compared_as_pypi_compares_them() -> None:
    assert normalise("Hip__Python") == normalise("hip.python") == "hip-python"
