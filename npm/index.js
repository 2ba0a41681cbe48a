'use strict';
/*
 * sqlite-rdt - load the rdt SQLite extension into a better-sqlite3 database.
 *
 *   const Database = require('better-sqlite3');
 *   const rdt = require('sqlite-rdt');
 *   const db = new Database('clinic.db');
 *   rdt.load(db);                         // or rdt.load(db, '/usr/local/lib/rdt.so')
 *   db.prepare('SELECT rdt_version() AS v').get().v;
 *
 * Contract:
 *   1. load(db, path) loads the extension with db.loadExtension(file) and returns the file;
 *      getLoadablePath(path) returns that file without loading anything.
 *   2. The file is looked for in this order, the first that exists being used:
 *        a. `path`, when given (the platform suffix may be left out, as SQLite allows);
 *        b. the build of the source checkout this package sits in: <checkout>/dist/rdt.so,
 *           beside npm/ (the freshest build while developing);
 *        c. a copy inside this package, rdt.so beside index.js (`make packages` puts it
 *           there, so that `npm pack ./npm` ships it);
 *        d. an installed copy (`make install`): rdt.so in /usr/local/lib or /usr/lib
 *           (and /opt/homebrew/lib on macOS).
 *      (.dylib instead of .so on macOS.) Only an explicit `path` stops the search: if it does
 *      not exist, that is the error, rather than another copy being loaded silently.
 *   3. Nothing found: an Error naming every place looked in and how to build one.
 *   4. A database object without loadExtension (not a better-sqlite3 Database, or a build
 *      without extension loading) is a TypeError saying so, before any file is looked for.
 *   5. A load that SQLite refuses is an Error with the file, SQLite's message (the original
 *      error as `cause`) and the system loader's own word on the file (SQLite's hides a
 *      missing libsodium behind "rdt.so.so: cannot open shared object file"), else the usual
 *      causes.
 * The file must keep the name rdt.so / rdt.dylib: SQLite derives the entry point,
 * sqlite3_rdt_init, from it. Node's own node:sqlite (Node 22.5 and later) has loadExtension
 * too, when the database is opened with allowExtension: true.
 */
const fs = require('fs');
const path = require('path');

const SUFFIX = process.platform === 'darwin' ? '.dylib' : process.platform === 'win32' ? '.dll' : '.so';
const FILENAME = 'rdt' + SUFFIX;

function isFile(p) {
  try {
    return fs.statSync(p).isFile();
  } catch (e) {
    return false;
  }
}

function installedDirs() {
  const dirs = ['/usr/local/lib', '/usr/lib'];
  if (process.platform === 'darwin') dirs.push('/opt/homebrew/lib');
  return dirs;
}

function candidates() {
  return [path.join(__dirname, '..', 'dist', FILENAME), path.join(__dirname, FILENAME)]
    .concat(module.exports.installedDirs().map((d) => path.join(d, FILENAME)));
}

function getLoadablePath(explicit) {
  if (explicit !== undefined && explicit !== null) {
    const p = String(explicit);
    if (isFile(p)) return path.resolve(p);
    if (isFile(p + SUFFIX)) return path.resolve(p + SUFFIX);
    throw new Error(`sqlite-rdt: no extension at '${p}' (nor '${p + SUFFIX}'); build it with ` +
      `\`make\` (dist/${FILENAME}) or pass the path of an installed copy`);
  }
  const places = candidates();
  for (const p of places) if (isFile(p)) return p;
  throw new Error(`sqlite-rdt: the rdt extension (${FILENAME}) was not found; looked in:\n  ` +
    places.join('\n  ') + `\nBuild it with \`make\` in the source tree (dist/${FILENAME}), install ` +
    `it with \`make install\`, or pass its path: rdt.load(db, '/path/to/${FILENAME}')`);
}

// When dlopen fails, SQLite retries with the suffix appended and reports that second failure
// ("rdt.so.so: cannot open shared object file"), hiding the real one, typically a missing
// libsodium. process.dlopen asks the system loader directly: its error names the cause (a
// library that does load is then refused as "did not self-register", not a Node addon).
function diagnosis(file) {
  try {
    process.dlopen({ exports: {} }, file);
  } catch (e) {
    if (!/did not self-register/.test(e.message)) return `The system loader says: ${e.message}`;
  }
  return 'Usual causes: libsodium is not installed (e.g. apt-get install libsodium23); the file ' +
    'was built for another system or architecture; it was renamed, and SQLite derives the ' +
    `entry point sqlite3_rdt_init from the name ${FILENAME}.`;
}

function load(db, explicit) {
  if (!db || typeof db.loadExtension !== 'function') {
    throw new TypeError('sqlite-rdt: load(db) needs a database with a loadExtension method, ' +
      'such as a better-sqlite3 Database (or a node:sqlite DatabaseSync opened with ' +
      'allowExtension: true); got ' + (db === null ? 'null' : typeof db === 'object' ?
        (db.constructor && db.constructor.name) || 'an object' : typeof db));
  }
  const file = getLoadablePath(explicit);
  try {
    db.loadExtension(file);
  } catch (e) {
    throw new Error(`sqlite-rdt: SQLite could not load ${file}: ${e.message}\n${diagnosis(file)}`,
      { cause: e });
  }
  return file;
}

module.exports = { load, getLoadablePath, installedDirs, FILENAME };
