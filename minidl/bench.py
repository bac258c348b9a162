"""`python -m minidl.bench [flags]`: runs benchmarks/bench_backends.py of this source checkout.

The benchmark runners live in benchmarks/ (they start PyTorch and child processes, which the
library itself never does); this entry point only keeps the short command working.
"""

import os
import runpy
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "benchmarks", "bench_backends.py")


def main():
    if not os.path.isfile(SCRIPT):
        sys.exit(f"python -m minidl.bench runs {SCRIPT}, which this installation lacks: run it "
                 "from a source checkout of minidl (benchmarks/ is not part of the package)")
    sys.argv[0] = SCRIPT
    runpy.run_path(SCRIPT, run_name="__main__")


if __name__ == "__main__":
    main()
