"""How a project builds for ROCm, read from its build files: the configure header a Makefile or CMake writes per
vendor, a Makefile rule hipifying a folder, torch's JIT `load()` (rocmlint/cuda/build_files.py, project.py)."""

from __future__ import annotations

import textwrap

from rocmlint.cuda.build_files import makefile_facts

_CONFIGURING_MAKEFILE = """
ifeq ($(BACKEND),cuda)
    $(CONFIG): include/config.h.in
\t\tcp $< $@
\t\tsed -i -e 's/#cmakedefine XYZ_HAVE_CUDA/#define XYZ_HAVE_CUDA/g' $@
\t\tsed -i -e 's/#cmakedefine XYZ_HAVE_HIP/#undef XYZ_HAVE_HIP/g' $@
\t\tsed -i -e 's/#cmakedefine XYZ_ARCH "@XYZ_ARCH@"/#define XYZ_ARCH "$(ARCH)"/g' $@
else
    $(CONFIG): include/config.h.in
\t\tsed -i -e 's/#cmakedefine XYZ_HAVE_CUDA/#undef XYZ_HAVE_CUDA/g' $@
\t\tsed -i -e 's/#cmakedefine XYZ_HAVE_HIP/#define XYZ_HAVE_HIP/g' $@
endif
INSTALL_FLAGS := $(filter-out -DXYZ_NOAFFINITY -DXYZ_HAVE_CUDA -DXYZ_HAVE_HIP -fPIC, $(CFLAGS))
CFLAGS += -DXYZ_LOGGING
"""


def test_a_makefile_writing_the_configure_header_per_backend_defines_its_macros():
    facts = makefile_facts("Makefile", textwrap.dedent(_CONFIGURING_MAKEFILE).lstrip("\n"))
    assert [(d.name, d.value, d.vendor, d.line) for d in facts.defines] == [
        ("XYZ_HAVE_CUDA", None, "nvidia", 4),  # sed's `#cmakedefine X` -> `#define X`, in the `cuda` arm
        ("XYZ_ARCH", '"$(ARCH)"', "nvidia", 6),
        ("XYZ_HAVE_HIP", None, "rocm", 10),  # the `else` arm: ROCm's; the `#undef` rewrites define nothing
        # `$(filter-out -DX ...)` patterns define nothing; a plain flag does.
        ("XYZ_LOGGING", None, None, 13),
    ]
