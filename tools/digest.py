"""Short digests of `make test`'s logs, for the end of its output (CI may
keep only the last lines).

    tools/digest.py failed LOG       why a molecule scenario failed: the failed
                                     action and the last task that failed for
                                     real (not one followed by "...ignoring"),
                                     its message cut to a few hundred characters
    tools/digest.py not-run LOG...   each "NOT RUN HERE: ..." message once: what
                                     can never run on these machines, by name
    tools/digest.py steps LOG        the seconds of each molecule step (the
                                     step lines carry "@EPOCH ", see
                                     tools/test.sh)
"""
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ACTION = re.compile(r"➜ (\w+): Executed: Failed")
FAILURE = re.compile(r"^(fatal|failed): \[|^ERROR!|FAILED! =>|Idempotence test failed")
NOT_RUN = re.compile(r"NOT RUN HERE: [^\"']*")
STEP = re.compile(r"^@([0-9]+) .*➜ (\w+): (Executing|Executed)")
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


def not_run(text):
    return [m.group(0).strip() for line in logical_lines(text) for m in NOT_RUN.finditer(line)]


def steps(text):
    started, out = {}, []
    for line in ANSI.sub("", text).splitlines():
        m = STEP.match(line)
        if not m:
            continue
        when, step, what = int(m.group(1)), m.group(2), m.group(3)
        if what == "Executing":
            started[step] = when
        elif step in started:
            out.append("%s %d s" % (step, when - started.pop(step)))
    return [", ".join(out)] if out else []


def main(mode, paths):
    seen = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        for line in {"failed": digest, "not-run": not_run, "steps": steps}[mode](text):
            if line not in seen:
                seen.append(line)
                print("    " + line if mode == "failed" else line)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("failed", "not-run", "steps"):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
