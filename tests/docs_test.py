#!/usr/bin/env python3
"""The README and docs/*.md stay true: their code runs and their links hold.

    python3 tests/docs_test.py                 # README.md and docs/*.md (tests/docs_test.sh runs this)
    python3 tests/docs_test.py docs/guide.md   # one page (the links of every page are still checked)

What it checks, each check printed as "ok - ..." or "not ok - ...", then "N passed, N failed[, N skipped]":

1. Every fenced code block of a page names its language (```sql, ```sh, ```text, ...).
2. Every ```sql, ```sh (```bash), ```python and ```js block of a page runs, in the page's order, as
   one bash script in a scratch directory laid out like the repository (dist/rdt.so, tests/data,
   examples, python/, npm/), with TMPDIR inside the scratch directory (so `mktemp -d` stays in it):
   - sh blocks run as they are (bash, `set -eo pipefail`), so a variable one sets is seen by the next;
   - sql blocks run in the page's SQL session: `sqlite3 <page>.db` unless the page names another with
     a line `<!-- session: sqlite3 "$scratch/clinic.db" -->` (it holds for the sql blocks after it).
     Each block is its own run of that command (the database file keeps the state; shell parameters
     and `.mode` do not carry over), after `.bail on` and, unless the block loads it itself,
     `.load ./dist/rdt`;
   - python blocks run with /usr/bin/python3 (its sqlite3 module can load extensions),
     PYTHONPATH=python; js blocks with node and better-sqlite3 (tests/npm_deps.sh), else a labelled skip.
   A block that cannot run (a placeholder, a path of the reader's, a command that is the suite itself)
   is marked on the line just before its fence with `<!-- not run: <the reason> -->`; it is reported as
   a labelled skip with that reason. A failing block fails, and so does every block after it on that
   page ("not reached").
   Blocks of other languages (```text, ```c, ```json) are output or fragments, not run.
3. Some pages' output is checked line by line (PAGE_EXPECTATIONS below: the guide's workflow, the
   README's), and no file holding a secret key is left in the scratch checkout.
4. Every relative link and image of every tracked Markdown file reaches a file, and an #anchor
   reaches a heading of that file (GitHub's slugs) or an <a id>/<a name>. Links to a page that
   another piece of work is writing (PENDING_PAGES) are a labelled skip while the page is absent.
5. Every rdt_*/dp_* name a page calls (`name(`) is a function or module of the extension; a name in
   backticks is one of them or an identifier of the C sources (a helper, a table the user creates).
6. The checker itself: a fixture with a broken link, a broken anchor, a failing sql block, a failing
   sh block and an unlabelled fence is rejected on each, and a good fixture passes.

Environment: RDT_EXT (the extension without suffix, default ./dist/rdt), RDT_SANITIZE=1 (an ASan
build: the ASan runtime is preloaded into sqlite3, python and node), NODE_PATH (build/node is added).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_KINDS = {"sql": "sql", "sh": "sh", "bash": "sh", "python": "python", "js": "node"}
# Pages another piece of work writes; a link to one is a labelled skip until the file exists.
PENDING_PAGES = {}
# Pages whose blocks another harness runs, with the environment they need (a venv, a staged install).
OWN_HARNESS = {"docs/install.md": "tests/install_docs_test.sh"}
BLOCK_TIMEOUT = int(os.environ.get("RDT_DOCS_TIMEOUT", "600"))

passed = failed = skipped = 0


def report(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - " + name)
    else:
        failed += 1
        print("not ok - " + name)
        if detail:
            print("#   " + detail.rstrip().replace("\n", "\n#   "))


def skip(name, reason):
    global skipped
    skipped += 1
    print("ok - %s # SKIP %s" % (name, reason))


# ---- Markdown ---------------------------------------------------------------------------------

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)(.*)$")
NOT_RUN = re.compile(r"^<!-- not run: (.+?) -->$")
SESSION = re.compile(r"^<!-- session: (.+?) -->$")


def parse(text):
    """(blocks, prose): blocks are dicts (line, lang, body, not_run, session); prose is the text
    outside fences, line by line (None for lines inside a fence)."""
    lines = text.split("\n")
    blocks, prose = [], []
    session = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if not m:
            s = SESSION.match(line.strip())
            if s:
                session = s.group(1)
            prose.append(line)
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        prev = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        nr = NOT_RUN.match(prev)
        body = []
        start = i + 1
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and lines[i].strip().strip(fence[0]) == ""):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        blocks.append({"line": start, "lang": lang, "body": "\n".join(body),
                       "not_run": nr.group(1) if nr else None, "session": session})
        prose.extend([None] * (i - start + 2))
        i += 1
    return blocks, prose


def slug_of(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        _, prose = parse(open(path, encoding="utf-8").read())
        seen, out = {}, set()
        for line in prose:
            if line is None:
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug_of(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else "%s-%d" % (s, n))
            for a in re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line):
                out.add(a)
        cache[path] = out
    return cache[path]


def links(path):
    """(line number, target) of every link, image and link definition outside code."""
    _, prose = parse(open(path, encoding="utf-8").read())
    out = []
    for n, line in enumerate(prose, 1):
        if line is None:
            continue
        line = re.sub(r"(`+)(?:(?!\1).)+?\1", "", line)  # inline code
        for t in re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", line):
            out.append((n, t))
        m = re.match(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)", line)
        if m:
            out.append((n, m.group(1)))
    return out


def check_links(files, root):
    """One check per file: its broken relative links; pending pages are skips."""
    for f in files:
        path = os.path.join(root, f)
        bad, pending = [], set()
        for n, target in links(path):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                continue  # http:, https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            rel = os.path.relpath(dest, root)
            if not os.path.exists(dest):
                if rel in PENDING_PAGES:
                    pending.add(rel)
                    continue
                bad.append("line %d: %s (no such file)" % (n, target))
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append("line %d: %s (no heading with that anchor in %s)" % (n, target, rel))
        report(not bad, "%s: every relative link reaches a file and a heading" % f, "\n".join(bad))
        for rel in sorted(pending):
            skip("%s: its links to %s" % (f, rel), PENDING_PAGES[rel])


# ---- running a page ---------------------------------------------------------------------------

def scratch_checkout(tmp, ext):
    work = os.path.join(tmp, "checkout")
    for d in ("dist", "tests", "python/sqlite_rdt", "npm", "node_modules"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    os.symlink(ext + ".so", os.path.join(work, "dist", "rdt.so"))
    os.symlink(os.path.join(ROOT, "tests", "data"), os.path.join(work, "tests", "data"))
    os.symlink(os.path.join(ROOT, "examples"), os.path.join(work, "examples"))
    shutil.copy(os.path.join(ROOT, "python", "sqlite_rdt", "__init__.py"), os.path.join(work, "python", "sqlite_rdt"))
    for f in ("index.js", "package.json"):
        shutil.copy(os.path.join(ROOT, "npm", f), os.path.join(work, "npm"))
    os.symlink(os.path.join(work, "npm"), os.path.join(work, "node_modules", "sqlite-rdt"))
    return work


def node_available(env):
    try:
        return subprocess.run(["node", "-e", "require.resolve('better-sqlite3')"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def page_script(page, blocks, node_ok, preload):
    """The bash script of a page's runnable blocks, and the list of (index, block) it runs."""
    default_session = "sqlite3 %s" % (os.path.splitext(os.path.basename(page))[0] + ".db")
    out = ["set -eo pipefail"]
    runs = []
    for b in blocks:
        kind = RUN_KINDS.get(b["lang"])
        if kind is None or b["not_run"]:
            continue
        if kind == "node" and not node_ok:
            continue
        k = len(runs)
        runs.append(b)
        out.append("echo '~~~ docs-test block %d ~~~'" % k)
        eof = "RDT_DOCS_EOF_%d" % k
        if kind == "sh":
            out.append(b["body"])
        elif kind == "sql":
            body = b["body"]
            head = ".bail on\n" + ("" if re.search(r"^\.load ", body, re.M) else ".load ./dist/rdt\n")
            out.append("%s <<'%s'\n%s%s\n%s" % (b["session"] or default_session, eof, head, body, eof))
        elif kind == "python":
            out.append("%s/usr/bin/python3 - <<'%s'\n%s\n%s" % (preload, eof, b["body"], eof))
        else:
            out.append("cat > docs-test-%d.js <<'%s'\n%s\n%s\n%snode docs-test-%d.js" % (k, eof, b["body"], eof, preload, k))
    out.append("echo '~~~ docs-test end ~~~'")
    return "\n".join(out) + "\n", runs


def run_page(page, root, ext, env, node_ok, preload):
    """Runs a page's blocks; reports one check per block; returns the transcript (or None)."""
    text = open(os.path.join(root, page), encoding="utf-8").read()
    blocks, _ = parse(text)
    unlabelled = [str(b["line"]) for b in blocks if not b["lang"]]
    report(not unlabelled, "%s: every fenced block names its language" % page,
           unlabelled and "fences without a language at lines " + ", ".join(unlabelled))
    for b in blocks:
        if RUN_KINDS.get(b["lang"]) and b["not_run"]:
            skip("%s line %d: the %s block" % (page, b["line"], b["lang"]), "marked not run: " + b["not_run"])
        elif RUN_KINDS.get(b["lang"]) == "node" and not node_ok:
            skip("%s line %d: the js block" % (page, b["line"]),
                 "node or better-sqlite3 is not installed (bash tests/npm_deps.sh)")
    tmp = tempfile.mkdtemp(prefix="docs-test-")
    try:
        work = scratch_checkout(tmp, ext)
        script, runs = page_script(page, blocks, node_ok, preload)
        if not runs:
            return ""
        with open(os.path.join(tmp, "page.sh"), "w") as f:
            f.write(script)
        os.makedirs(os.path.join(tmp, "tmpdir"))
        penv = dict(env, TMPDIR=os.path.join(tmp, "tmpdir"), PYTHONPATH=os.path.join(work, "python"))
        try:
            p = subprocess.run(["bash", os.path.join(tmp, "page.sh")], cwd=work, env=penv, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=BLOCK_TIMEOUT)
            transcript, rc = p.stdout.decode("utf-8", "replace"), p.returncode
        except subprocess.TimeoutExpired as e:
            transcript, rc = (e.stdout or b"").decode("utf-8", "replace") + "\n(timed out)", -1
        parts = re.split(r"^~~~ docs-test (block \d+|end) ~~~$", transcript, flags=re.M)
        started = [int(x.split()[1]) for x in parts[1::2] if x.startswith("block")]
        outputs = {int(parts[j].split()[1]): parts[j + 1] for j in range(1, len(parts) - 1, 2) if parts[j].startswith("block")}
        last = started[-1] if started else -1
        for k, b in enumerate(runs):
            name = "%s line %d: the %s block runs" % (page, b["line"], b["lang"])
            if rc == 0 or k < last:
                report(True, name)
            elif k == last:
                report(False, name, "exit status %d; its output ends:\n%s"
                       % (rc, "\n".join(l[:200] for l in outputs.get(k, "").strip().split("\n")[-15:])))
            else:
                report(False, name, "not reached: an earlier block of the page failed")
        secrets = []
        for d, dirs, files in os.walk(work):
            for fn in files:
                fp = os.path.join(d, fn)
                if os.path.islink(fp):
                    continue
                try:
                    if b"secret_key" in open(fp, "rb").read():
                        secrets.append(os.path.relpath(fp, work))
                except OSError:
                    pass
        report(not secrets, "%s: no file holding a secret key is left in the checkout" % page, " ".join(secrets))
        for desc, pattern in PAGE_EXPECTATIONS.get(page, []) + (NODE_EXPECTATIONS.get(page, []) if node_ok else []):
            ok = re.search(pattern, transcript, re.M) is not None
            report(ok, "%s: %s" % (page, desc), "" if ok else "no line matches %r in the page's output, which ends:\n%s"
                   % (pattern, "\n".join(l[:200] for l in transcript.strip().split("\n")[-12:])))
        if os.environ.get("RDT_DOCS_TRANSCRIPTS"):
            with open(os.path.join(os.environ["RDT_DOCS_TRANSCRIPTS"], page.replace("/", "_") + ".out"), "w") as f:
                f.write(transcript)
        return transcript
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# What the README's and the guide's workflow must print (regular expressions, multiline).
WORKFLOW = [
    ("rdt_check_report reads 1098 training rows and keeps them all", r"^rows\|.*1098 read, 1098 kept, 0 dropped"),
    ("the ledger records rdt_fit's charge of 1.0 as released, with what auto chose",
     r"^rdt_fit\|1\.0\|released\|\{\"algorithm\":\"auto\",\"chosen\":\"[a-z_]+\""),
    ("rdt_info says release ok with no warnings", r"^ok\|\[\]"),
    ("rdt_evaluate gives an accuracy in [0, 1] over the 274 held-out rows", r"^274\|(0\.[0-9]+|1\.0)$"),
    ("rdt_confusion gives the four cells", r"^1\|1\|[0-9]+$"),
    ("the signed model verifies against the public key", r"^verified = 1$"),
    ("rdt_predictions gives three rows (id, class, probabilities)",
     r"^(5|10|15)\|[01]\|\{\"0\":[0-9.e-]+,\"1\":[0-9.e-]+\}$(\n^(5|10|15)\|[01]\|\{.*$){2}"),
]
PAGE_EXPECTATIONS = {
    "README.md": WORKFLOW,
    "docs/guide.md": WORKFLOW + [
        ("the typed import stored the labels as integers (762 of class 0, 610 of class 1)",
         r"^integer\|0\|762$\n^integer\|1\|610$"),
        ("rdt_features marks the copied class list", r"^\{\"copied_from_rows\":\[0,1\]\}$"),
        ("on the TEXT import, WHERE variance > 10 compares as text (455 rows) and CAST fixes it (0)",
         r"^text_compare\|455\|0$"),
        ("the audit log shows the second charge with its note, 1.0 of the budget left",
         r"^2\|[0-9T:.-]+Z\|rdt_fit\|1\.0\|released\|[0-9a-f]{32}\|\{.*\}\|cohort 2026, for the registry\|1\.0$"),
        ("the python block prints rdt_version()", r"^rdt %s$" % re.escape(open(os.path.join(ROOT, "VERSION")).read().strip())),
    ],
}
# Checked only where node and better-sqlite3 are installed: the js block prints the same line again.
NODE_EXPECTATIONS = {
    "docs/guide.md": [("the js block prints rdt_version() through sqlite-rdt and better-sqlite3",
                       r"^rdt %s$(.|\n)*^rdt %s$" % ((re.escape(open(os.path.join(ROOT, "VERSION")).read().strip()),) * 2))],
}


# ---- function names -------------------------------------------------------------------------

def check_names(pages, ext, env):
    q = "SELECT name FROM pragma_function_list UNION SELECT name FROM pragma_module_list"
    p = subprocess.run(["sqlite3", ":memory:", ".load " + ext, q], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    sql_names = set(p.stdout.decode().split())
    c_names = set()
    for f in glob.glob(os.path.join(ROOT, "ext", "**", "*.[ch]"), recursive=True):
        c_names |= set(re.findall(r"\b(?:rdt|dp)_[a-z0-9_]+\b", open(f, encoding="utf-8", errors="replace").read()))
    report("rdt_fit" in sql_names, "the extension lists its functions", p.stdout.decode()[-500:])
    for page in pages:
        text = open(os.path.join(ROOT, page), encoding="utf-8").read()
        # name( calls a function, unless a table is being declared: TABLE name(...), table `name(...)`
        called = set(m.group(1) for m in re.finditer(r"(?<![A-Za-z0-9_/.])((?:rdt|dp)_[a-z_]+)\(", text)
                     if not re.search(r"(TABLE\s+(IF NOT EXISTS\s+)?|table `)$", text[max(0, m.start() - 40):m.start()]))
        quoted = set(re.findall(r"`((?:rdt|dp)_[a-z_]+)`", text))
        missing = sorted(n for n in called if n not in sql_names) + \
            sorted(n for n in quoted - called if n not in sql_names and n not in c_names)
        report(not missing, "%s: every rdt_*/dp_* function it names exists" % page, " ".join(missing))


# ---- the checker checks itself --------------------------------------------------------------

def self_test(ext, env):
    global passed, failed, skipped
    tmp = tempfile.mkdtemp(prefix="docs-test-self-")
    try:
        os.makedirs(os.path.join(tmp, "docs"))
        good = ("# Good\n\n## A heading, with `code` — and ε\n\n[up](#a-heading-with-code--and-ε) "
                "[other](other.md#there)\n\n```sql\nSELECT rdt_version();\n```\n\n```sh\nx=1\n```\n\n"
                "<!-- not run: a placeholder -->\n```sql\nSELECT <yours>;\n```\n")
        cases = {
            "good.md": good,
            "badfile.md": "# A\n\n[x](missing.md)\n",
            "badanchor.md": "# A\n\n[x](other.md#nowhere)\n",
            "badsql.md": "# A\n\n```sql\nSELECT no_such_function();\n```\n",
            "badsh.md": "# A\n\n```sh\nfalse\n```\n",
            "nolang.md": "# A\n\n```\nSELECT 1;\n```\n",
        }
        for name, text in cases.items():
            open(os.path.join(tmp, "docs", name), "w").write(text)
        open(os.path.join(tmp, "docs", "other.md"), "w").write("# Other\n\n## There\n")
        saved = (passed, failed, skipped)
        results = {}
        devnull = open(os.devnull, "w")
        real_stdout = sys.stdout
        for name in cases:
            passed = failed = skipped = 0
            sys.stdout = devnull
            try:
                check_links(["docs/" + name], tmp)
                run_page("docs/" + name, tmp, ext, env, False, "")
            finally:
                sys.stdout = real_stdout
            results[name] = (failed, skipped)
        passed, failed, skipped = saved
        report(results["good.md"] == (0, 1), "the checker passes a good page (its marked block skipped)", str(results["good.md"]))
        for name, what in (("badfile.md", "a link to a missing file"), ("badanchor.md", "a link to a missing heading"),
                           ("badsql.md", "a failing sql block"), ("badsh.md", "a failing sh block"),
                           ("nolang.md", "a fence without a language")):
            report(results[name][0] > 0, "the checker rejects %s" % what, str(results[name]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ext = os.environ.get("RDT_EXT", "./dist/rdt")
    if not os.path.isabs(ext):
        ext = os.path.normpath(os.path.join(ROOT, ext))
    env = dict(os.environ)
    env["NODE_PATH"] = os.path.join(ROOT, "build", "node", "node_modules") + (":" + env["NODE_PATH"] if env.get("NODE_PATH") else "")
    preload = ""
    tmp = tempfile.mkdtemp(prefix="docs-test-bin-")
    try:
        if os.environ.get("RDT_SANITIZE") == "1":
            libs = " ".join(subprocess.run(["cc", "-print-file-name=" + l], stdout=subprocess.PIPE).stdout.decode().strip()
                            for l in ("libasan.so", "libubsan.so"))
            env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0:halt_on_error=1")
            real = shutil.which("sqlite3")
            with open(os.path.join(tmp, "sqlite3"), "w") as f:
                f.write('#!/bin/sh\nLD_PRELOAD="%s" exec "%s" "$@"\n' % (libs, real))
            os.chmod(os.path.join(tmp, "sqlite3"), 0o755)
            env["PATH"] = tmp + ":" + env["PATH"]
            preload = 'env LD_PRELOAD="%s" ' % libs
        os.chdir(ROOT)
        pages = sys.argv[1:] or ["README.md"] + sorted(glob.glob("docs/*.md"))
        node_ok = node_available(env)
        for page in pages:
            if page in OWN_HARNESS:
                report(True, "%s: its blocks are run by %s" % (page, OWN_HARNESS[page]))
                continue
            run_page(page, ROOT, ext, env, node_ok, preload)
        try:
            tracked = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL).stdout.decode().split()
        except OSError:
            tracked = []
        md = sorted(set(tracked) | set(pages) | set(glob.glob("docs/*.md")) | {"README.md"})
        check_links([f for f in md if os.path.exists(f)], ROOT)
        check_names(pages, ext, env)
        self_test(ext, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
