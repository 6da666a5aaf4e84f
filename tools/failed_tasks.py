#!/usr/bin/env python3
"""Print a short digest of why a molecule scenario failed, from its log.

    tools/failed_tasks.py .cache/molecule-default.log

The digest names the failed molecule action and the last task that failed for
real (a failure followed by "...ignoring" is not one), with its message cut
to a few hundred characters, so that the end of `make test`'s output says
what went wrong even when only its last lines are kept.
"""
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ACTION = re.compile(r"➜ (\w+): Executed: Failed")
FAILURE = re.compile(r"^(fatal|failed): \[|^ERROR!|FAILED! =>|Idempotence test failed")
WIDTH = 400


def logical_lines(text):
    """Undo molecule's framing ("  │ ") and its wrapping of long lines."""
    lines = []
    for raw in ANSI.sub("", text).splitlines():
        framed = raw.startswith("  │ ")
        line = raw[4:] if framed else raw
        if framed and line.startswith("  ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def digest(text):
    lines = logical_lines(text)
    out = ["failed action: %s" % a for a in ACTION.findall(text)]
    task, last = None, None
    for i, line in enumerate(lines):
        if line.startswith("TASK ["):
            task = line.rstrip(" *")
        elif FAILURE.search(line):
            block = [line]
            for more in lines[i + 1:i + 40]:
                if not more.strip() or FAILURE.search(more) or more.startswith("TASK ["):
                    break
                block.append(more.strip())
            if not any("...ignoring" in b for b in lines[i + 1:i + len(block) + 2]):
                last = (task, " ".join(block))
    if last:
        if last[0]:
            out.append(last[0])
        msg = last[1].strip()
        out.append(msg if len(msg) <= WIDTH else msg[:WIDTH] + " ...")
    return out


def main(paths):
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in digest(handle.read()):
                print("    " + line)


if __name__ == "__main__":
    main(sys.argv[1:])
