#!/usr/bin/env python3
"""sql/reference.md's examples stay true.

The page marks a setup block (<!-- example-setup -->, a ```sql block) and examples (<!-- example -->,
a ```sql block, followed by a ```text block with its output). They run in the page's order as one
sqlite3 session from the repository root (the setup first), and each example's output must be the
text shown under it, exactly (trailing spaces aside). Prints "ok - ..." / "not ok - ..." per example
and "N passed, N failed".

    python3 tests/reference_test.py           # the test
    python3 tests/reference_test.py --print   # each example's actual output, to paste into the page

Environment: RDT_EXT (the extension without suffix, default ./dist/rdt, replaces the setup's
`.load ./dist/rdt`), SQLITE3 (the shell, default sqlite3).
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "sql", "reference.md")
MARK = "~~~ rdt reference example %d ~~~"


def blocks(text):
    """(setup SQL, [(heading, SQL, documented output or None)]) in the page's order."""
    lines = text.split("\n")
    setup, examples, heading = None, [], ""
    i = 0

    def fenced(at):
        """The fenced block starting at or after line `at` (skipping blank lines): (info, body, next line)."""
        while at < len(lines) and not lines[at].strip():
            at += 1
        if at >= len(lines) or not lines[at].startswith("```"):
            return None, None, at
        info, body = lines[at][3:].strip(), []
        at += 1
        while at < len(lines) and lines[at] != "```":
            body.append(lines[at])
            at += 1
        return info, "\n".join(body), at + 1

    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.strip() in ("<!-- example-setup -->", "<!-- example -->"):
            info, sql, i = fenced(i + 1)
            if info != "sql":
                raise SystemExit("%s: a marked example must be a ```sql block (under %r)" % (PAGE, heading))
            if line.strip() == "<!-- example-setup -->":
                setup = sql
                continue
            info, out, after = fenced(i)
            if info == "text":
                examples.append((heading, sql, out))
                i = after
            else:
                examples.append((heading, sql, None))
            continue
        i += 1
    if setup is None:
        raise SystemExit("%s: no <!-- example-setup --> block" % PAGE)
    return setup, examples


def run(setup, examples, workdir):
    ext = os.environ.get("RDT_EXT", "./dist/rdt")
    if not os.path.isabs(ext):
        ext = os.path.join(ROOT, ext)
    script = [re.sub(r"^\.load \./dist/rdt$", ".load " + ext, setup, flags=re.M)]
    for k, (_, sql, _) in enumerate(examples):
        script.append(".print '%s'" % (MARK % k))
        script.append(sql)
    script.append(".print '%s'" % (MARK % len(examples)))
    shell = os.environ.get("SQLITE3", "sqlite3")
    done = subprocess.run([shell, "-batch", os.path.join(workdir, "reference.db")], input="\n".join(script) + "\n",
                          capture_output=True, text=True, cwd=ROOT)
    outputs, rest = [], done.stdout
    head, _, rest = rest.partition(MARK % 0 + "\n")
    for k in range(len(examples)):
        part, _, rest = rest.partition(MARK % (k + 1) + "\n")
        outputs.append(part)
    return head, outputs, done


def norm(text):
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


def main():
    import tempfile
    setup, examples = blocks(open(PAGE, encoding="utf-8").read())
    with tempfile.TemporaryDirectory() as workdir:
        head, outputs, done = run(setup, examples, workdir)
    if "--print" in sys.argv:
        for (heading, _, _), out in zip(examples, outputs):
            print("== %s\n%s" % (heading, out))
        if done.stderr:
            print("stderr:\n" + done.stderr)
        return 0
    passed = failed = 0

    def report(good, name, detail=""):
        nonlocal passed, failed
        if good:
            passed += 1
            print("ok - " + name)
        else:
            failed += 1
            if detail:
                print("\n".join("#   " + line for line in detail.split("\n")))
            print("not ok - " + name)

    report(done.returncode == 0 and not done.stderr, "sql/reference.md: the setup and every example run without an error",
           done.stderr.strip()[-2000:])
    report(len(examples) >= 5, "sql/reference.md marks its examples (%d found)" % len(examples))
    for k, ((heading, _, documented), out) in enumerate(zip(examples, outputs)):
        name = "sql/reference.md example %d (%s): its output is the one shown" % (k + 1, heading)
        if documented is None:
            report(False, name, "no ```text block with the output follows the example")
        else:
            report(norm(out) == norm(documented), name,
                   "shown:\n%s\nactual:\n%s" % (norm(documented), norm(out)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
