'use strict';
// The npm package npm/ (sqlite-rdt) with better-sqlite3: where it finds the library, that what
// it loads works, and every error path (nothing found, a missing explicit path, an object
// without loadExtension, a library the system loader refuses). Each case builds its own layout
// in a temporary directory, so no copy elsewhere on the machine can decide it.
//
//   node tests/npm_test.js <extension without suffix>     (run by tests/npm_test.sh)
//
// Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
const fs = require('fs');
const os = require('os');
const path = require('path');
const childProcess = require('child_process');
const { createRequire } = require('module');

const REPO = path.resolve(__dirname, '..');
const VERSION = fs.readFileSync(path.join(REPO, 'VERSION'), 'utf8').trim();
let passed = 0;
let failed = 0;

function check(name, condition, detail) {
  if (condition) {
    console.log(`ok - ${name}`);
    passed++;
  } else {
    if (detail !== undefined) String(detail).split('\n').slice(-6).forEach((l) => console.log(`#   ${l}`));
    console.log(`not ok - ${name}`);
    failed++;
  }
}

function thrown(fn) { // the error fn() throws, or null
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

// The library at `to`, as a symbolic link: the dynamic loader knows a file it has loaded by its
// inode, so the several places of these tests hold one library, not copies that one process would
// load side by side (which an ASan build reports as an ODR violation). npm pack gets a real copy.
function placeLibrary(library, to) {
  fs.symlinkSync(library, to);
}

function placePackage(dir, library, copy) { // dir/{index.js, package.json}, with library as rdt.so if given
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['index.js', 'package.json']) fs.copyFileSync(path.join(REPO, 'npm', f), path.join(dir, f));
  if (library) (copy ? fs.copyFileSync : placeLibrary)(library, path.join(dir, path.basename(library)));
  return path.join(dir, 'index.js');
}

function plainEnv() { // tools run as subprocesses (cc, npm) get no sanitizer runtime preloaded
  const env = Object.assign({}, process.env);
  delete env.LD_PRELOAD;
  return env;
}

function main() {
  const Database = require('better-sqlite3');
  const pkg = require(path.join(REPO, 'npm', 'index.js'));
  const name = pkg.FILENAME;
  const library = path.resolve(process.argv[2] + path.extname(name));
  const version = (db) => db.prepare('SELECT rdt_version() AS v').get().v;
  const loadingRefused = (db) => {
    const e = thrown(() => db.prepare("SELECT load_extension('/nonexistent/x')").get());
    return e !== null && /not authorized/.test(e.message);
  };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rdt-npm-'));
  try {
    // package.json: the VERSION file's version, and the library among the files it ships.
    const meta = JSON.parse(fs.readFileSync(path.join(REPO, 'npm', 'package.json'), 'utf8'));
    check(`npm/package.json: name sqlite-rdt, version is the VERSION file (${VERSION}), main index.js`,
      meta.name === 'sqlite-rdt' && meta.version === VERSION && meta.main === 'index.js', JSON.stringify(meta));

    // 2b: a source checkout (<co>/npm and <co>/dist/rdt.so), required by name from an app whose
    // node_modules links to it, as `npm install <co>/npm` does.
    const co = path.join(tmp, 'checkout');
    placePackage(path.join(co, 'npm'));
    fs.mkdirSync(path.join(co, 'dist'));
    placeLibrary(library, path.join(co, 'dist', name));
    fs.mkdirSync(path.join(tmp, 'app', 'node_modules'), { recursive: true });
    fs.symlinkSync(path.join(co, 'npm'), path.join(tmp, 'app', 'node_modules', 'sqlite-rdt'));
    const appRequire = createRequire(path.join(tmp, 'app', 'main.js'));
    const rdt = appRequire('sqlite-rdt');
    rdt.installedDirs = () => [];
    let db = new Database(':memory:');
    const loaded = rdt.load(db);
    check(`require('sqlite-rdt').load(db) in a source checkout loads <checkout>/dist/${name}`,
      loaded === path.join(co, 'dist', name), loaded);
    check('the loaded extension answers rdt_version() = VERSION', version(db) === VERSION);
    check('SQL load_extension() stays refused on the database after load()', loadingRefused(db));
    db.exec('CREATE TABLE t(x REAL, label INTEGER)');
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    for (let i = 0; i < 100; i++) insert.run(i / 10, i >= 50 ? 1 : 0);
    const model = db.prepare("SELECT rdt_fit(?, 'SELECT label, x FROM t') AS m").get(
      '{"epsilon": 1, "trees": 4, "depth": 3, "classes": [0, 1],' +
      ' "features": [{"name": "x", "type": "numeric", "min": 0, "max": 10}]}').m;
    const row = db.prepare("SELECT json_extract(rdt_info(?), '$.release') AS r, rdt_predict(?, 2.5) IN (0, 1) AS p")
      .get(model, model);
    check('through it, rdt_fit trains a releasable model (a Buffer) and rdt_predict answers a class',
      Buffer.isBuffer(model) && row.r === 'ok' && row.p === 1, JSON.stringify(row));

    // 2c: a copy inside the package (make packages / npm pack), no checkout around it.
    const inst = path.join(tmp, 'installed', 'node_modules', 'sqlite-rdt');
    const copy = require(placePackage(inst, library));
    copy.installedDirs = () => [];
    db = new Database(':memory:');
    const fromCopy = copy.load(db);
    check(`an installed package loads the copy inside it (sqlite-rdt/${name})`,
      fromCopy === path.join(inst, name) && version(db) === VERSION, fromCopy);

    // 2b before 2c.
    placeLibrary(library, path.join(co, 'npm', name));
    check("with both, the checkout's dist/ build comes before the package's copy",
      rdt.getLoadablePath() === path.join(co, 'dist', name), rdt.getLoadablePath());

    // 2d: an installed copy (make install) when there is neither.
    const lonely = require(placePackage(path.join(tmp, 'lonely', 'a')));
    const prefixLib = path.join(tmp, 'prefix', 'lib');
    fs.mkdirSync(prefixLib, { recursive: true });
    placeLibrary(library, path.join(prefixLib, name));
    lonely.installedDirs = () => [path.join(tmp, 'nowhere'), prefixLib];
    db = new Database(':memory:');
    const fromPrefix = lonely.load(db);
    check(`otherwise it loads an installed copy (<prefix>/lib/${name})`,
      fromPrefix === path.join(prefixLib, name) && version(db) === VERSION, fromPrefix);
    check('the installed places include /usr/local/lib and /usr/lib (make install\'s default prefix)',
      pkg.installedDirs().includes('/usr/local/lib') && pkg.installedDirs().includes('/usr/lib'));

    // 3: nothing anywhere.
    lonely.installedDirs = () => [path.join(tmp, 'nowhere')];
    let e = thrown(() => lonely.load(new Database(':memory:')));
    check('nothing found: an Error naming every place looked in and `make`',
      e !== null && [path.join(tmp, 'lonely', 'dist', name), path.join(tmp, 'lonely', 'a', name),
        path.join(tmp, 'nowhere', name), 'make'].every((s) => e.message.includes(s)), e && e.message);

    // 2a: explicit paths.
    db = new Database(':memory:');
    const explicit = pkg.load(db, path.join(co, 'dist', 'rdt'));
    check("load(db, '<dir>/rdt') adds the platform suffix, as SQLite does",
      explicit === path.join(co, 'dist', name) && version(db) === VERSION, explicit);
    const missing = path.join(tmp, 'missing', name);
    e = thrown(() => rdt.load(new Database(':memory:'), missing));
    check('a missing explicit path is an Error naming it, though other copies exist',
      e !== null && e.message.includes(missing), e && e.message);

    // 4: something that cannot load extensions.
    const bad = [null, {}, { prepare() {} }].map((x) => thrown(() => pkg.load(x, missing)));
    check('an object without loadExtension (null, {}, a look-alike): TypeError naming better-sqlite3, ' +
      'before any file is looked for',
    bad.every((x) => x instanceof TypeError && /loadExtension/.test(x.message) && /better-sqlite3/.test(x.message)),
    bad.map((x) => x && x.message).join('\n'));

    // 5: a library the system loader refuses: an rdt.so needing a library that is missing (as on
    // a machine without libsodium). SQLite's own message hides the cause; the package names it.
    const stub = path.join(tmp, 'stub');
    fs.mkdirSync(stub);
    fs.writeFileSync(path.join(stub, 'n.c'), 'int rdt_stub_dependency(void) { return 1; }\n');
    fs.writeFileSync(path.join(stub, 's.c'),
      'int rdt_stub_dependency(void);\nint sqlite3_rdt_init(void) { return rdt_stub_dependency(); }\n');
    const cc = process.env.CC || 'cc';
    childProcess.execSync(`${cc} -shared -fPIC -o libgone.so n.c && ${cc} -shared -fPIC -o ${name} s.c -L. -lgone ` +
      '&& rm libgone.so', { cwd: stub, env: plainEnv(), stdio: 'pipe' });
    db = new Database(':memory:');
    e = thrown(() => pkg.load(db, path.join(stub, name)));
    check('a library that needs a missing library: an Error naming the file and the missing library ' +
      "(libgone.so), which SQLite's own message does not, with SQLite's error as its cause",
    e !== null && e.message.includes(path.join(stub, name)) && e.message.includes('libgone.so: cannot open') &&
      e.cause instanceof Error, e && e.message);

    // npm pack ships the library: `make packages` copies it beside index.js and "files" lists it.
    const packDir = path.join(tmp, 'pack');
    placePackage(packDir, library, true);
    let listed = [];
    try {
      const out = childProcess.execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'],
        { cwd: packDir, env: plainEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      listed = JSON.parse(out.toString())[0].files.map((f) => f.path).sort();
    } catch (err) {
      listed = [String(err.message)];
    }
    check(`npm pack of the package holds index.js, package.json and ${name}`,
      ['index.js', name, 'package.json'].every((f) => listed.includes(f)), listed.join(' '));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  main();
} catch (e) {
  console.log(`#   ${e.stack}`);
  check('the npm package test ran to its end', false);
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
