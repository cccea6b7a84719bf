"""Time rocmlint against its peers on the same files; print a Markdown table of medians and ratios.

    python benchmarks/run.py CORPUS [CORPUS ...] [--runs 3] [--hipify-perl PATH] [--no-peers]
    python benchmarks/run.py --synthetic            # a generated corpus (benchmarks/synthetic.py)

Per corpus: rocmlint cold (`--no-cache`), warm (cache filled, nothing changed), after editing one
Python file, with peak memory of the process tree, two ways: RSS summed (pages a forked worker
shares with its parent count once per process) and PSS summed (each shared page split among its
sharers: the memory the run really occupies); then, where installed, ruff
(`--no-cache --select E,F`) and flake8 (`--select=F -j 2`) on the same Python files, torchfix on a
sample of them, and hipify-perl `-examine` on a sample of the same C/C++/CUDA files (samples are
extrapolated by bytes or lines, and marked `~`). Three figures close the table: C++ throughput
(one core, every ROC2xx rule, files that contain triggers) and Engine.check_bytes on a 2,000-line
Python file with hazards (the LSP's cost per edit), both in-process, then the same edit as a client
sees it: `rocmlint lsp` over stdio with debounce 0, didChange to publishDiagnostics. `/proc/loadavg`
is printed before and after: on a shared machine the load explains the spread.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

HERE = Path(__file__).resolve().parent
PY_SUFFIXES = {".py", ".pyi"}


@dataclass
class Row:
    corpus: str
    tool: str
    seconds: list[float] = field(default_factory=list)
    note: str = ""
    estimate: bool = False
    peak_mb: float | None = None  # RSS summed over the process tree
    peak_pss_mb: float | None = None  # PSS summed over it (None where /proc has no smaps_rollup)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


# ---------------------------------------------------------------------------------------------------
# Running and measuring a command


class Memory(NamedTuple):
    """Peak memory of one run, MB: RSS and PSS, each summed over the process tree."""

    rss_mb: float
    pss_mb: float | None


def _field_kb(path: Path, name: str) -> int | None:
    for line in path.read_text().splitlines():
        if line.startswith(name):
            return int(line.split()[1])
    return None


def _tree_memory_kb(pid: int) -> tuple[int, int | None]:
    """RSS and PSS of a process and all its descendants (pool workers count too); PSS is None where the kernel
    gives no /proc/PID/smaps_rollup."""
    rss, pss, stack = 0, 0, [pid]
    has_pss = True
    while stack:
        current = stack.pop()
        try:
            rss += _field_kb(Path(f"/proc/{current}/status"), "VmRSS:") or 0
            process_pss = _field_kb(Path(f"/proc/{current}/smaps_rollup"), "Pss:") if has_pss else None
            has_pss = process_pss is not None
            pss += process_pss or 0
            for task in Path(f"/proc/{current}/task").iterdir():
                stack.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return rss, pss if has_pss else None


def timed(command: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, Memory]:
    """Wall seconds and peak tree memory of one run; output is discarded."""
    peak_rss, peak_pss = [0], [0]
    has_pss = [True]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def sample() -> None:
        while process.poll() is None:
            rss, pss = _tree_memory_kb(process.pid)
            peak_rss[0] = max(peak_rss[0], rss)
            has_pss[0] = has_pss[0] and pss is not None
            peak_pss[0] = max(peak_pss[0], pss or 0)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    elapsed = time.perf_counter() - start
    sampler.join()
    if process.returncode not in (0, 1):
        raise RuntimeError(
            f"{' '.join(command[:3])} ... exited {process.returncode}: {stderr.decode(errors='replace')[-800:]}"
        )
    return elapsed, Memory(peak_rss[0] / 1024, peak_pss[0] / 1024 if has_pss[0] else None)


def repeat(
    row: Row, runs: int, run: Callable[[], tuple[float, Memory]], before: Callable[[], None] | None = None
) -> Row:
    for _ in range(runs):
        if before is not None:
            before()
        seconds, memory = run()
        row.seconds.append(seconds)
        row.peak_mb = max(row.peak_mb or 0.0, memory.rss_mb)
        if memory.pss_mb is not None:
            row.peak_pss_mb = max(row.peak_pss_mb or 0.0, memory.pss_mb)
    return row


# ---------------------------------------------------------------------------------------------------
# The files rocmlint checks (so every tool gets the same ones)


def corpus_files(root: Path) -> tuple[list[Path], list[Path]]:
    from rocmlint.config import ConfigResolver, Overrides
    from rocmlint.discovery import discover

    found = [c.path for c in discover([root], ConfigResolver(Overrides(), cwd=root), lambda message: None)]
    python = [p for p in found if p.suffix in PY_SUFFIXES]
    return python, [p for p in found if p.suffix not in PY_SUFFIXES]


def _size(paths: Sequence[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


def _lines(paths: Sequence[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in paths)


def _sample(paths: Sequence[Path], count: int, seed: int = 0) -> list[Path]:
    return sorted(random.Random(seed).sample(list(paths), min(count, len(paths))))


# ---------------------------------------------------------------------------------------------------
# rocmlint


def rocmlint_rows(
    name: str, root: Path, rocmlint: list[str], runs: int, cold_runs: int, jobs: int | None, touch: Path | None
) -> list[Row]:
    base = [*rocmlint, "check", "--exit-zero", "--quiet", "--statistics"]
    if jobs:
        base += ["--jobs", str(jobs)]
    cache = Path(tempfile.mkdtemp(prefix="rocmlint-bench-cache-"))
    env = {**os.environ, "ROCMLINT_CACHE_DIR": str(cache)}
    rows = [
        repeat(Row(name, "rocmlint cold (--no-cache)"), cold_runs, lambda: timed([*base, "--no-cache", "."], root, env))
    ]
    timed([*base, "."], root, env)  # fill the cache
    rows.append(
        repeat(Row(name, "rocmlint warm (cache, nothing changed)"), runs, lambda: timed([*base, "."], root, env))
    )
    if touch is not None:
        original = touch.read_bytes()
        counter = [0]

        def edit() -> None:
            counter[0] += 1
            touch.write_bytes(original + f"\n# rocmlint benchmark edit {counter[0]}\n".encode())

        try:
            row = repeat(
                Row(name, "rocmlint after editing one file"), runs, lambda: timed([*base, "."], root, env), edit
            )
            row.note = str(touch.relative_to(root))
            rows.append(row)
        finally:
            touch.write_bytes(original)
    shutil.rmtree(cache, ignore_errors=True)
    return rows


def pick_touch_file(python: Sequence[Path]) -> Path | None:
    """A mid-sized Python file the prefilter lets through (so the edit costs a real re-check)."""
    from rocmlint.config import Settings
    from rocmlint.engine import prefilter_for

    enabled = Settings(root=Path.cwd()).enabled_codes
    passing = [p for p in python if prefilter_for("python", enabled).rules_for(p.read_bytes())]
    mid_sized = [p for p in passing if 5_000 < p.stat().st_size < 40_000] or passing
    return sorted(mid_sized)[len(mid_sized) // 2] if mid_sized else None


# ---------------------------------------------------------------------------------------------------
# Peers


def _tool(name: str) -> str | None:
    """A peer installed next to this Python (the same virtualenv) or on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


def peer_rows(name: str, root: Path, python: list[Path], native: list[Path], args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    rel_py = [str(p.relative_to(root)) for p in python]
    ruff = _tool("ruff")
    if ruff and rel_py:
        command = [ruff, "check", "--no-cache", "--select", "E,F", "--quiet", "--exit-zero", *rel_py]
        rows.append(repeat(Row(name, "ruff --no-cache --select E,F"), args.runs, lambda: timed(command, root)))
    flake8 = str(args.flake8) if args.flake8 else _tool("flake8")
    if flake8 and rel_py:
        command = [flake8, "--select=F", "-j", "2", "--exit-zero", *rel_py]
        row = repeat(Row(name, "flake8 --select=F -j 2"), args.peer_runs, lambda: timed(command, root))
        # Plugins run whatever --select says: torchfix installed next to flake8 makes it ~10x slower.
        version = subprocess.run([flake8, "--version"], capture_output=True, text=True).stdout
        row.note = "torchfix plugin loaded" if "torchfix" in version.lower() else "no plugins"
        rows.append(row)
    torchfix = _tool("torchfix")
    if torchfix and python:
        sample = _sample(python, args.torchfix_sample)
        scale = _size(python) / max(1, _size(sample))
        command = [torchfix, *[str(p.relative_to(root)) for p in sample]]
        row = repeat(
            Row(name, f"torchfix ({len(sample)}-file sample, scaled by bytes)"),
            args.peer_runs,
            lambda: timed(command, root),
        )
        row.seconds = [s * scale for s in row.seconds]
        row.estimate = True
        rows.append(row)
    if args.hipify_perl and native:
        sample = _sample([p for p in native if p.suffix in {".cu", ".cuh"}] or native, args.hipify_sample)
        scale = _lines(native) / max(1, _lines(sample))
        command = ["perl", str(args.hipify_perl), "-examine", *[str(p.relative_to(root)) for p in sample]]
        row = repeat(
            Row(name, f"hipify-perl -examine ({len(sample)}-file sample, scaled by lines)"),
            args.peer_runs,
            lambda: timed(command, root),
        )
        row.seconds = [s * scale for s in row.seconds]
        row.estimate = True
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------------
# In-process figures


def cuda_throughput(native: Sequence[Path]) -> tuple[float, int, int]:
    """Lines per second, one core, every ROC2xx rule, over the files whose bytes contain a trigger."""
    from rocmlint.config import Overrides, Selection, Settings
    from rocmlint.engine import Engine, prefilter_for

    settings = Overrides(select=("ROC2",)).apply(Settings(root=Path.cwd()))
    assert settings.command_line == Selection(("ROC2",), (), ())
    prefilter = prefilter_for("cuda", settings.enabled_codes)
    files = [(str(p), p.read_bytes()) for p in native]
    files = [(p, data) for p, data in files if prefilter.rules_for(data)]
    engine = Engine()
    lines = sum(data.count(b"\n") for _, data in files)
    start = time.process_time()
    for path, data in files:
        engine.check_bytes(path, data, settings)
    elapsed = time.process_time() - start
    return (lines / elapsed if elapsed else float("inf")), lines, len(files)


def hazard_file() -> bytes:
    """A 2,000-line Python file: generated filler with a hazard every few lines (what the LSP figures edit)."""
    sys.path.insert(0, str(HERE))
    import synthetic  # type: ignore[import-not-found]

    hazards = [
        'import torch\nm = torch.compile(m, mode="reduce-overhead")\n',
        "torch.backends.cuda.matmul.allow_tf32 = True\n",
        'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"\n',
    ]
    text = "import os\nimport torch\n" + synthetic._python_filler(random.Random(1), 0, 8)
    lines = text.splitlines(keepends=True)
    while len(lines) < 2000:
        lines += synthetic._python_filler(random.Random(len(lines)), len(lines), 4).splitlines(keepends=True)
        lines += hazards[len(lines) % len(hazards)].splitlines(keepends=True)
    return "".join(lines[:2000]).encode()


def lsp_edit_ms(runs: int) -> float:
    """Median ms of Engine.check_bytes on a 2,000-line Python file with hazards, engine warm."""
    from rocmlint.config import Settings
    from rocmlint.engine import Engine

    data = hazard_file()
    engine, settings = Engine(), Settings(root=Path.cwd())
    engine.check_bytes("edited.py", data, settings)  # imports and caches, as a running server has
    times = []
    for i in range(runs):
        edited = data + f"\nx_{i} = 1\n".encode()
        start = time.perf_counter()
        engine.check_bytes("edited.py", edited, settings)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


class LspClient:
    """Just enough of a language client: JSON-RPC with Content-Length framing over a server's stdio."""

    def __init__(self, command: Sequence[str], cwd: Path, stderr: IO[bytes], timeout: float = 300) -> None:
        self.stderr = stderr
        self.process = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr
        )
        # A server that hangs would block a read forever: killing it ends the read instead.
        self.watchdog = threading.Timer(timeout, self.process.kill)
        self.watchdog.daemon = True
        self.watchdog.start()
        self.last_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.last_id += 1
        request_id = self.last_id
        self.send({"id": request_id, "method": method, "params": params})
        return self.wait_for(lambda message: message.get("id") == request_id and "method" not in message).get("result")

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = None
        while (header := self.process.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = header.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if header == b"" or length is None:
            self.stderr.seek(0)
            raise RuntimeError(f"the language server stopped: {self.stderr.read().decode(errors='replace')[-800:]}")
        message: dict[str, Any] = json.loads(self.process.stdout.read(length))
        return message

    def wait_for(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The next message `wanted` accepts; the server's own requests on the way get a null result."""
        while not wanted(message := self.receive()):
            if "id" in message and "method" in message:
                self.send({"id": message["id"], "result": None})
        return message

    def close(self) -> None:
        self.request("shutdown")
        self.notify("exit")
        self.process.wait(timeout=30)
        self.watchdog.cancel()


def lsp_stdio_ms(rocmlint: list[str], runs: int) -> float:
    """Median ms from didChange to its publishDiagnostics, as a client sees it, `rocmlint lsp` with debounce 0."""
    data = hazard_file()
    with tempfile.TemporaryDirectory(prefix="rocmlint-bench-lsp-") as folder, tempfile.TemporaryFile() as stderr:
        root = Path(folder)
        (root / ".git").mkdir()  # bounds the configuration search to this workspace
        path = root / "edited.py"
        path.write_bytes(data)
        uri, text = path.as_uri(), data.decode()
        client = LspClient([*rocmlint, "lsp"], root, stderr)
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": {"debounce": 0},
            },
        )
        client.notify("initialized", {})

        def published(version: int) -> int:
            """The number of diagnostics published for `version` of the document."""
            message = client.wait_for(
                lambda m: (
                    m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri
                    and m["params"].get("version") == version
                )
            )
            return len(message["params"]["diagnostics"])

        document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        client.notify("textDocument/didOpen", {"textDocument": document})
        expected = published(1)  # the first lint imports and caches, as in an editor before the first keystroke
        times = []
        for version in range(2, runs + 2):
            # Every other change adds a line that triggers nothing; the next one takes it out again.
            edited = text + f"\nx_{version} = 1\n" if version % 2 == 0 else text
            start = time.perf_counter()
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": edited}]},
            )
            count = published(version)
            times.append((time.perf_counter() - start) * 1000)
            if count != expected or not expected:
                raise RuntimeError(f"version {version}: {count} diagnostics published, expected {expected}")
        client.close()
    return statistics.median(times)


# ---------------------------------------------------------------------------------------------------
# Output


def render(rows: list[Row]) -> str:
    out = [
        "| corpus | command | median s | runs | vs rocmlint cold | peak RSS MB | peak PSS MB | note |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    cold = {r.corpus: r.median for r in rows if r.tool.startswith("rocmlint cold")}
    for r in rows:
        ratio = r.median / cold[r.corpus] if cold.get(r.corpus) else float("nan")
        median = f"{'~' if r.estimate else ''}{r.median:.2f}"
        rss = f"{r.peak_mb:.0f}" if r.peak_mb else ""
        pss = f"{r.peak_pss_mb:.0f}" if r.peak_pss_mb else ""
        out.append(f"| {r.corpus} | {r.tool} | {median} | {len(r.seconds)} | {ratio:.2f}x | {rss} | {pss} | {r.note} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", type=Path)
    parser.add_argument("--synthetic", action="store_true", help="also benchmark a generated corpus (scale 10)")
    parser.add_argument("--runs", type=int, default=3, help="runs per rocmlint/ruff measurement (median)")
    parser.add_argument("--cold-runs", type=int, help="runs of the cold rocmlint measurement (default: --runs)")
    parser.add_argument("--peer-runs", type=int, default=1, help="runs per slow peer (flake8, torchfix, hipify-perl)")
    parser.add_argument("--jobs", type=int, help="rocmlint --jobs (default: all cores)")
    parser.add_argument("--rocmlint", default=f"{sys.executable} -m rocmlint", help="how to run rocmlint")
    parser.add_argument(
        "--hipify-perl", type=Path, help="path to hipify-perl (from github:ROCm/HIPIFY bin/hipify-perl)"
    )
    parser.add_argument("--hipify-sample", type=int, default=25)
    parser.add_argument("--torchfix-sample", type=int, default=200)
    parser.add_argument(
        "--flake8", type=Path, help="flake8 to run (default: beside this Python, else PATH); use one without plugins"
    )
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args(argv)
    corpora = [p.resolve() for p in args.corpora]
    temporary = None
    if args.synthetic or not corpora:
        sys.path.insert(0, str(HERE))
        import synthetic  # type: ignore[import-not-found]

        temporary = Path(tempfile.mkdtemp(prefix="rocmlint-synthetic-"))
        synthetic.generate(temporary, scale=10)
        corpora.append(temporary)
    print(f"loadavg before: {loadavg()}  (cores: {os.cpu_count()})")
    rows: list[Row] = []
    extra: list[str] = []
    for root in corpora:
        name = "synthetic" if root == temporary else root.name
        python, native = corpus_files(root)
        print(
            f"{name}: {len(python)} Python files ({_size(python) / 1e6:.1f} MB), {len(native)} C/C++/CUDA ({_size(native) / 1e6:.1f} MB)",
            flush=True,
        )
        touch = pick_touch_file(python)
        rows += rocmlint_rows(
            name, root, args.rocmlint.split(), args.runs, args.cold_runs or args.runs, args.jobs, touch
        )
        if not args.no_peers:
            rows += peer_rows(name, root, python, native, args)
        if native:
            rate, lines, files = cuda_throughput(native)
            extra.append(
                f"{name}: C++ throughput, one core, ROC2xx, {files} files with triggers ({lines:,} lines): {rate:,.0f} lines/s"
            )
    extra.append(
        f"Engine.check_bytes on a 2,000-line Python file with hazards (LSP edit): {lsp_edit_ms(7):.0f} ms median of 7"
    )
    extra.append(
        "LSP over stdio, didChange to publishDiagnostics, 2,000-line Python file, debounce 0: "
        f"{lsp_stdio_ms(args.rocmlint.split(), 7):.0f} ms median of 7"
    )
    print()
    print(render(rows))
    print()
    for line in extra:
        print(f"- {line}")
    print(f"\nloadavg after: {loadavg()}")
    if temporary is not None:
        shutil.rmtree(temporary, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
