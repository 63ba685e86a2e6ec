"""Entry point for spark-submit: ``spark-submit spark_fuzz/main.py --profile v5.0 --runs 100000 --out DIR``.

The master comes from spark-submit (``--master``); everything else is the `popverify fuzz`
command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from popverify.cli import main
    args = sys.argv[1:]
    if "--json" in args:
        # spark-submit's PythonRunner merges the driver's stderr into stdout: the progress bar
        # would break the JSON
        args.append("--no-progress")
    raise SystemExit(main(["fuzz", "--master", "", *args]))
