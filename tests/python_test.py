#!/usr/bin/env python3
"""The Python helper python/sqlite_rdt: where it finds the library, that what it loads works, and
every error path (nothing found, a missing explicit path, a Python that cannot load extensions, a
library the system loader refuses). Each case builds its own layout in a temporary directory, so
no copy elsewhere on the machine (an installed /usr/local/lib/rdt.so, say) can decide it.

    /usr/bin/python3 tests/python_test.py [extension without suffix]   (default $RDT_EXT, dist/rdt)

Prints "ok - ..." / "not ok - ..." ("ok - ... # SKIP reason" for a check this machine cannot
run, counted neither way) and "N passed, N failed[, N skipped]".
"""
import importlib.util
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(REPO, "python", "sqlite_rdt", "__init__.py")
VERSION = open(os.path.join(REPO, "VERSION")).read().strip()
counts = {"passed": 0, "failed": 0, "skipped": 0}


def check(name, condition, detail=""):
    if condition:
        print("ok - " + name)
        counts["passed"] += 1
    else:
        for line in str(detail).splitlines()[-6:]:
            print("#   " + line)
        print("not ok - " + name)
        counts["failed"] += 1


def skip(name, reason):
    print("ok - %s # SKIP %s" % (name, reason))
    counts["skipped"] += 1


def raises(fn, kind):
    """The exception fn() raises if it is a `kind`, else None (and anything else re-raised)."""
    try:
        fn()
    except kind as e:
        return e
    return None


def import_copy(init_py, name):
    """Import a copy of the package from init_py as module `name` (its __file__ is init_py)."""
    spec = importlib.util.spec_from_file_location(name, init_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def place_library(library, path):
    """The library at `path`, as a symbolic link: the dynamic loader knows a file it has loaded by
    its inode, so the several places of these tests hold one library, not copies that one process
    would load side by side (which an ASan build reports as an ODR violation)."""
    os.symlink(library, path)


def place_package(directory, library=None):
    """directory/sqlite_rdt/__init__.py (a copy), with the library in it as rdt.so if given."""
    os.makedirs(os.path.join(directory, "sqlite_rdt"))
    shutil.copy(PACKAGE, os.path.join(directory, "sqlite_rdt", "__init__.py"))
    if library:
        place_library(library, os.path.join(directory, "sqlite_rdt", os.path.basename(library)))
    return os.path.join(directory, "sqlite_rdt", "__init__.py")


def version_of(conn):
    return conn.execute("SELECT rdt_version()").fetchone()[0]


def loading_refused(conn):
    """SQL's load_extension() is refused on conn (extension loading is off)."""
    e = raises(lambda: conn.execute("SELECT load_extension('/nonexistent/x')"), sqlite3.OperationalError)
    return e is not None and "not authorized" in str(e)


def plain_env():
    # Tools run as subprocesses (cc, pip) get no sanitizer runtime preloaded.
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def main():
    ext = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RDT_EXT", "dist/rdt"))
    sqlite_rdt = import_copy(PACKAGE, "sqlite_rdt")
    library = os.path.abspath(ext + sqlite_rdt.SUFFIX)
    if not os.path.isfile(library):
        check("the extension to test exists (%s)" % library, False, "build it with make")
        return
    tmp = tempfile.mkdtemp()
    try:
        run(sqlite_rdt, library, tmp)
    finally:
        shutil.rmtree(tmp)


def run(sqlite_rdt, library, tmp):
    name = sqlite_rdt.FILENAME

    # Versions agree with the VERSION file.
    check("sqlite_rdt.__version__ is the VERSION file (%s)" % VERSION, sqlite_rdt.__version__ == VERSION,
          sqlite_rdt.__version__)
    pyproject = open(os.path.join(REPO, "python", "pyproject.toml")).read()
    check("python/pyproject.toml's version is the VERSION file",
          'version = "%s"' % VERSION in pyproject.splitlines())

    # 2b: a source checkout: <co>/python/sqlite_rdt and <co>/dist/rdt.so.
    co = os.path.join(tmp, "checkout")
    init = place_package(os.path.join(co, "python"))
    os.makedirs(os.path.join(co, "dist"))
    place_library(library, os.path.join(co, "dist", name))
    m = import_copy(init, "sqlite_rdt_checkout")
    m._installed_dirs = lambda: []
    conn = sqlite3.connect(":memory:")
    loaded = m.load(conn)
    check("load(conn) in a source checkout loads <checkout>/dist/%s" % name,
          loaded == os.path.join(co, "dist", name), loaded)
    check("the loaded extension answers rdt_version() = VERSION", version_of(conn) == VERSION)
    check("extension loading is off again after load(): SQL load_extension() is not authorized",
          loading_refused(conn))
    # The extension really works: a small private model trained and used through it.
    conn.execute("CREATE TABLE t(x REAL, label INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i / 10.0, int(i >= 50)) for i in range(100)])
    model = conn.execute(
        "SELECT rdt_fit(?, 'SELECT label, x FROM t')",
        ('{"epsilon": 1, "trees": 4, "depth": 3, "classes": [0, 1],'
         ' "features": [{"name": "x", "type": "numeric", "min": 0, "max": 10}]}',)).fetchone()[0]
    info = conn.execute("SELECT json_extract(rdt_info(?), '$.release'), rdt_predict(?, 2.5) IN (0, 1)",
                        (model, model)).fetchone()
    check("through it, rdt_fit trains a releasable model and rdt_predict answers a class",
          info == ("ok", 1), info)

    # 2c: a copy inside the package (make packages / pip install), no checkout around it.
    site = os.path.join(tmp, "installed", "site-packages")
    init = place_package(site, library)
    m = import_copy(init, "sqlite_rdt_copy")
    m._installed_dirs = lambda: []
    conn = sqlite3.connect(":memory:")
    loaded = m.load(conn)
    check("load(conn) of an installed package loads the copy inside it (sqlite_rdt/%s)" % name,
          loaded == os.path.join(site, "sqlite_rdt", name) and version_of(conn) == VERSION, loaded)

    # 2b before 2c: in a checkout whose package also holds a (maybe stale) copy, dist/ wins.
    place_library(library, os.path.join(co, "python", "sqlite_rdt", name))
    m = import_copy(os.path.join(co, "python", "sqlite_rdt", "__init__.py"), "sqlite_rdt_both")
    check("with both, the checkout's dist/ build comes before the package's copy",
          m.loadable_path() == os.path.join(co, "dist", name), m.loadable_path())

    # 2d: an installed copy (make install) when there is neither.
    lonely = place_package(os.path.join(tmp, "lonely", "a"))
    prefix_lib = os.path.join(tmp, "prefix", "lib")
    os.makedirs(prefix_lib)
    place_library(library, os.path.join(prefix_lib, name))
    m = import_copy(lonely, "sqlite_rdt_lonely")
    m._installed_dirs = lambda: [os.path.join(tmp, "nowhere"), prefix_lib]
    conn = sqlite3.connect(":memory:")
    loaded = m.load(conn)
    check("otherwise it loads an installed copy (<prefix>/lib/%s)" % name,
          loaded == os.path.join(prefix_lib, name) and version_of(conn) == VERSION, loaded)
    check("the installed places include /usr/local/lib and /usr/lib (make install's default prefix)",
          "/usr/local/lib" in sqlite_rdt._installed_dirs() and "/usr/lib" in sqlite_rdt._installed_dirs())

    # 3: nothing anywhere.
    m._installed_dirs = lambda: [os.path.join(tmp, "nowhere")]
    e = raises(lambda: m.load(sqlite3.connect(":memory:")), FileNotFoundError)
    check("nothing found: FileNotFoundError naming every place looked in and `make`",
          e is not None and os.path.join(tmp, "lonely", "dist", name) in str(e)
          and os.path.join(tmp, "lonely", "a", "sqlite_rdt", name) in str(e)
          and os.path.join(tmp, "nowhere", name) in str(e) and "make" in str(e), e)

    # 2a: an explicit path, with or without the suffix; a missing one is the error, never a fallback.
    conn = sqlite3.connect(":memory:")
    loaded = sqlite_rdt.load(conn, os.path.join(co, "dist", "rdt"))
    check("load(conn, '<dir>/rdt') adds the platform suffix, as SQLite does",
          loaded == os.path.join(co, "dist", name) and version_of(conn) == VERSION, loaded)
    m = import_copy(os.path.join(co, "python", "sqlite_rdt", "__init__.py"), "sqlite_rdt_explicit")
    missing = os.path.join(tmp, "missing", name)
    e = raises(lambda: m.load(sqlite3.connect(":memory:"), missing), FileNotFoundError)
    check("a missing explicit path is FileNotFoundError naming it, though other copies exist",
          e is not None and missing in str(e), e)

    # 4: a connection without enable_load_extension, as a Python built without
    # --enable-loadable-sqlite-extensions gives (pyenv's default builds, for one).
    class WithoutExtensionLoading:
        def __init__(self, conn):
            self._conn = conn

        def __getattr__(self, attr):
            if attr in ("enable_load_extension", "load_extension"):
                raise AttributeError("'sqlite3.Connection' object has no attribute %r" % attr)
            return getattr(self._conn, attr)

    e = raises(lambda: sqlite_rdt.load(WithoutExtensionLoading(sqlite3.connect(":memory:")), missing),
               sqlite_rdt.ExtensionLoadingUnavailable)
    check("a connection without enable_load_extension: ExtensionLoadingUnavailable, before any file"
          " is looked for", e is not None, e)
    text = str(e)
    check("... its message says why and what to do (enable_load_extension, "
          "--enable-loadable-sqlite-extensions, /usr/bin/python3)",
          "enable_load_extension" in text and "--enable-loadable-sqlite-extensions" in text
          and "/usr/bin/python3" in text, text)
    check("... and it is a LoadError (one except clause catches every load failure)",
          isinstance(e, sqlite_rdt.LoadError) and isinstance(e, RuntimeError))

    # 4 again, with a real interpreter that lacks extension loading when the machine has one
    # (pyenv's python3 on PATH, say); the simulated connection above stands for it elsewhere.
    other = shutil.which("python3")
    probe = ("import sqlite3, sys; sys.path.insert(0, sys.argv[1]); import sqlite_rdt\n"
             "if hasattr(sqlite3.Connection, 'enable_load_extension'): print('can load'); sys.exit()\n"
             "try: sqlite_rdt.load(sqlite3.connect(':memory:'))\n"
             "except sqlite_rdt.ExtensionLoadingUnavailable as e: print('unavailable:', e)")
    answer = ""
    if other and os.path.realpath(other) != os.path.realpath(sys.executable):
        answer = subprocess.run([other, "-c", probe, os.path.dirname(os.path.dirname(PACKAGE))],
                                env=plain_env(), capture_output=True, text=True).stdout
    if answer.startswith("unavailable:"):
        check("a real Python without extension loading (%s) gets ExtensionLoadingUnavailable naming "
              "--enable-loadable-sqlite-extensions" % other,
              "--enable-loadable-sqlite-extensions" in answer, answer)
    else:
        print("# (no Python without extension loading on this machine's PATH: the simulated one stands for it)")

    # 6: a library the system loader refuses: an rdt.so that needs a library which is missing, as
    # a machine without libsodium gives. SQLite's own message hides the cause; LoadError names it.
    stub = os.path.join(tmp, "stub")
    os.makedirs(stub)
    with open(os.path.join(stub, "n.c"), "w") as f:
        f.write("int rdt_stub_dependency(void) { return 1; }\n")
    with open(os.path.join(stub, "s.c"), "w") as f:
        f.write("int rdt_stub_dependency(void);\nint sqlite3_rdt_init(void) { return rdt_stub_dependency(); }\n")
    cc = os.environ.get("CC", "cc")
    built = subprocess.run(
        "%s -shared -fPIC -o libgone.so n.c && %s -shared -fPIC -o %s s.c -L. -lgone && rm libgone.so"
        % (cc, cc, name), shell=True, cwd=stub, env=plain_env(), capture_output=True, text=True)
    if built.returncode != 0:
        skip("a library the system loader refuses gives LoadError naming the cause",
             "no C compiler (%s)" % built.stderr.strip()[:80])
    else:
        conn = sqlite3.connect(":memory:")
        e = raises(lambda: sqlite_rdt.load(conn, os.path.join(stub, name)), sqlite_rdt.LoadError)
        check("a library that needs a missing library: LoadError naming the file and the missing "
              "library (libgone.so), which SQLite's own message does not",
              e is not None and os.path.join(stub, name) in str(e) and "libgone.so: cannot open" in str(e)
              and isinstance(e.__cause__, sqlite3.OperationalError), e)
        check("... and extension loading is off again after the failed load", loading_refused(conn))

    # pip: the pyproject installs offline and the installed package ships and loads the library.
    pip_install(library, tmp, name)


def pip_install(library, tmp, name):
    title = "pip install --no-build-isolation ./python (after make packages) ships rdt.so in the package"
    have = [subprocess.run([sys.executable] + args, env=plain_env(), capture_output=True).returncode
            for args in (["-m", "pip", "--version"], ["-c", "import setuptools"])]
    if have != [0, 0]:
        skip(title, "%s has no pip or setuptools (Debian: apt-get install python3-pip)" % sys.executable)
        return
    src = os.path.join(tmp, "python-src")  # a copy: setuptools writes build/ and egg-info beside it
    shutil.copytree(os.path.join(REPO, "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "rdt.so", "rdt.dylib"))
    shutil.copy(library, os.path.join(src, "sqlite_rdt", name))  # what make packages does
    target = os.path.join(tmp, "pip-target")
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation",
                          "--no-index", "--no-deps", "--no-cache-dir", "--target", target, src],
                         env=plain_env(), capture_output=True, text=True)
    ok = out.returncode == 0 and os.path.isfile(os.path.join(target, "sqlite_rdt", name))
    check(title, ok, out.stdout + out.stderr)
    if not ok:
        return
    env = dict(os.environ, PYTHONPATH=target)  # keeps a sanitizer preload: this loads the library
    probe = ("import sqlite3, sqlite_rdt; c = sqlite3.connect(':memory:'); p = sqlite_rdt.load(c); "
             "print(p); print(c.execute('SELECT rdt_version()').fetchone()[0])")
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp, capture_output=True, text=True)
    check("... and `import sqlite_rdt; sqlite_rdt.load(conn)` from there loads that copy",
          out.returncode == 0 and out.stdout.split() == [os.path.join(target, "sqlite_rdt", name), VERSION],
          out.stdout + out.stderr)


if __name__ == "__main__":
    main()
    line = "%d passed, %d failed" % (counts["passed"], counts["failed"])
    if counts["skipped"]:
        line += ", %d skipped" % counts["skipped"]
    print(line)
    sys.exit(1 if counts["failed"] else 0)
