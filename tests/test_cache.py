"""The result cache: integrity, keys, dependencies of Python results, `rocmlint clean`."""

from __future__ import annotations

import hashlib
import marshal
import os
from dataclasses import replace
from pathlib import Path

import pytest

from rocmlint import cache as cache_module
from rocmlint.cache import INDEX_NAME, Cache, settings_key
from rocmlint.cli import main
from rocmlint.config import ConfigResolver, Overrides, Settings
from rocmlint.discovery import discover
from rocmlint.parallel import check_candidates

from conftest import HAZARD, write_tree

OLD = 1_600_000_000_000_000_000  # an mtime far from "now", so stats are trusted


def _age(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(OLD, OLD))


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
    _age(root)
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


def _rewrite_entries(index: Path, change) -> None:
    """Rewrite the index with a valid digest, so only the entry-level checks can catch `change`."""
    blob = index.read_bytes()
    header = len(cache_module._MAGIC) + cache_module._DIGEST_SIZE
    head, entries = marshal.loads(blob[header:])
    change(entries)
    payload = marshal.dumps((head, entries))
    digest = hashlib.blake2b(payload, digest_size=cache_module._DIGEST_SIZE).digest()
    index.write_bytes(cache_module._MAGIC + digest + payload)


def test_malformed_entry_is_discarded_with_a_warning(tree, tmp_path):
    _run(tree, tmp_path / "c")
    key = os.path.abspath(tree / "a.py")

    def break_report(entries):
        display, settings, stat, digest, deps, report = entries[key]
        entries[key] = (display, settings, stat, digest, deps, ((("bad",),), ()))

    _rewrite_entries(tmp_path / "c" / INDEX_NAME, break_report)
    reports, _, warnings = _run(tree, tmp_path / "c")
    assert any("malformed" in w for w in warnings)
    assert _codes(reports) == [("a.py", "ROC101", 2)], "the entry was recomputed, not trusted"


def test_wrong_shaped_entry_is_discarded_with_a_warning(tree, tmp_path):
    _run(tree, tmp_path / "c")
    key = os.path.abspath(tree / "a.py")
    _rewrite_entries(tmp_path / "c" / INDEX_NAME, lambda entries: entries.__setitem__(key, ("short",)))
    reports, _, warnings = _run(tree, tmp_path / "c")
    assert any("malformed" in w for w in warnings)
    assert _codes(reports) == [("a.py", "ROC101", 2)]


def test_content_change_is_a_miss(tree, tmp_path):
    _run(tree, tmp_path / "c")
    (tree / "a.py").write_text("import torch\nm = torch.compile(m)\n")
    _age(tree)
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
    variants = [
        replace(base, ignore=("ROC101",)),
        replace(base, extend_select=("ROC002",)),
        replace(base, per_file_ignores=(("a.py", ("ROC1",)),)),
        replace(base, rocm_guards=("pkg.on_amd",)),
        replace(base, rocm_macros=("USE_HIP",)),
        replace(base, portable_macros=("SHFL",)),
        replace(base, target_archs=("gfx942",)),
        replace(base, root=tmp_path / "other"),
    ]
    keys = {settings_key(base), *(settings_key(v) for v in variants)}
    assert len(keys) == len(variants) + 1
    assert settings_key(replace(base, exclude=("x",))) == settings_key(base), "discovery-only settings do not matter"


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
    _age(root)
    first, _, _ = _run(root, tmp_path / "c")
    assert _codes(first) == []
    (root / "pkg" / "env.py").write_text("import torch\nFAST = True  # no longer a vendor test\n")
    _age(root)
    second, _, _ = _run(root, tmp_path / "c")
    fresh, _, _ = _run(root, tmp_path / "fresh")
    assert _codes(second) == _codes(fresh) == [("a.py", "ROC101", 4)]


def test_new_module_on_the_import_path_invalidates_the_importer(tmp_path):
    root = tmp_path / "proj"
    gated = 'import torch\nfrom pkg.flags import FAST\nif FAST:\n    m = torch.compile(m, mode="reduce-overhead")\n'
    write_tree(root, {"pkg/__init__.py": "", "pkg/a.py": gated})
    _age(root)
    first, _, _ = _run(root, tmp_path / "c")
    assert _codes(first) == [("a.py", "ROC101", 4)]
    write_tree(root, {"pkg/flags.py": "import torch\nFAST = torch.version.hip is None\n"})
    _age(root)
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
    from rocmlint.engine import Engine, FileReport

    report = Engine().check_bytes(str(tmp_path / "a.py"), HAZARD.encode(), Settings(root=tmp_path))
    report.tracebacks.append("Traceback: a rule ran out of stack\n")
    decoded = decode_report(report.path, marshal.loads(marshal.dumps(encode_report(report))))
    assert decoded.diagnostics == report.diagnostics
    assert [d.noqa_line for d in decoded.diagnostics] == [d.noqa_line for d in report.diagnostics]
    assert decoded.tracebacks == report.tracebacks
    assert isinstance(decoded, FileReport)
