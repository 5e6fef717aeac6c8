"""Structural fuzzing of stored models, for as long as asked: batches of mutants
(``fuzz/model_mutants.py``) each in a child process, seed after seed, until a batch crashes
or misbehaves or the time is up.

    python fuzz/fuzz_models.py --seconds 600 [--families xgboost,sklearn,keras] [--batch 2000]

A crash (a signal) keeps the mutant that caused it in ``crash-<seed>.json`` (its seed
model, the change and its bytes, hex); a mutant that raised anything but a SqlmlError is
printed from the batch's report.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--families", default="xgboost,sklearn,keras")
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--first-seed", type=int, default=1)
    args = parser.parse_args()
    end, seed, total = time.monotonic() + args.seconds, args.first_seed, 0
    while time.monotonic() < end:
        last = Path(f"last-mutant-{seed}.json")
        done = subprocess.run(
            [
                *(sys.executable, str(HERE / "model_mutants.py"), "--seed", str(seed)),
                *("--mutants", str(args.batch), "--families", args.families, "--last", str(last)),
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            shutil.move(last, f"crash-{seed}.json")
            print(f"seed {seed}: exit status {done.returncode}; the mutant: crash-{seed}.json")
            print(done.stderr[-2000:])
            return 1
        last.unlink(missing_ok=True)
        report = json.loads(done.stdout.splitlines()[-1])
        total += sum(report["outcomes"].values())
        print(f"seed {seed}: {report['outcomes']} ({total:,} mutants so far)", flush=True)
        if report["unexpected"]:
            print(json.dumps(report["unexpected"], indent=2))
            return 1
        seed += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
