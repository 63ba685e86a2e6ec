"""The campaign runs unchanged under spark-submit on a master with executors of their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from spark_fuzz.session import is_local

ROOT = Path(__file__).resolve().parents[2]


def test_which_masters_run_tasks_in_the_driver() -> None:
    assert is_local("local") and is_local("local[2]") and is_local("local[*]") and is_local("local[2,3]")
    assert not is_local("local-cluster[2,1,1024]") and not is_local("spark://host:7077") and not is_local("yarn")


def test_spark_submit_keeps_its_master_and_ships_the_code_to_the_executors(tmp_path: Path) -> None:
    # local-cluster starts a standalone master, two workers and executor JVMs whose Python
    # workers do not see the driver's sys.path: the campaign must use spark-submit's master
    # (not its own local default) and ship popverify to them.
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    out = tmp_path / "campaign"
    proc = subprocess.run(
        [str(bin_dir / "spark-submit"), "--master", "local-cluster[2,1,1024]", "--conf", "spark.ui.enabled=false",
         str(ROOT / "spark_fuzz" / "main.py"), "--profile", "v5.5", "--mode", "pop", "--runs", "16",
         "--steps", "200", "--mutant", "commit-skips-offset", "--out", str(out), "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.stdout.lstrip().startswith("{"), proc.stdout[-2000:] + proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["master"] == "local-cluster[2,1,1024]"
    rows = pq.read_table(out / "runs").to_pylist()
    assert sorted(r["seed"] for r in rows) == list(range(16))
    # the broken model's OFF-1 is found, shrunk and unexpected on v5.5: exit 1
    off1 = [v for v in summary["violations"] if v["property"] == "OFF-1"]
    assert off1 and off1[0]["unexpected"] and Path(off1[0]["trace"]).exists()
    assert proc.returncode == 1
