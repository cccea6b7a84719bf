"""A Rust crate's build script (`build.rs`) compiling the crate's CUDA or HIP sources with the `cc` crate:

    let mut cuda_target = cc::Build::new();
    cuda_target.cuda(true).file("src/fee/gpu/fee.cu");
    let mut hip_target = cc::Build::new();
    hip_target.compiler(hip_path.join("bin/hipcc")).file("src/fee/gpu/fee.cu");

Each `cc::Build` value is one compiler's build: nvcc's when the script calls `.cuda(true)` on it, hipcc's when it hands
it hipcc (`.compiler(...)` naming hipcc) or its name says HIP or ROCm (`hip_target`); the sources its `.file("...")`
calls name (relative to the crate's root, the script's folder) are compiled for that vendor. A script building for
ROCm this way is a ROCm build of the project; its sources say what each vendor compiles (rocmlint/cuda/project.py).
"""

from __future__ import annotations

import os
import re

from rocmlint.cuda.build_files import BuildFacts, SourceSet, vendor_of_words

# `let mut hip_target = cc::Build::new();`
_BUILDER = re.compile(r"\blet\s+(?:mut\s+)?([A-Za-z_]\w*)\s*=\s*cc::Build::new\(\)")
# A statement (up to its `;`) calling methods of a named value: `hip_target.file("a.cu").flag("-O3");`.
_STATEMENT = re.compile(r"(?m)^\s*([A-Za-z_]\w*)\s*\.([^;]*);")
_FILE_CALL = re.compile(r"\.file\(\s*\"([^\"]+)\"\s*\)")
_CUDA_ON = re.compile(r"\bcuda\(\s*true\s*\)")
# `.compiler(...)`, up to the end of its statement (`.compiler(env::var("HIPCC").unwrap_or("hipcc".into()))`).
_COMPILER_CALL = re.compile(r"\bcompiler\(([^;]*)")
_WORD = re.compile(r"[A-Za-z_]\w*")
_HIPCC = re.compile(r"(?i)\bhipcc\b")
_NVCC = re.compile(r"(?i)\bnvcc\b")
_LINE_COMMENT = re.compile(r"//[^\n]*")


def is_cargo_build_script(path: str) -> bool:
    """A Cargo build script: `build.rs` beside the crate's `Cargo.toml`."""
    return os.path.basename(path) == "build.rs"


def cargo_build_facts(path: str, text: str) -> BuildFacts:
    """The sources each vendor's `cc::Build` of a build script compiles (see the module doc)."""
    code = _LINE_COMMENT.sub("", text)
    builders = set(_BUILDER.findall(code))
    calls: dict[str, list[tuple[int, str]]] = {name: [] for name in builders}
    for statement in _STATEMENT.finditer(code):
        if statement.group(1) in builders:
            line = code.count("\n", 0, statement.start(1)) + 1
            calls[statement.group(1)].append((line, statement.group(2)))
    sources: list[SourceSet] = []
    for name, made in calls.items():
        vendor = _builder_vendor(name, " ".join(chain for _, chain in made), code)
        sources += [
            SourceSet(os.path.normpath(source), vendor, path, line)
            for line, chain in made
            for source in _FILE_CALL.findall("." + chain)
        ]
    return BuildFacts(sources=tuple(sorted(sources, key=lambda source: source.line)))


def _builder_vendor(name: str, chains: str, code: str) -> str | None:
    """The vendor a `cc::Build` value compiles for: nvcc's when CUDA is turned on, else the compiler it is handed
    (directly, or through a variable the script sets from a path naming it), else its own name's."""
    if _CUDA_ON.search(chains):
        return "nvidia"
    compiler = _COMPILER_CALL.search(chains)
    if compiler is not None:
        spelled = " ".join([compiler.group(1), *(_assigned(word, code) for word in _WORD.findall(compiler.group(1)))])
        if _HIPCC.search(spelled):
            return "rocm"
        if _NVCC.search(spelled):
            return "nvidia"
    return vendor_of_words(name)


def _assigned(variable: str, code: str) -> str:
    """The texts the script assigns `variable` (`let mut compiler = hip_path.join("bin/hipcc");`, later `compiler =
    ...;`), joined."""
    return " ".join(re.findall(rf"(?:\blet\s+(?:mut\s+)?)?\b{re.escape(variable)}\s*=(?!=)\s*([^;]*);", code))
