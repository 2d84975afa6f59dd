#!/usr/bin/env python3
"""slowest-tests.py JUNIT [N]: the N (default 20) longest tests of a ctest run (`ctest
--output-junit`, as scripts/test.sh writes it) and the sum of every test's time: where CI's
minutes go (doc/testing.md, "CI's time"). A test that claims both cores (PROCESSORS 2) runs alone
under ctest -j2, so its seconds count twice against the run's wall time: the list says which."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: slowest-tests.py JUNIT [N]")
    junit, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 20
    cases = [(float(c.get("time", 0)), c.get("name")) for c in ET.parse(junit).getroot().iter("testcase")]
    # PROCESSORS from ctest itself, run in the junit file's build directory.
    build = junit.rsplit("/", 1)[0] if "/" in junit else "."
    both = set()
    shown = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True)
    if shown.returncode == 0:
        for test in json.loads(shown.stdout)["tests"]:
            props = {p["name"]: p["value"] for p in test.get("properties", [])}
            if props.get("PROCESSORS", 1) >= 2:
                both.add(test["name"])
    total = sum(t for t, _ in cases)
    alone = sum(t for t, name in cases if name in both)
    print(f"slowest-tests: {len(cases)} tests, {total:.0f} s of test time, {alone:.0f} s of it alone on both cores")
    for seconds, name in sorted(cases, reverse=True)[:n]:
        print(f"  {seconds:7.1f} s  {name}{'  (both cores)' if name in both else ''}")


if __name__ == "__main__":
    main()
