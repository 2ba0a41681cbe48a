# rdt - differentially private models (auto, learners, random decision tree forests) for SQLite.
# `make` builds dist/rdt.so (dist/rdt.dylib on macOS); `make test` runs every test.

VERSION := $(shell cat VERSION)
UNAME_S := $(shell uname -s)
ifeq ($(UNAME_S),Darwin)
  SOEXT := dylib
  SOFLAGS := -dynamiclib
else
  SOEXT := so
  SOFLAGS := -shared
endif

CC ?= cc
PKG_CONFIG ?= pkg-config
SODIUM_CFLAGS := $(shell $(PKG_CONFIG) --cflags libsodium)
SODIUM_LIBS := $(shell $(PKG_CONFIG) --libs libsodium)
SQLITE_CFLAGS := $(shell $(PKG_CONFIG) --cflags sqlite3 2>/dev/null)
SQLITE_LIBS := $(shell $(PKG_CONFIG) --libs sqlite3 2>/dev/null || echo -lsqlite3)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) -fPIC -pthread \
  -DRDT_VERSION_STRING='"$(VERSION)"' -Iext $(SODIUM_CFLAGS) $(SQLITE_CFLAGS)

CORE_SRC := ext/core/rng.c ext/core/noise.c ext/core/digest.c ext/core/partial.c ext/core/round.c ext/core/plan.c ext/core/mask.c ext/core/share.c ext/core/select.c ext/core/median.c ext/core/json.c ext/core/json_io.c ext/core/schema.c \
            ext/core/row_sample.c ext/core/sign.c ext/core/unit.c ext/core/bounds.c \
            ext/core/options.c ext/core/model.c \
            ext/core/learner.c ext/core/moment_fit.c $(sort $(wildcard ext/core/forests/*.c)) $(sort $(wildcard ext/core/learners/*.c))
SQL_SRC := ext/rdt_ext.c ext/sql_values.c ext/sql_columns.c ext/sql_model_cache.c ext/sql_train.c ext/sql_public_query.c ext/sql_fit.c ext/sql_unit.c ext/sql_predict.c ext/sql_info.c \
           ext/sql_cancel.c \
           ext/sql_median.c ext/sql_sign.c ext/sql_inspect.c ext/sql_export.c ext/sql_ledger.c ext/sql_batch.c \
           ext/sql_scoring.c ext/sql_named.c ext/sql_proba.c ext/sql_predictions.c ext/sql_evaluate.c ext/sql_eval_tables.c ext/sql_check.c ext/sql_check_report.c ext/sql_features.c \
           ext/sql_shard.c ext/sql_federated.c
HEADERS := $(wildcard ext/*.h ext/core/*.h ext/core/forests/*.h ext/core/learners/*.h)

EXT := dist/rdt.$(SOEXT)

.PHONY: all test test-c test-sql test-asan bench demo clean static install uninstall reproduce reproduce-auto reproduce-auto-all reproduce-tables packages

all: $(EXT)

$(EXT): $(CORE_SRC) $(SQL_SRC) $(HEADERS) VERSION
	@mkdir -p dist
	$(CC) $(ALL_CFLAGS) $(SOFLAGS) -o $@ $(CORE_SRC) $(SQL_SRC) $(SODIUM_LIBS) -lm

build/audit: tests/audit.c $(CORE_SRC) $(HEADERS)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ tests/audit.c $(CORE_SRC) $(SODIUM_LIBS) -lm

build/test_core: tests/test_core.c tests/check.h $(CORE_SRC) $(HEADERS)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -DRDT_COUNT_WORK -o $@ tests/test_core.c $(CORE_SRC) $(SODIUM_LIBS) -lm

build/test_learners: tests/test_learners.c tests/check.h $(CORE_SRC) $(HEADERS)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ tests/test_learners.c $(CORE_SRC) $(SODIUM_LIBS) -lm

build/test_boost: tests/test_boost.c tests/check.h $(CORE_SRC) $(HEADERS)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ tests/test_boost.c $(CORE_SRC) $(SODIUM_LIBS) -lm

# Long work: interrupts, the progress handler, options read once, the mixed
# walk. Linked with the SQL binding built in (-DSQLITE_CORE) and the system SQLite.
build/test_long_work: tests/test_long_work.c tests/check.h $(CORE_SRC) $(SQL_SRC) $(HEADERS)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -DSQLITE_CORE -o $@ tests/test_long_work.c $(CORE_SRC) $(SQL_SRC) $(SQLITE_LIBS) $(SODIUM_LIBS) -lm

# The whole suite: C unit tests of the core, then SQL tests through the
# sqlite3 shell. Ends with "N passed, N failed".
test: $(EXT) build/test_core build/test_learners build/test_boost build/test_long_work build/audit build/fuzz-replay-model build/fuzz-replay-options build/fuzz-replay-import build/embed
	@bash tests/run_all.sh

# Same suite under AddressSanitizer + UndefinedBehaviorSanitizer. The shell is
# not instrumented, so the extension is loaded with the ASan runtime preloaded.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
test-asan:
	@mkdir -p build/asan
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) $(SOFLAGS) -o build/asan/rdt.$(SOEXT) $(CORE_SRC) $(SQL_SRC) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -DRDT_COUNT_WORK -o build/asan/test_core tests/test_core.c $(CORE_SRC) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o build/asan/test_learners tests/test_learners.c $(CORE_SRC) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o build/asan/test_boost tests/test_boost.c $(CORE_SRC) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -DSQLITE_CORE -o build/asan/test_long_work tests/test_long_work.c $(CORE_SRC) $(SQL_SRC) $(SQLITE_LIBS) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o build/asan/audit tests/audit.c $(CORE_SRC) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o build/asan/fuzz-replay-model tests/fuzz/replay.c tests/fuzz/fuzz_model.c $(CORE_SRC) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o build/asan/fuzz-replay-options tests/fuzz/replay.c tests/fuzz/fuzz_options.c $(CORE_SRC) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o build/asan/fuzz-replay-import tests/fuzz/replay.c tests/fuzz/fuzz_import.c $(CORE_SRC) $(SODIUM_LIBS) -lm
	@RDT_SANITIZE=1 RDT_EXT=$(CURDIR)/build/asan/rdt RDT_TEST_CORE=build/asan/test_core RDT_TEST_LEARNERS=build/asan/test_learners RDT_TEST_BOOST=build/asan/test_boost RDT_TEST_LONG_WORK=build/asan/test_long_work RDT_AUDIT=build/asan/audit \
	  RDT_FUZZ_REPLAY_MODEL=build/asan/fuzz-replay-model RDT_FUZZ_REPLAY_OPTIONS=build/asan/fuzz-replay-options \
	  RDT_FUZZ_REPLAY_IMPORT=build/asan/fuzz-replay-import \
	  bash tests/run_all.sh

# ---- static library, embedding example, installation ----------------------
# make static    dist/librdt.a, built with -DSQLITE_CORE: link it and call
#                sqlite3_rdt_init (ext/rdt.h) yourself or through sqlite3_auto_extension.
# make install   the loadable module, the static library, ext/rdt.h and rdt.pc into
#                $(DESTDIR)$(PREFIX) (PREFIX=/usr/local by default).
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
STATIC := dist/librdt.a

static: $(STATIC)

$(STATIC): $(CORE_SRC) $(SQL_SRC) $(HEADERS) VERSION
	@mkdir -p build/static dist
	@rm -f build/static/*.o $@
	@for src in $(CORE_SRC) $(SQL_SRC); do \
	  echo "$(CC) -DSQLITE_CORE -c $$src"; \
	  $(CC) $(ALL_CFLAGS) -DSQLITE_CORE -c $$src -o build/static/$$(echo $${src%.c} | tr / _).o || exit 1; \
	done
	ar rcs $@ build/static/*.o

build/embed: examples/embed.c $(STATIC) ext/rdt.h
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ examples/embed.c $(STATIC) $(SQLITE_LIBS) $(SODIUM_LIBS) -lm

dist/rdt.pc: rdt.pc.in VERSION
	@mkdir -p dist
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' rdt.pc.in > $@

# dist/rdt.pc depends on PREFIX: rebuild it on every install.
install: $(EXT) $(STATIC)
	@rm -f dist/rdt.pc && $(MAKE) --no-print-directory dist/rdt.pc PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	install -m 755 $(EXT) $(DESTDIR)$(LIBDIR)/rdt.$(SOEXT)
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/librdt.a
	install -m 644 ext/rdt.h $(DESTDIR)$(INCLUDEDIR)/rdt.h
	install -m 644 dist/rdt.pc $(DESTDIR)$(LIBDIR)/pkgconfig/rdt.pc

# make packages  copies the built module and LICENSE into python/ (package sqlite_rdt) and npm/,
#                so that `pip install ./python` and `npm install --install-links ./npm` ship them
#                (docs/install.md: on Debian, pip in a venv made with --system-site-packages).
packages: $(EXT)
	cp $(EXT) python/sqlite_rdt/rdt.$(SOEXT)
	cp LICENSE python/LICENSE
	cp $(EXT) LICENSE npm/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/rdt.$(SOEXT) $(DESTDIR)$(LIBDIR)/librdt.a $(DESTDIR)$(INCLUDEDIR)/rdt.h \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/rdt.pc

# Every accuracy figure and plot, into results/ (docs/results.md shows them). QUICK=1: a few data
# sets, 2 runs, under a minute. The paper-protocol and defaults tables need the papers' data
# sets (../shared/datasets), so a full run without them, or a quick one, skips them.
PAPER_DATA = $(CURDIR)/../shared/datasets

reproduce: $(EXT)
	/usr/bin/python3 scripts/reproduce.py $(if $(QUICK),--quick --out build/reproduce-quick,)
	/usr/bin/python3 scripts/matrix_accuracy.py $(if $(QUICK),--quick --out build/matrix-quick.md,)
	/usr/bin/python3 scripts/sharp_accuracy.py $(if $(QUICK),--quick --out build/sharp-quick.md,)
	@if [ -z "$(QUICK)" ] && [ -d "$(PAPER_DATA)" ]; then $(MAKE) --no-print-directory reproduce-auto reproduce-tables; \
	 else echo "reproduce: auto's targets, paper and defaults tables skipped ($(if $(QUICK),QUICK=1,no $(PAPER_DATA)))"; fi

# Issue 20's targets: `auto` with the defaults at ε = 1, stratified 80/20, seeds 1-50 (about a minute;
# a run's sd on the small sets is 2-6 points, so 5 seeds could not resolve a target within one).
reproduce-auto: $(EXT)
	/usr/bin/python3 scripts/learners_accuracy.py --algorithm auto --no-reference --runs 50 --data $(PAPER_DATA) --out results/auto_targets.md

# Issue 33: `auto` against each learner it could pick trained alone (and rdt, the majority rate or mean)
# on all 25 sets of ../shared/datasets at ε = 0.25, 1, 4: 30 splits (10 above 2000 training rows, 3 above
# 20000), seeded per split; regret, picks and targets into results/auto_transfer.md, every per-split score
# into results/auto_transfer.json, and auto's time on 100 rows. QUICK=1: four small sets, 2 splits, ε = 1,
# under build/. Run it under nice on a shared machine: `nice -n 19 make reproduce-auto-all`.
# Then, from those scores, whether a threshold rule chosen on 17 sets picks well on the 18th
# (scripts/auto_rule_lodo.py: results/auto_rule_lodo.md; skipped with QUICK=1).
reproduce-auto-all: $(EXT)
	/usr/bin/python3 scripts/auto_transfer.py --data $(PAPER_DATA) $(if $(QUICK),--quick,)
	$(if $(QUICK),,cd scripts && /usr/bin/python3 auto_rule_lodo.py --data $(PAPER_DATA))

# The tables of docs/results.md's paper-protocol and defaults sections (about 20 minutes).
reproduce-tables: $(EXT)
	/usr/bin/python3 scripts/paper_accuracy.py --runs 50 --out results/paper_table.md
	/usr/bin/python3 scripts/paper_accuracy.py --runs 50 --splits global --out results/paper_table_global.md
	/usr/bin/python3 scripts/paper_reference.py --runs 200 --out results/paper_reference.md
	/usr/bin/python3 scripts/diprime_accuracy.py --out results/diprime.md
	/usr/bin/python3 scripts/defaults.py --out results/defaults_paper_sets.md
	/usr/bin/python3 scripts/defaults.py --all --runs 5 --holdout 10 --out results/defaults.md
	/usr/bin/python3 scripts/defaults.py --all --runs 30 --holdout 30 \
	    --datasets iris,balance_scale,congressional_voting,banknote,car --out results/defaults_small_sets.md

# The headline benchmark (1,000,000 rows), matrix forests end to end (Car, adult), then the scaling report (10^4 ... 10^7 rows, trees,
# depth) into results/scaling.md with plots, then shard mode on Dask (4 shards of 10^6 rows against one rdt_fit over their
# union, a round's fixed cost, a site's memory). QUICK=1 stops the scaling report at 10^6 rows and writes it under build/,
# and gives each shard 10^5 rows.
bench: $(EXT)
	/usr/bin/python3 scripts/bench.py
	/usr/bin/python3 scripts/bench_matrix.py
	/usr/bin/python3 scripts/bench_learners.py $(if $(QUICK),--rows 100000,)
	/usr/bin/python3 scripts/scaling.py $(if $(QUICK),--quick --out build/scaling-quick,)
	/usr/bin/python3 scripts/bench_shards.py $(if $(QUICK),--rows 100000,)

demo:
	bash examples/demo.sh

clean:
	rm -rf dist build

# ---- hostile input: fuzzing and valgrind (tests/fuzz/) --------------------
# make fuzz          libFuzzer + ASan + UBSan builds of tests/fuzz/fuzz_{model,options,import}.c
#                    (clang), each run FUZZ_SECONDS on a copy of its seed corpus in
#                    build/fuzz/; crashes are written to build/fuzz/crashes/.
# make fuzz-replay   the same targets built with $(CC) and tests/fuzz/replay.c, run over
#                    tests/fuzz/corpus/ (make test runs them too).
# make test-valgrind build/test_core, build/test_learners, build/test_boost and the SQL suite under valgrind.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_MAX_LEN ?= 65536
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# FUZZ_DEFS: e.g. -DRDT_FUZZ_STRICT_CANONICAL (see tests/fuzz/fuzz_model.c; a change
# needs make -B). FUZZ_ARGS: more libFuzzer flags, e.g. -fork=2 -ignore_crashes=1.
FUZZ_DEFS ?=
FUZZ_ARGS ?=
FUZZ_TARGETS := model options import
FUZZ_HEADERS := tests/fuzz/fuzz_common.h $(HEADERS)
VALGRIND ?= valgrind

.PHONY: fuzz fuzz-replay test-valgrind

build/fuzz/fuzz_model build/fuzz/fuzz_options build/fuzz/fuzz_import: build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(CORE_SRC) $(FUZZ_HEADERS)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(ALL_CFLAGS) $(FUZZ_FLAGS) $(FUZZ_DEFS) -o $@ $< $(CORE_SRC) $(SODIUM_LIBS) -lm

build/fuzz-replay-model build/fuzz-replay-options build/fuzz-replay-import: build/fuzz-replay-%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(CORE_SRC) $(FUZZ_HEADERS)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ tests/fuzz/replay.c $< $(CORE_SRC) $(SODIUM_LIBS) -lm

fuzz: build/fuzz/fuzz_model build/fuzz/fuzz_options build/fuzz/fuzz_import
	@mkdir -p build/fuzz/crashes
	@for t in $(FUZZ_TARGETS); do \
	  rm -rf build/fuzz/corpus-$$t; cp -r tests/fuzz/corpus/$$t build/fuzz/corpus-$$t; \
	  echo "# fuzz_$$t: $(FUZZ_SECONDS) s, log in build/fuzz/fuzz_$$t.log"; \
	  build/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) -timeout=30 \
	    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/$$t- $(FUZZ_ARGS) \
	    build/fuzz/corpus-$$t > build/fuzz/fuzz_$$t.log 2>&1; rc=$$?; \
	  grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done |^stat::|ERROR|SUMMARY|Test unit written' build/fuzz/fuzz_$$t.log; \
	  grep -m 12 -E '^ +#[0-9]+ 0x' build/fuzz/fuzz_$$t.log; \
	  echo "# fuzz_$$t: exit $$rc, corpus build/fuzz/corpus-$$t: $$(ls build/fuzz/corpus-$$t | wc -l) files"; \
	  [ $$rc -eq 0 ] || fail=1; \
	done; exit $${fail:-0}

fuzz-replay: build/fuzz-replay-model build/fuzz-replay-options build/fuzz-replay-import
	@fail=0; for t in $(FUZZ_TARGETS); do build/fuzz-replay-$$t tests/fuzz/corpus/$$t || fail=1; done; exit $$fail

# valgrind's --error-exitcode=99 marks its findings; the SQL runner fails a case
# whose shell exits 99 (see tests/valgrind-sqlite3.sh).
test-valgrind: $(EXT) build/test_core build/test_learners build/test_boost build/fuzz-replay-model build/fuzz-replay-options build/fuzz-replay-import
	@fail=0; \
	echo "# core unit tests under valgrind"; \
	$(VALGRIND) -q --error-exitcode=99 --leak-check=full build/test_core || { echo "not ok - build/test_core under valgrind (exit $$?)"; fail=1; }; \
	$(VALGRIND) -q --error-exitcode=99 --leak-check=full build/test_learners || { echo "not ok - build/test_learners under valgrind (exit $$?)"; fail=1; }; \
	$(VALGRIND) -q --error-exitcode=99 --leak-check=full build/test_boost || { echo "not ok - build/test_boost under valgrind (exit $$?)"; fail=1; }; \
	echo "# fuzz corpus replay under valgrind"; \
	for t in $(FUZZ_TARGETS); do \
	  RDT_FUZZ_REPLAY_TIMEOUT=1800 $(VALGRIND) -q --error-exitcode=99 --leak-check=full \
	    build/fuzz-replay-$$t tests/fuzz/corpus/$$t || fail=1; \
	done; \
	echo "# SQL tests, sqlite3 under valgrind"; \
	SQLITE3=$(CURDIR)/tests/valgrind-sqlite3.sh RDT_CASE_TIMEOUT=$${RDT_CASE_TIMEOUT:-1800} RDT_CASE_BUDGET_MS=0 \
	  bash tests/sql_runner.sh || fail=1; \
	exit $$fail
