# rdt - differentially private random decision tree forests for SQLite.
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
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) -fPIC \
  -DRDT_VERSION_STRING='"$(VERSION)"' -Iext $(SODIUM_CFLAGS) $(SQLITE_CFLAGS)

CORE_SRC := ext/core/rng.c ext/core/noise.c ext/core/select.c ext/core/median.c ext/core/json.c ext/core/schema.c \
            ext/core/options.c ext/core/forest.c ext/core/model.c
SQL_SRC := ext/rdt_ext.c ext/sql_values.c ext/sql_model_cache.c ext/sql_train.c ext/sql_predict.c \
           ext/sql_median.c
HEADERS := $(wildcard ext/*.h ext/core/*.h)

EXT := dist/rdt.$(SOEXT)

.PHONY: all test test-c test-sql test-asan bench demo clean

all: $(EXT)

$(EXT): $(CORE_SRC) $(SQL_SRC) $(HEADERS) VERSION
	@mkdir -p dist
	$(CC) $(ALL_CFLAGS) $(SOFLAGS) -o $@ $(CORE_SRC) $(SQL_SRC) $(SODIUM_LIBS) -lm

build/test_core: tests/test_core.c $(CORE_SRC) $(HEADERS)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ tests/test_core.c $(CORE_SRC) $(SODIUM_LIBS) -lm

# The whole suite: C unit tests of the core, then SQL tests through the
# sqlite3 shell. Ends with "N passed, N failed".
test: $(EXT) build/test_core
	@bash tests/run_all.sh

# Same suite under AddressSanitizer + UndefinedBehaviorSanitizer. The shell is
# not instrumented, so the extension is loaded with the ASan runtime preloaded.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
test-asan:
	@mkdir -p build/asan
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) $(SOFLAGS) -o build/asan/rdt.$(SOEXT) $(CORE_SRC) $(SQL_SRC) $(SODIUM_LIBS) -lm
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o build/asan/test_core tests/test_core.c $(CORE_SRC) $(SODIUM_LIBS) -lm
	@RDT_SANITIZE=1 RDT_EXT=$(CURDIR)/build/asan/rdt RDT_TEST_CORE=build/asan/test_core bash tests/run_all.sh

bench: $(EXT)
	/usr/bin/python3 scripts/bench.py

demo:
	bash examples/demo.sh

clean:
	rm -rf dist build
