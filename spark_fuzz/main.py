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
    raise SystemExit(main(["fuzz", "--master", "", *sys.argv[1:]]))
