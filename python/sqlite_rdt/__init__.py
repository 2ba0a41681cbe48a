"""sqlite_rdt - load the rdt SQLite extension into a Python sqlite3 connection.

    import sqlite3
    import sqlite_rdt

    conn = sqlite3.connect("clinic.db")
    sqlite_rdt.load(conn)                       # or sqlite_rdt.load(conn, "/opt/rdt/lib/rdt.so")
    print(conn.execute("SELECT rdt_version()").fetchone()[0])

The SQL functions themselves are documented in sql/reference.md; docs/guide.md is the user guide.

Contract:
  1. load(conn, path=None) loads the extension into `conn` and returns the path of the file it
     loaded. loadable_path(path=None) returns that path without loading anything.
  2. The file is looked for in this order, and the first that exists is used:
       a. `path`, when given (the platform suffix may be left out, as SQLite allows: "dist/rdt");
       b. the build of the source checkout this package sits in: <checkout>/dist/rdt.so, beside
          python/ (the freshest build while developing);
       c. a copy inside this package, sqlite_rdt/rdt.so (`make packages` puts it there, so that
          `pip install ./python` ships it);
       d. an installed copy (`make install`): rdt.so in <sys.prefix>/lib, /usr/local/lib, /usr/lib
          (and /opt/homebrew/lib on macOS).
     (.dylib instead of .so on macOS.) Only an explicit `path` stops the search: if it does not
     exist, that is the error, rather than some other copy being loaded silently.
  3. Nothing found: FileNotFoundError naming every place looked in and how to build one.
  4. A connection that cannot load extensions at all (its class has no enable_load_extension:
     a Python built without --enable-loadable-sqlite-extensions, such as pyenv's default
     builds) raises ExtensionLoadingUnavailable, which says so and what to use instead; the file
     is not touched.
  5. Extension loading is switched on only around the load and switched off again afterwards,
     whether the load worked or not, so SQL's load_extension() stays refused on `conn`.
  6. A load that SQLite refuses raises LoadError with the file, SQLite's own message and the
     system loader's own word on the file (SQLite's hides a missing libsodium behind
     "rdt.so.so: cannot open shared object file"), else the usual causes.
The file must keep the name rdt.so / rdt.dylib: SQLite derives the entry point,
sqlite3_rdt_init, from it.
"""
import os
import sys

__version__ = "0.1.0"  # the VERSION file's; the test suite checks they agree
__all__ = ["load", "loadable_path", "LoadError", "ExtensionLoadingUnavailable"]

if sys.platform == "darwin":
    SUFFIX = ".dylib"
elif sys.platform == "win32":
    SUFFIX = ".dll"
else:
    SUFFIX = ".so"
FILENAME = "rdt" + SUFFIX

_HERE = os.path.dirname(os.path.abspath(__file__))


class LoadError(RuntimeError):
    """SQLite refused to load the extension (or the connection cannot load extensions)."""


class ExtensionLoadingUnavailable(LoadError):
    """The connection's sqlite3 module was built without extension loading."""


def _installed_dirs():
    # Where `make install` (PREFIX=/usr/local by default) and distribution packages put it.
    dirs = [os.path.join(sys.prefix, "lib"), "/usr/local/lib", "/usr/lib"]
    if sys.platform == "darwin":
        dirs.append("/opt/homebrew/lib")
    return dirs


def _candidates():
    checkout = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "dist", FILENAME)
    places = [checkout, os.path.join(_HERE, FILENAME)]
    places += [os.path.join(d, FILENAME) for d in _installed_dirs()]
    seen = []
    for p in places:  # sys.prefix is often /usr or /usr/local: look once
        if p not in seen:
            seen.append(p)
    return seen


def loadable_path(path=None):
    """The file load() would load: `path` if given, else the first copy found (contract 2)."""
    if path is not None:
        path = os.fspath(path)
        if os.path.isfile(path):
            return os.path.abspath(path)
        if os.path.isfile(path + SUFFIX):
            return os.path.abspath(path + SUFFIX)
        raise FileNotFoundError(
            "sqlite_rdt: no extension at %r (nor %r); build it with `make` (dist/%s) "
            "or pass the path of an installed copy" % (path, path + SUFFIX, FILENAME))
    places = _candidates()
    for p in places:
        if os.path.isfile(p):
            return p
    raise FileNotFoundError(
        "sqlite_rdt: the rdt extension (%s) was not found; looked in:\n  %s\n"
        "Build it with `make` in the source tree (dist/%s), install it with `make install`, "
        "or pass its path: sqlite_rdt.load(conn, '/path/to/%s')"
        % (FILENAME, "\n  ".join(places), FILENAME, FILENAME))


def _unavailable(conn):
    return ExtensionLoadingUnavailable(
        "sqlite_rdt: this connection (%s.%s) cannot load SQLite extensions: it has no "
        "enable_load_extension method, because this Python's sqlite3 module was built without "
        "extension loading (%s). Use a Python built with it (Debian's and Ubuntu's "
        "/usr/bin/python3, Homebrew's, conda's; with pyenv: "
        "PYTHON_CONFIGURE_OPTS=--enable-loadable-sqlite-extensions pyenv install <version>)."
        % (type(conn).__module__, type(conn).__name__, sys.executable or "this interpreter"))


def _diagnosis(file):
    # When dlopen fails, SQLite retries with the suffix appended and reports that second
    # failure ("rdt.so.so: cannot open shared object file"), hiding the real one, typically a
    # missing libsodium. The system loader, asked directly, names it.
    try:
        import ctypes
        ctypes.CDLL(file)
    except OSError as e:
        return "The system loader says: %s" % e
    except Exception:  # no ctypes here: fall through to the general causes
        pass
    return ("Usual causes: libsodium is not installed (e.g. apt-get install libsodium23); the "
            "file was built for another system or architecture; it was renamed, and SQLite "
            "derives the entry point sqlite3_rdt_init from the name %s." % FILENAME)


def load(conn, path=None):
    """Load rdt into `conn` (a sqlite3.Connection) and return the file loaded (contract)."""
    enable = getattr(conn, "enable_load_extension", None)
    if enable is None or not callable(getattr(conn, "load_extension", None)):
        raise _unavailable(conn)
    file = loadable_path(path)
    enable(True)
    try:
        conn.load_extension(file)
    except Exception as e:  # sqlite3.OperationalError; other modules raise their own
        raise LoadError(
            "sqlite_rdt: SQLite could not load %s: %s\n%s" % (file, e, _diagnosis(file))) from e
    finally:
        enable(False)
    return file
