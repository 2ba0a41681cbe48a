#!/usr/bin/env bash
# SQL-level test runner for the rdt SQLite extension.
#
# Usage:  bash tests/sql_runner.sh [tests/sql/foo.test ...]
#         (no argument: every tests/sql/*.test)
#
# Environment:
#   RDT_EXT            extension to load (default: <repo>/dist/rdt, i.e. dist/rdt.so);
#                      the sanitizer build points this elsewhere.
#   SQLITE3            sqlite3 shell to use (default: sqlite3 from PATH)
#   RDT_CASE_TIMEOUT   a hang guard, not a speed test: seconds before a case (or a file's
#                      setup) is killed and failed with "timed out after N s" (default: 300)
#   RDT_CASE_BUDGET_MS print a warning (never a failure) for a case slower than this
#                      (default: 1000; 0: never)
#
# No case passes or fails by wall-clock time: speed is measured by make bench, as ratios.
#
# Test file format (tests/sql/*.test):
#   <setup SQL>                  optional, everything before the first "-- test:" line;
#                                run once per file (with the extension loaded, cwd = repo
#                                root so ".import --csv tests/data/x.csv t" works) into a
#                                database that every case of the file gets a fresh copy of.
#   -- test: <name>
#   -- expect: <exact output>    stdout, trimmed, must equal this (exit status 0)
#   -- expect-match: <ERE>       stdout, trimmed, must match this extended regex as a whole
#   -- expect-error: <text>      the shell must fail (status 1..127) and stderr must contain
#                                <text>; several expect-error lines may be given, all must match
#   -- expect-error-match: <ERE> like expect-error, but an extended regex searched in stderr
#   <SQL of the case>            fed on stdin to: sqlite3 -batch -bail <copy of setup db>,
#                                after ".load <RDT_EXT>"
#
# A case also fails when the shell dies from a signal (status >= 128), times out,
# prints a sanitizer report, or exits 99 (the status of a memory checker's findings,
# e.g. tests/valgrind-sqlite3.sh; the sqlite3 shell never exits 99 by itself).
# Output: "ok - file: name" / "not ok - file: name" per case, then
# "N passed, N failed"; exit status 1 if anything failed.

set -u

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXT=${RDT_EXT:-$REPO/dist/rdt}
[[ $EXT == /* ]] || EXT=$PWD/$EXT # relative to the caller's directory (we cd to the repo below)
SQLITE=${SQLITE3:-sqlite3}
TIMEOUT=${RDT_CASE_TIMEOUT:-300}
BUDGET_MS=${RDT_CASE_BUDGET_MS:-1000}

if [[ ! -e $EXT && ! -e $EXT.so ]]; then
    echo "Bail out! extension not found: $EXT(.so) (run make, or set RDT_EXT)" >&2
    exit 1
fi
if ! command -v "$SQLITE" >/dev/null 2>&1; then
    echo "Bail out! sqlite3 shell not found: $SQLITE" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rdt-sqltest.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

CALLER_PWD=$PWD
cd "$REPO" || exit 1

if (($# > 0)); then
    FILES=()
    for f in "$@"; do
        [[ $f == /* ]] || f=$CALLER_PWD/$f
        FILES+=("$f")
    done
else
    shopt -s nullglob
    FILES=(tests/sql/*.test)
    shopt -u nullglob
fi
if ((${#FILES[@]} == 0)); then
    echo "Bail out! no test files" >&2
    exit 1
fi

passed=0
failed=0
SANITIZER_RE='(ERROR: (Address|Leak|Memory|Thread|UndefinedBehavior)Sanitizer|[A-Za-z0-9_]\.[ch]:[0-9]+:[0-9]+: runtime error:)'

trim() { # trim leading/trailing whitespace (incl. newlines)
    local s=$1
    s=${s#"${s%%[![:space:]]*}"}
    s=${s%"${s##*[![:space:]]}"}
    printf '%s' "$s"
}

indent() { sed -e 's/^/#     /' | head -n "${1:-15}"; }

# run_sql DB SQLFILE -> sets RC, OUT, ERR, MS
run_sql() {
    local db=$1 sqlfile=$2 t0 t1
    t0=$(date +%s%N)
    # subshell + 2>/dev/null: keep bash's own "Segmentation fault" job notice out of the report
    (timeout -k 2 "$TIMEOUT" "$SQLITE" -batch -bail "$db" <"$sqlfile" >"$WORK/out" 2>"$WORK/err") 2>/dev/null
    RC=$?
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
    OUT=$(<"$WORK/out")
    ERR=$(<"$WORK/err")
}

write_sql() { # write_sql FILE SQL
    {
        printf ".load '%s'\n" "$EXT"
        printf '%s\n' "$2"
    } >"$1"
}

for file in "${FILES[@]}"; do
    fname=$(basename "$file")
    setup=""
    names=()
    sqls=()
    exps=()
    n=-1
    lineno=0
    while IFS= read -r line || [[ -n $line ]]; do
        lineno=$((lineno + 1))
        line=${line%$'\r'}
        if [[ $line =~ ^--[[:space:]]*test:[[:space:]]*(.*)$ ]]; then
            n=$((n + 1))
            names[n]=$(trim "${BASH_REMATCH[1]}")
            sqls[n]=""
            exps[n]=""
        elif ((n < 0)); then
            setup+="$line"$'\n'
        elif [[ $line =~ ^--[[:space:]]*(expect|expect-match|expect-error|expect-error-match):(.*)$ ]]; then
            kind=${BASH_REMATCH[1]}
            val=${BASH_REMATCH[2]}
            val=${val# } # one separating space
            if [[ $kind == expect || $kind == expect-error ]]; then
                val=$(trim "$val")
            else
                val=${val%"${val##*[![:space:]]}"}
            fi
            exps[n]+="$kind"$'\t'"$val"$'\n'
        else
            sqls[n]+="$line"$'\n'
        fi
    done <"$file"

    # Build the setup database once per file.
    setupdb="$WORK/${fname%.test}.setup.db"
    rm -f "$setupdb"
    write_sql "$WORK/setup.sql" "$setup"
    run_sql "$setupdb" "$WORK/setup.sql"
    setup_rc=$RC
    setup_err=$ERR
    ((setup_rc == 124)) && setup_err="timed out after ${TIMEOUT} s: the setup of $fname (the hang guard, RDT_CASE_TIMEOUT)"
    [[ -e $setupdb ]] || : >"$setupdb"
    if ((setup_rc == 0)) && [[ $setup_err =~ $SANITIZER_RE ]]; then setup_rc=99; fi

    for ((i = 0; i <= n; i++)); do
        name=${names[i]}
        why=""
        MS=0
        ERR=""
        if ((setup_rc != 0)); then
            why="setup failed (exit $setup_rc):"$'\n'"$(printf '%s\n' "$setup_err" | indent)"
        elif [[ -z ${exps[i]} ]]; then
            why="no -- expect line in this case"
        else
            cp "$setupdb" "$WORK/case.db"
            write_sql "$WORK/case.sql" "${sqls[i]}"
            run_sql "$WORK/case.db" "$WORK/case.sql"
            out=$(trim "$OUT")
            if ((RC == 124)); then
                why="timed out after ${TIMEOUT} s: case \"$name\" of $fname (the hang guard, RDT_CASE_TIMEOUT)"
            elif ((RC >= 128)); then
                why="sqlite3 killed by signal $((RC - 128)) (exit $RC)"
            elif ((RC == 99)); then
                why="memory checker reported errors (exit 99)"
            elif [[ $ERR =~ $SANITIZER_RE ]]; then
                why="sanitizer report (exit $RC)"
            else
                while IFS=$'\t' read -r kind val; do
                    [[ -z $kind ]] && continue
                    case $kind in
                    expect)
                        if ((RC != 0)); then
                            why="expected output: $val"$'\n'"#   but failed (exit $RC)"; break
                        elif [[ $out != "$val" ]]; then
                            why="expected: $val"$'\n'"#   actual:   $(printf '%s' "$out" | head -n 5)"; break
                        fi ;;
                    expect-match)
                        if ((RC != 0)); then
                            why="expected output matching: $val"$'\n'"#   but failed (exit $RC)"; break
                        elif ! [[ $out =~ ^($val)$ ]]; then
                            why="expected to match: $val"$'\n'"#   actual:   $(printf '%s' "$out" | head -n 5)"; break
                        fi ;;
                    expect-error)
                        if ((RC == 0)); then
                            why="expected error containing: $val"$'\n'"#   but succeeded with output: $(printf '%s' "$out" | head -n 5)"; break
                        elif [[ $ERR != *"$val"* ]]; then
                            why="expected error containing: $val"$'\n'"#   actual error (exit $RC):"$'\n'"$(printf '%s\n' "$ERR" | indent 6)"; break
                        fi ;;
                    expect-error-match)
                        if ((RC == 0)); then
                            why="expected error matching: $val"$'\n'"#   but succeeded with output: $(printf '%s' "$out" | head -n 5)"; break
                        elif ! [[ $ERR =~ $val ]]; then
                            why="expected error matching: $val"$'\n'"#   actual error (exit $RC):"$'\n'"$(printf '%s\n' "$ERR" | indent 6)"; break
                        fi ;;
                    esac
                done <<<"${exps[i]}"
            fi
        fi
        if [[ -z $why ]]; then
            echo "ok - $fname: $name"
            passed=$((passed + 1))
        else
            echo "not ok - $fname: $name"
            echo "#   $why"
            if ((setup_rc == 0)) && [[ -n ${ERR:-} && $why != *"actual error"* ]]; then
                printf '%s\n' "$ERR" | indent 5
            fi
            failed=$((failed + 1))
        fi
        if ((setup_rc == 0)) && ((BUDGET_MS > 0)) && ((MS > BUDGET_MS)); then
            echo "#   warning: case took ${MS} ms (budget: ${BUDGET_MS} ms)"
        fi
    done
done

echo "$passed passed, $failed failed"
((failed == 0))
