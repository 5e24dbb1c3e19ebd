"""Scaling (`make bench`): lint, cold build, one-file rebuild and cold run of synthetic
projects of 1,000, 2,500, 5,000 and 10,000 contracts, and the exponent fitted to each.

Every step is a whole `prosec` process, timed in CPU seconds (user + system of the
process and the render workers it waited for), so other engineers' load on the machine
does not bend the curve. `PROSEC_BENCH_SCALE=N` caps the sizes at N for a quick run
(`PROSEC_BENCH_SCALE=2500 make bench`); the aims are judged on the sizes measured.
`PROSEC_BENCH_STEPS=build` times only the cold build and the one-file rebuild (whose
manifest must equal a `--no-cache` build's), for the build aims alone.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..conftest import prosec_bin
from .aims import exponent, record
from .synth import generate

SIZES = [1_000, 2_500, 5_000, 10_000]
SCALE = int(os.environ.get("PROSEC_BENCH_SCALE", str(SIZES[-1])))
# `PROSEC_BENCH_STEPS=build`: only the cold build and the one-file rebuild (a cold run of
# 10,000 nodes takes most of an hour on a shared machine)
BUILD_ONLY = os.environ.get("PROSEC_BENCH_STEPS", "all") == "build"

RENDER = """
import json


def render(request):
    (request.output / "out.json").write_text(json.dumps({"node": request.node}))
    request.attest_file.write_text(json.dumps({"attested": list(request.attested)}))
"""


@dataclass(frozen=True)
class Step:
    cpu: float
    wall: float
    code: int
    out: str


def step(args: list[str], env: dict[str, str]) -> Step:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Step(cpu=cpu, wall=wall, code=done.returncode, out=done.stdout + done.stderr)


def project(root: Path, count: int) -> Path:
    generate(count, root)
    (root / "bench_render.py").write_text(RENDER, encoding="utf-8")
    (root / "prose.toml").write_text(
        '[render.default]\nkind = "python"\ncallable = "bench_render:render"\n', encoding="utf-8"
    )
    return root


def measure(root: Path, cache: Path) -> dict[str, float]:
    env = {**os.environ, "PROSEC_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    prosec = prosec_bin()
    if not BUILD_ONLY:
        lint = step([prosec, "lint", str(root)], env)
        assert lint.code == 0, lint.out[-2000:]
        relint = step([prosec, "lint", str(root)], env)
        assert relint.out == lint.out  # a re-lint says exactly what the cold lint said
    build = step([prosec, "build", str(root), "--offline-tools"], env)
    assert build.code == 0 and "full build" in build.out, build.out[-2000:]
    manifest = (root / "dist" / "manifest.next.json").read_bytes()
    changed = sorted((root / "src").iterdir())[1]
    changed.write_text(changed.read_text(encoding="utf-8") + "\nOne more sentence.\n")
    rebuild = step([prosec, "build", str(root), "--offline-tools"], env)
    assert rebuild.code == 0, rebuild.out[-2000:]
    # the same sources from scratch give the same bytes as the incremental rebuild
    incremental = (root / "dist" / "manifest.next.json").read_bytes()
    shutil.rmtree(root / "dist")
    cold = step([prosec, "build", str(root), "--offline-tools", "--no-cache"], env)
    assert cold.code == 0 and (root / "dist" / "manifest.next.json").read_bytes() == incremental
    nodes = len(json.loads(manifest)["topology"]["nodes"])
    if BUILD_ONLY:
        return {"build": build.cpu, "rebuild": rebuild.cpu, "nodes": nodes}
    activate = step([prosec, "activate", str(root)], env)
    assert activate.code == 0, activate.out[-2000:]
    run = step([prosec, "run", str(root), "--json"], env)
    assert run.code == 0, run.out[-2000:]
    unchanged = step([prosec, "run", str(root), "--json"], env)
    assert unchanged.code == 0, unchanged.out[-2000:]
    return {
        "lint": lint.cpu,
        "relint": relint.cpu,
        "build": build.cpu,
        "rebuild": rebuild.cpu,
        "run": run.cpu,
        "run_wall": run.wall,
        "unchanged_wall": unchanged.wall,
        "nodes": nodes,
    }


@pytest.mark.slow
def test_scaling(tmp_path: Path) -> None:
    sizes = [n for n in SIZES if n <= SCALE] or [SCALE]
    rows = {}
    for count in sizes:
        rows[count] = measure(project(tmp_path / str(count), count), tmp_path / f"cache-{count}")
        row = rows[count]
        if BUILD_ONLY:
            print(
                f"\n[bench] {count:>6,} contracts ({int(row['nodes']):,} nodes), CPU s: cold "
                f"build {row['build']:.2f}, one-file rebuild {row['rebuild']:.2f} "
                f"({row['rebuild'] / row['build']:.3f}× cold)",
                end="",
            )
            shutil.rmtree(tmp_path / str(count))
            continue
        print(
            f"\n[bench] {count:>6,} contracts ({int(row['nodes']):,} nodes), CPU s: "
            f"lint {row['lint']:.2f}, re-lint {row['relint']:.2f}, cold build "
            f"{row['build']:.2f}, one-file rebuild {row['rebuild']:.2f}, cold run "
            f"{row['run']:.2f} ({row['run_wall']:.2f} wall), unchanged run "
            f"{row['unchanged_wall']:.2f} wall",
            end="",
        )
        shutil.rmtree(tmp_path / str(count))
    largest = rows[sizes[-1]]
    measured = ("build", "rebuild") if BUILD_ONLY else ("lint", "build", "rebuild", "run")
    if len(sizes) > 1:
        fitted = {key: exponent(sizes, [rows[n][key] for n in sizes]) for key in measured}
        span = f"{sizes[0]:,} → {sizes[-1]:,}"
        print(
            f"\n[bench] fitted exponents ({span}): "
            + ", ".join(f"{key} N^{value:.2f}" for key, value in fitted.items()),
            end="",
        )
        for key in ("lint", "build", "run"):
            if key in fitted:
                record(f"1-{key}-exponent", fitted[key], f"measured {span}")
    note = f"at {sizes[-1]:,} contracts"
    record("2-rebuild-ratio", largest["rebuild"] / largest["build"], note)
    if BUILD_ONLY:
        return
    record("2-relint-ratio", largest["relint"] / largest["lint"], note)
    record(
        "4-unchanged-run",
        largest["unchanged_wall"],
        f"{int(largest['nodes']):,} nodes from {sizes[-1]:,} contracts, whole process, wall",
    )
