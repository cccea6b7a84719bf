"""The result cache: integrity, keys, dependencies of Python results, `rocmlint clean`."""

from __future__ import annotations

import hashlib
import marshal
import os
import time
from dataclasses import fields, replace
from pathlib import Path

import pytest
from conftest import HAZARD, write_tree

from rocmlint import cache as cache_module
from rocmlint import parallel
from rocmlint.cache import INDEX_NAME, Cache, settings_key
from rocmlint.cli import main
from rocmlint.config import ConfigResolver, Overrides, Selection, Settings
from rocmlint.cuda.project import forget_projects
from rocmlint.discovery import discover
from rocmlint.parallel import check_candidates

OLD = 1_600_000_000_000_000_000  # an mtime far from "now"


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch):
    """Trust a stat as soon as it is taken after the file's last change, so these tests need not wait
    out the racy window for their files; the tests about racy stats set it back."""
    monkeypatch.setattr(cache_module, "RACY_NS", 0)


def _racy_window(monkeypatch) -> None:
    monkeypatch.setattr(cache_module, "RACY_NS", 2_000_000_000)


def _run(root: Path, cache_dir: Path, jobs: int = 1):
    warnings: list[str] = []
    candidates = list(discover([root], ConfigResolver(Overrides(), cwd=root), warnings.append))
    cache = Cache.open(cache_dir, warnings.append)
    reports = check_candidates(candidates, jobs, cache, warnings.append, pool_min_files=0)
    return reports, cache, warnings


def _codes(reports) -> list[tuple[str, str, int]]:
    return [(Path(d.path).name, d.code, d.location.line) for r in reports for d in r.diagnostics]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write_tree(root, {"a.py": HAZARD, "b.py": "import torch\n", "k.cu": "__global__ void k() {}\n"})
    # Old mtimes, as most files of a real tree have: an edit whose mtime is set back then shows only
    # in the ctime.
    for path in root.iterdir():
        os.utime(path, ns=(OLD, OLD))
    return root


def test_warm_run_serves_every_file_from_the_cache(tree, tmp_path):
    cold, _, _ = _run(tree, tmp_path / "c")
    reports, cache, warnings = _run(tree, tmp_path / "c")
    assert _codes(reports) == _codes(cold) == [("a.py", "ROC101", 2)]
    assert reports[0].diagnostics[0].fix is not None, "fixes survive the round trip"
    assert reports[0].diagnostics == cold[0].diagnostics
    assert not cache.dirty and not warnings


def test_corrupted_index_is_discarded_with_a_warning(tree, tmp_path):
    _run(tree, tmp_path / "c")
    index = tmp_path / "c" / INDEX_NAME
    blob = bytearray(index.read_bytes())
    blob[-5] ^= 0xFF
    index.write_bytes(bytes(blob))
    reports, _, warnings = _run(tree, tmp_path / "c")
    assert any("corrupted" in w for w in warnings)
    assert _codes(reports) == [("a.py", "ROC101", 2)]


def test_truncated_index_is_discarded_with_a_warning(tree, tmp_path):
    _run(tree, tmp_path / "c")
    index = tmp_path / "c" / INDEX_NAME
    index.write_bytes(index.read_bytes()[:40])
    reports, _, warnings = _run(tree, tmp_path / "c")
    assert any("corrupted" in w for w in warnings)
    assert _codes(reports) == [("a.py", "ROC101", 2)]


def _rewrite_index(index: Path, change) -> None:
    """Rewrite the index with a valid digest, so only the entry-level checks can catch `change(table, entries)`
    (the dependency table as a list, the entries as a dict)."""
    blob = index.read_bytes()
    header = len(cache_module._MAGIC) + cache_module._DIGEST_SIZE
    head, table, entries = marshal.loads(blob[header:])
    table = list(table)
    change(table, entries)
    payload = marshal.dumps((head, tuple(table), entries))
    digest = hashlib.blake2b(payload, digest_size=cache_module._DIGEST_SIZE).digest()
    index.write_bytes(cache_module._MAGIC + digest + payload)


def test_malformed_entry_is_discarded_with_a_warning(tree, tmp_path):
    _run(tree, tmp_path / "c")
    key = os.path.abspath(tree / "a.py")

    def break_report(table, entries):
        display, settings, stat, digest, deps, _report = entries[key]
        entries[key] = (display, settings, stat, digest, deps, ((("bad",),), ()))

    _rewrite_index(tmp_path / "c" / INDEX_NAME, break_report)
    reports, _, warnings = _run(tree, tmp_path / "c")
    assert any("malformed" in w for w in warnings)
    assert _codes(reports) == [("a.py", "ROC101", 2)], "the entry was recomputed, not trusted"


def test_wrong_shaped_entry_is_discarded_with_a_warning(tree, tmp_path):
    _run(tree, tmp_path / "c")
    key = os.path.abspath(tree / "a.py")
    _rewrite_index(tmp_path / "c" / INDEX_NAME, lambda table, entries: entries.__setitem__(key, ("short",)))
    reports, _, warnings = _run(tree, tmp_path / "c")
    assert any("malformed" in w for w in warnings)
    assert _codes(reports) == [("a.py", "ROC101", 2)]


def test_content_change_is_a_miss(tree, tmp_path):
    _run(tree, tmp_path / "c")
    (tree / "a.py").write_text("import torch\nm = torch.compile(m)\n")
    reports, _, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == []


def test_same_size_edit_with_old_mtime_is_caught_by_the_hash(tree, tmp_path):
    _run(tree, tmp_path / "c")
    text = (tree / "a.py").read_text()
    (tree / "a.py").write_text(text.replace("reduce-overhead", "reduce_overhead"))
    os.utime(tree / "a.py", ns=(OLD + 1, OLD + 1))
    reports, _, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == []


def test_touch_without_change_keeps_the_entry(tree, tmp_path):
    _run(tree, tmp_path / "c")
    os.utime(tree / "a.py", ns=(OLD + 10, OLD + 10))
    reports, cache, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == [("a.py", "ROC101", 2)]
    assert cache.entries[os.path.abspath(tree / "a.py")].stat[1] == OLD + 10, "the new stat is remembered"


def test_settings_key_changes_with_every_setting_that_matters(tmp_path):
    base = Settings(root=tmp_path)
    changed = {
        "select": ("ROC1",),
        "ignore": ("ROC101",),
        "extend_select": ("ROC002",),
        "per_file_ignores": (("a.py", ("ROC1",)),),
        "rocm_guards": ("pkg.on_amd",),
        "rocm_macros": ("USE_HIP",),
        "portable_macros": ("SHFL",),
        "nvidia_macros": ("PTX_AVAILABLE",),
        "target_archs": ("gfx942",),
        "rocm_condition": "defined(USE_ROCM)",
        "project_model": False,
        "show_hipified": False,
        "command_line": Selection(("ROC2",), (), ()),
        "root": tmp_path / "other",
    }
    discovery_only = {"config_path", "exclude", "extend_exclude", "respect_gitignore", "force_exclude"}
    run_only = {"baseline"}  # filters the run's diagnostics after the cache; no file's result depends on it
    # A new setting must be listed here, so its effect on the key is decided, not forgotten.
    assert {f.name for f in fields(Settings)} == set(changed) | discovery_only | run_only
    keys = {settings_key(base), *(settings_key(replace(base, **{name: value})) for name, value in changed.items())}
    assert len(keys) == len(changed) + 1
    assert settings_key(replace(base, exclude=("x",))) == settings_key(base), "discovery-only settings do not matter"
    assert settings_key(replace(base, baseline="b.json")) == settings_key(base)


def test_settings_change_is_a_miss(tree, tmp_path):
    _run(tree, tmp_path / "c")
    (tree / "pyproject.toml").write_text('[tool.rocmlint]\nignore = ["ROC101"]\n')
    reports, _, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == []


def test_version_change_discards_the_index(tree, tmp_path, monkeypatch):
    _, first, _ = _run(tree, tmp_path / "c")
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    assert cache_module.code_fingerprint() != first.fingerprint
    reopened = Cache.open(tmp_path / "c", lambda message: None)
    assert reopened.entries == {}


def test_rule_code_change_discards_the_index(tree, tmp_path):
    _, first, _ = _run(tree, tmp_path / "c")
    import rocmlint.rules

    rule_file = sorted(Path(rocmlint.rules.__path__[0]).glob("roc1*.py"))[0]
    status = rule_file.stat()
    try:
        os.utime(rule_file, ns=(status.st_atime_ns, status.st_mtime_ns + 1))
        assert cache_module.code_fingerprint() != first.fingerprint
    finally:
        os.utime(rule_file, ns=(status.st_atime_ns, status.st_mtime_ns))


def test_imported_flag_change_invalidates_the_importer(tmp_path):
    """a.py's hazard is gated by an NVIDIA-only flag defined in pkg/env.py: editing env.py alone must re-check a.py."""
    root = tmp_path / "proj"
    gated = 'import torch\nfrom pkg.env import FAST\nif FAST:\n    m = torch.compile(m, mode="reduce-overhead")\n'
    write_tree(
        root,
        {
            "pkg/__init__.py": "",
            "pkg/env.py": "import torch\nFAST = torch.version.hip is None\n",
            "pkg/a.py": gated,
        },
    )
    first, _, _ = _run(root, tmp_path / "c")
    assert _codes(first) == []
    (root / "pkg" / "env.py").write_text("import torch\nFAST = True  # no longer a vendor test\n")
    second, _, _ = _run(root, tmp_path / "c")
    fresh, _, _ = _run(root, tmp_path / "fresh")
    assert _codes(second) == _codes(fresh) == [("a.py", "ROC101", 4)]


def test_a_build_file_change_invalidates_the_cpp_files(tmp_path):
    """k.cu's cub include is gated by a macro only the ROCm make fragment defines: editing the fragment alone
    (a new process: a new project model) must re-check k.cu."""
    root = tmp_path / "proj"
    kernel = "#ifndef PROJ_ALT\n#include <cub/cub.cuh>\n#endif\n"
    write_tree(root, {"makefiles/rocm.mk": "CXXFLAGS += -DPROJ_ALT=1 -DOTHER=1\n", "k.cu": kernel})
    first, _, _ = _run(root, tmp_path / "c")
    assert _codes(first) == []
    (root / "makefiles" / "rocm.mk").write_text("CXXFLAGS += -DOTHER=1\n")
    forget_projects()
    second, _, _ = _run(root, tmp_path / "c")
    fresh, _, _ = _run(root, tmp_path / "fresh")
    assert _codes(second) == _codes(fresh) == [("k.cu", "ROC205", 2)]


def test_imported_platform_name_change_invalidates_the_importer(tmp_path):
    """a.py's hazard sits under `PLATFORM == "cuda"`, a name pkg/platform.py sets per vendor: editing
    platform.py alone must re-check a.py."""
    root = tmp_path / "proj"
    gated = (
        "import torch\nfrom pkg.platform import PLATFORM\n"
        'if PLATFORM == "cuda":\n    m = torch.compile(m, mode="reduce-overhead")\n'
    )
    write_tree(
        root,
        {
            "pkg/__init__.py": "",
            "pkg/platform.py": 'import torch\nPLATFORM = "rocm" if torch.version.hip else "cuda"\n',
            "pkg/a.py": gated,
        },
    )
    first, _, _ = _run(root, tmp_path / "c")
    assert _codes(first) == []
    (root / "pkg" / "platform.py").write_text('PLATFORM = "cuda"  # no longer decided by the vendor\n')
    second, _, _ = _run(root, tmp_path / "c")
    fresh, _, _ = _run(root, tmp_path / "fresh")
    assert _codes(second) == _codes(fresh) == [("a.py", "ROC101", 4)]


def test_new_module_on_the_import_path_invalidates_the_importer(tmp_path):
    root = tmp_path / "proj"
    gated = 'import torch\nfrom pkg.flags import FAST\nif FAST:\n    m = torch.compile(m, mode="reduce-overhead")\n'
    write_tree(root, {"pkg/__init__.py": "", "pkg/a.py": gated})
    first, _, _ = _run(root, tmp_path / "c")
    assert _codes(first) == [("a.py", "ROC101", 4)]
    write_tree(root, {"pkg/flags.py": "import torch\nFAST = torch.version.hip is None\n"})
    second, _, _ = _run(root, tmp_path / "c")
    fresh, _, _ = _run(root, tmp_path / "fresh")
    assert _codes(second) == _codes(fresh) == []


def test_concurrent_writers_leave_a_valid_index(tree, tmp_path):
    _, one, _ = _run(tree, tmp_path / "c")
    _, two, _ = _run(tree, tmp_path / "c")
    one.dirty = two.dirty = True
    one.save()
    two.save()
    leftovers = [p.name for p in (tmp_path / "c").iterdir() if p.name.endswith(".tmp")]
    assert not leftovers
    _, _, warnings = _run(tree, tmp_path / "c")
    assert not warnings


def test_cli_creates_the_cache_next_to_the_config_and_clean_removes_it(tmp_path, monkeypatch, capsys):
    root = tmp_path / "proj"
    write_tree(root, {"pyproject.toml": "[tool.rocmlint]\n", "src/a.py": HAZARD})
    monkeypatch.chdir(root / "src")
    monkeypatch.delenv(cache_module.ENV_CACHE_DIR, raising=False)
    assert main(["check", "."]) == 1
    first = capsys.readouterr().out
    assert (root / ".rocmlint_cache" / INDEX_NAME).is_file()
    assert main(["check", "."]) == 1
    assert capsys.readouterr().out == first
    assert main(["check", "--no-cache", "--jobs", "1", "."]) == 1
    assert capsys.readouterr().out == first
    assert main(["clean"]) == 0
    assert "removed" in capsys.readouterr().out
    assert not (root / ".rocmlint_cache").exists()
    assert main(["clean"]) == 0
    assert "no cache" in capsys.readouterr().out


# Where ruff puts .ruff_cache: the folder of the configuration in use (`--config`, else the one found from the
# working directory up), else the working directory; never a checked folder because it looks like a project.
@pytest.mark.parametrize(
    ("files", "options", "expected"),
    [
        ({"sub/pyproject.toml": "[project]\nname = 'sub'\n"}, (), "."),
        ({"pyproject.toml": "[tool.rocmlint]\n", "sub/pyproject.toml": "[tool.rocmlint]\n"}, (), "."),
        ({"sub/.rocmlint.toml": "", "sub/pyproject.toml": "[project]\nname = 'sub'\n"}, ("--isolated",), "."),
        ({"pyproject.toml": "[tool.rocmlint]\n", "sub/setup.py": ""}, ("--isolated",), "."),
        ({"sub/.rocmlint.toml": "", "conf/rocmlint.toml": ""}, ("--config", "conf/rocmlint.toml"), "conf"),
    ],
    ids=["no-config", "config-here-and-in-sub", "isolated", "isolated-ignores-config", "config-option"],
)
def test_check_sub_from_the_project_root_caches_where_ruff_would(tmp_path, monkeypatch, files, options, expected):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    write_tree(root, {**files, "sub/a.py": HAZARD})
    monkeypatch.chdir(root)
    monkeypatch.delenv(cache_module.ENV_CACHE_DIR, raising=False)
    assert main(["check", *options, "sub"]) == 1
    assert sorted(p.parent.relative_to(root).as_posix() for p in root.rglob(".rocmlint_cache")) == [expected]
    assert main(["clean", *options]) == 0
    assert not list(root.rglob(".rocmlint_cache"))


def test_the_cache_stays_in_the_working_directory_when_the_checked_folder_is_elsewhere(tmp_path, monkeypatch):
    write_tree(tmp_path, {"here/.git/HEAD": "", "there/pyproject.toml": "[project]\n", "there/a.py": HAZARD})
    monkeypatch.chdir(tmp_path / "here")
    monkeypatch.delenv(cache_module.ENV_CACHE_DIR, raising=False)
    assert main(["check", "../there"]) == 1
    assert [p.parent for p in tmp_path.rglob(".rocmlint_cache")] == [tmp_path / "here"]


def test_no_cache_writes_nothing(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pyproject.toml": "[tool.rocmlint]\n", "a.py": HAZARD})
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cache_module.ENV_CACHE_DIR, raising=False)
    main(["check", "--no-cache", "."])
    assert not (tmp_path / ".rocmlint_cache").exists()


def test_clean_refuses_a_folder_that_is_not_a_cache(tmp_path):
    folder = tmp_path / ".rocmlint_cache"
    folder.mkdir()
    (folder / "precious.txt").write_text("mine")
    with pytest.raises(OSError):
        cache_module.clean(folder)
    assert (folder / "precious.txt").exists()


def test_report_round_trip_keeps_fixes_and_tracebacks(tmp_path):
    from rocmlint.cache import decode_report, encode_report
    from rocmlint.engine import Engine
    from rocmlint.file_report import FileReport

    report = Engine().check_bytes(str(tmp_path / "a.py"), HAZARD.encode(), Settings(root=tmp_path))
    report.tracebacks.append("Traceback: a rule ran out of stack\n")
    decoded = decode_report(report.path, marshal.loads(marshal.dumps(encode_report(report))))
    assert decoded.diagnostics == report.diagnostics
    assert [d.noqa_line for d in decoded.diagnostics] == [d.noqa_line for d in report.diagnostics]
    assert decoded.tracebacks == report.tracebacks
    assert isinstance(decoded, FileReport)


# ---------------------------------------------------------------------------------------------------
# The stat fast path and racy stats


def _counting_hashes(monkeypatch) -> list[int]:
    """Counts the files the cache reads and hashes while looking up (not those checked afresh)."""
    hashed: list[int] = []
    real = cache_module.content_hash

    def counting(data: bytes) -> bytes:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(cache_module, "content_hash", counting)
    return hashed


def test_an_unchanged_stat_keeps_the_result_without_reading_the_file(tree, tmp_path, monkeypatch):
    _run(tree, tmp_path / "c")
    hashed = _counting_hashes(monkeypatch)
    reports, cache, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == [("a.py", "ROC101", 2)]
    assert hashed == [] and not cache.dirty


def test_a_racy_stat_is_stored_untrusted_and_the_bytes_decide_next_time(tree, tmp_path, monkeypatch):
    _racy_window(monkeypatch)
    _, first, _ = _run(tree, tmp_path / "c")
    key = os.path.abspath(tree / "a.py")
    assert not cache_module.trusted(first.entries[key].stat), "a.py changed less than 2 s before it was read"
    hashed = _counting_hashes(monkeypatch)
    reports, _, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == [("a.py", "ROC101", 2)]
    assert len(hashed) == 3, "every file is racy, so each is read and hashed, and each hash matches"


def _same_size_edit_with_the_mtime_set_back(path: Path) -> None:
    before = path.stat()
    text = path.read_text()
    path.write_text(text.replace("reduce-overhead", "reduce_overhead"))
    assert path.stat().st_size == before.st_size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_racy_edit_that_keeps_the_size_and_the_mtime_is_caught(tree, tmp_path, monkeypatch):
    _racy_window(monkeypatch)
    _run(tree, tmp_path / "c")
    _same_size_edit_with_the_mtime_set_back(tree / "a.py")
    reports, _, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == []


def test_an_edit_that_keeps_the_size_and_the_mtime_is_caught_by_the_ctime(tree, tmp_path):
    _, first, _ = _run(tree, tmp_path / "c")
    key = os.path.abspath(tree / "a.py")
    assert cache_module.trusted(first.entries[key].stat), "no racy window: only the ctime can tell"
    time.sleep(0.05)  # past the file system's timestamp tick, so the edit moves the ctime
    _same_size_edit_with_the_mtime_set_back(tree / "a.py")
    reports, _, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == []


def test_a_trusted_stat_is_believed_so_racy_stats_must_not_be(tree, tmp_path):
    """What the racy rule protects against: an entry whose stat still matches is served unread, even
    if the bytes changed (an edit within the same timestamp tick); an untrusted one is re-hashed."""
    _, first, _ = _run(tree, tmp_path / "c")
    key = os.path.abspath(tree / "a.py")
    entry = first.entries[key]
    stale = first.entries[key] = entry._replace(digest=b"other bytes")
    first.dirty = True
    first.save()
    reports, _, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == [("a.py", "ROC101", 2)], "served from the stat alone"
    first.entries[key] = stale._replace(stat=(entry.stat[0], -1, *entry.stat[2:]), report=((), ()))
    first.save()
    reports, _, _ = _run(tree, tmp_path / "c")
    assert _codes(reports) == [("a.py", "ROC101", 2)], "untrusted: hashed, found different, checked again"


@pytest.mark.parametrize("racy", [False, True])
@pytest.mark.parametrize("edit", ["append", "same size", "same size, mtime set back", "replaced by a renamed copy"])
def test_changed_content_is_always_checked_again(tree, tmp_path, monkeypatch, racy, edit):
    if racy:
        _racy_window(monkeypatch)
    _run(tree, tmp_path / "c")
    time.sleep(0.05)  # past the file system's timestamp tick
    target = tree / "a.py"
    if edit == "append":
        target.write_text(target.read_text() + "n = torch.compile(n, mode='reduce-overhead')\n")
    elif edit == "same size":
        target.write_text(target.read_text().replace("reduce-overhead", "reduce_overhead"))
    elif edit == "same size, mtime set back":
        _same_size_edit_with_the_mtime_set_back(target)
    else:
        before = target.stat()
        copy = tree / "a.py.new"
        copy.write_text(target.read_text().replace("reduce-overhead", "reduce_overhead"))
        os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(copy, target)
    cached, _, _ = _run(tree, tmp_path / "c")
    fresh, _, _ = _run(tree, tmp_path / "fresh")
    assert _codes(cached) == _codes(fresh)
    assert [r.diagnostics for r in cached] == [r.diagnostics for r in fresh]


def test_a_racy_dependency_never_matches(tmp_path, monkeypatch):
    """A dependency stat-ed less than the racy window after it changed may change again unseen: the
    importer is checked again until the dependency's stat can be trusted."""
    _racy_window(monkeypatch)
    root = tmp_path / "proj"
    gated = 'import torch\nfrom pkg.env import FAST\nif FAST:\n    m = torch.compile(m, mode="reduce-overhead")\n'
    write_tree(
        root,
        {"pkg/__init__.py": "", "pkg/env.py": "import torch\nFAST = torch.version.hip is None\n", "pkg/a.py": gated},
    )
    _, first, _ = _run(root, tmp_path / "c")
    dependencies = dict(
        first.dependency_table[row] for row in first.entries[os.path.abspath(root / "pkg" / "a.py")].dependencies
    )
    assert not cache_module.trusted(dependencies[os.path.abspath(root / "pkg" / "env.py")])
    env = root / "pkg" / "env.py"
    before = env.stat()
    env.write_text("import torch\nFAST = torch.version.hip is True\n")
    os.utime(env, ns=(before.st_atime_ns, before.st_mtime_ns))
    second, _, _ = _run(root, tmp_path / "c")
    fresh, _, _ = _run(root, tmp_path / "fresh")
    assert _codes(second) == _codes(fresh) == [("a.py", "ROC101", 4)]


def test_the_parsers_versions_are_read_without_importlib_metadata():
    assert cache_module._installed_version("tree_sitter").startswith("tree_sitter-")
    assert cache_module._installed_version("no_such_module_here") == "?"


def test_a_dependency_edited_during_the_run_is_seen_by_the_next_run(tmp_path, monkeypatch):
    """The index reads pkg/env.py once and keeps its value for the run: files checked after env.py
    changed still used the old value, so they must be remembered with env.py's stat from before."""
    root = tmp_path / "proj"
    gated = 'import torch\nfrom pkg.env import FAST\nif FAST:\n    m = torch.compile(m, mode="reduce-overhead")\n'
    env = root / "pkg" / "env.py"
    write_tree(
        root,
        {
            "pkg/__init__.py": "",
            "pkg/env.py": "import torch\nFAST = torch.version.hip is None\n",
            "pkg/a.py": gated,
            "pkg/b.py": gated,
        },
    )
    real = parallel.check_file

    def edit_env_after_a(engine, path, settings, remember):
        result = real(engine, path, settings, remember)
        if path.name == "a.py":
            time.sleep(0.05)  # past the file system's timestamp tick
            env.write_text("import torch\nFAST = True  # no longer a vendor test\n")
        return result

    monkeypatch.setattr(parallel, "check_file", edit_env_after_a)
    _run(root, tmp_path / "c")
    monkeypatch.setattr(parallel, "check_file", real)
    second, _, _ = _run(root, tmp_path / "c")
    fresh, _, _ = _run(root, tmp_path / "fresh")
    assert _codes(second) == _codes(fresh) == [("a.py", "ROC101", 4), ("b.py", "ROC101", 4)]


# ---------------------------------------------------------------------------------------------------
# The dependency table: each distinct (path, stat) once, named by number from the entries

GATED = 'import torch\nfrom pkg.env import FAST\nif FAST:\n    m = torch.compile(m, mode="reduce-overhead")\n'


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """pkg/a.py and pkg/b.py both depend on pkg/env.py, whose NVIDIA-only flag gates their hazard."""
    root = tmp_path / "proj"
    env = "import torch\nFAST = torch.version.hip is None\n"
    write_tree(root, {"pkg/__init__.py": "", "pkg/env.py": env, "pkg/a.py": GATED, "pkg/b.py": GATED})
    return root


def _reopened(cache_dir: Path) -> Cache:
    warnings: list[str] = []
    cache = Cache.open(cache_dir, warnings.append)
    assert not warnings
    return cache


def _named_rows(cache: Cache) -> set[int]:
    return {row for entry in cache.entries.values() for row in entry.dependencies}


def test_a_dependency_many_files_share_is_one_row(package, tmp_path):
    _run(package, tmp_path / "c")
    cache = _reopened(tmp_path / "c")
    env = os.path.abspath(package / "pkg" / "env.py")
    rows = [row for row, (path, _) in enumerate(cache.dependency_table) if path == env]
    assert len(rows) == 1
    a, b = (cache.entries[os.path.abspath(package / "pkg" / name)].dependencies for name in ("a.py", "b.py"))
    assert rows[0] in a and a == b
    assert len(set(cache.dependency_table)) == len(cache.dependency_table)


def test_each_row_is_judged_at_most_once_per_run(package, tmp_path, monkeypatch):
    _run(package, tmp_path / "c")
    judged: list[int] = []
    real = Cache._judge

    def counting(self: Cache, row: int) -> None:
        judged.append(row)
        real(self, row)

    monkeypatch.setattr(Cache, "_judge", counting)
    reports, cache, warnings = _run(package, tmp_path / "c")
    assert _codes(reports) == [] and not cache.dirty and not warnings, "served from the cache"
    assert sorted(judged) == sorted(_named_rows(cache)), "each row named by an entry, once"
    assert len(judged) < sum(len(entry.dependencies) for entry in cache.entries.values())


def test_save_writes_only_the_rows_entries_name(package, tmp_path):
    _run(package, tmp_path / "c")
    env = package / "pkg" / "env.py"
    env.write_text("import torch\nFAST = True  # no longer a vendor test\n")
    second, _, _ = _run(package, tmp_path / "c")
    assert _codes(second) == [("a.py", "ROC101", 4), ("b.py", "ROC101", 4)]
    cache = _reopened(tmp_path / "c")
    assert _named_rows(cache) == set(range(len(cache.dependency_table))), "env.py's old stat is gone"
    env_stats = [stat for path, stat in cache.dependency_table if path == os.path.abspath(env)]
    assert env_stats == [cache_module.stat_of(str(env))]
    third, cache, _ = _run(package, tmp_path / "c")
    assert _codes(third) == _codes(second) and not cache.dirty, "the renumbered entries are served"


@pytest.mark.parametrize(
    "rows",
    [lambda size: (size,), lambda size: (-1,), lambda size: ("0",), lambda size: ([0],), lambda size: 0],
    ids=["past-the-end", "negative", "text", "unhashable", "not-a-tuple"],
)
def test_an_entry_naming_no_row_of_the_table_is_discarded_with_a_warning(tree, tmp_path, rows):
    _run(tree, tmp_path / "c")
    key = os.path.abspath(tree / "a.py")

    def name_no_row(table, entries):
        display, settings, stat, digest, _rows, _report = entries[key]
        # An empty report: were the entry trusted, a.py's diagnostic would be lost.
        entries[key] = (display, settings, stat, digest, rows(len(table)), ((), (), ()))

    _rewrite_index(tmp_path / "c" / INDEX_NAME, name_no_row)
    reports, _, warnings = _run(tree, tmp_path / "c")
    assert any("malformed" in w for w in warnings)
    assert _codes(reports) == [("a.py", "ROC101", 2)], "the entry was recomputed, not trusted"


def test_a_malformed_row_discards_the_entries_naming_it_with_a_warning(package, tmp_path):
    _run(package, tmp_path / "c")
    env = os.path.abspath(package / "pkg" / "env.py")

    def break_env_row(table, entries):
        table[[path for path, _ in table].index(env)] = (5, None)

    _rewrite_index(tmp_path / "c" / INDEX_NAME, break_env_row)
    reports, _, warnings = _run(package, tmp_path / "c")
    assert sum("malformed" in w for w in warnings) == 2, "a.py and b.py"
    fresh, _, _ = _run(package, tmp_path / "fresh")
    assert [r.diagnostics for r in reports] == [r.diagnostics for r in fresh]
    assert all(isinstance(path, str) for path, _ in _reopened(tmp_path / "c").dependency_table)


def test_an_entry_naming_no_row_is_not_written_back(package, tmp_path):
    """An entry not looked up this run is written back as read, unless it names no row of the table:
    the next run must not find it naming a row appended since."""
    _, cache, _ = _run(package, tmp_path / "c")
    key = os.path.abspath(package / "pkg" / "a.py")
    cache.entries[key] = cache.entries[key]._replace(dependencies=(len(cache.dependency_table),))
    cache.dirty = True
    cache.save()
    reopened = _reopened(tmp_path / "c")
    assert set(reopened.entries) == set(cache.entries) - {key}
