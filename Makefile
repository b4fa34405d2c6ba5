# ibsm - InfiniBand Subnet Manager. GNU make + pkg-config; everything lands in build/.
PREFIX  ?= /usr/local
SYSCONFDIR ?= /etc
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=
CC      ?= cc
PKGS     = libibumad libibmad glib-2.0 gmodule-2.0 yaml-0.1
DEPS_PKGS = libibumad-dev libibmad-dev libglib2.0-dev libyaml-dev ibsim-utils libumad2sim0 \
            infiniband-diags ibutils pkg-config python3 perl valgrind
BENCH_PKGS = opensm

WARN     = -Wall -Wextra -Werror
BASE_CFLAGS = -std=gnu11 -g $(WARN) -Iinclude -Icore -Ipolicy -D_GNU_SOURCE -DIBSM_PLUGIN_DIR='"$(PLUGIN_INSTALL_DIR)"'
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
OPT      ?= -O2
CFLAGS  ?=
SAN      = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
PLUGIN_INSTALL_DIR = $(PREFIX)/lib/ibsm/plugins

B = build
CORE_SRC   = $(filter-out core/main.c,$(wildcard core/*.c)) $(wildcard policy/*.c)
CORE_OBJ   = $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC))
ASAN_OBJ   = $(patsubst %.c,$(B)/asan/%.o,$(CORE_SRC))
PLUGINS    = $(filter-out common,$(notdir $(wildcard plugins/*)))
# plugins/common/*.c: helpers compiled into every engine (not an engine itself)
PLUGIN_COMMON = $(wildcard plugins/common/*.c plugins/common/*.h)
PLUGIN_SO  = $(patsubst %,$(B)/plugins/%.so,$(PLUGINS))
ASAN_PLUGIN_SO = $(patsubst %,$(B)/asan/plugins/%.so,$(PLUGINS))
TPLUGIN_SRC = $(wildcard tests/plugins/*.c)
TPLUGIN_SO = $(patsubst tests/plugins/%.c,$(B)/asan/tests/plugins/%.so,$(TPLUGIN_SRC))
SIM_TPLUGIN_SO = $(patsubst tests/plugins/%.c,$(B)/tests/plugins/%.so,$(TPLUGIN_SRC))
UNIT_SRC   = $(wildcard tests/unit/test_*.c)
UNIT_BIN   = $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
UNIT_HELPERS = $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))

.PHONY: all check unit sim unit-build sim-build demo deps bench install clean fuzz deps-bench deps-fuzz
all: $(B)/ibsm $(PLUGIN_SO)

# ---- the daemon and its plugins ----
$(B)/obj/%.o: %.c $(wildcard include/ibsm/*.h core/*.h policy/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) $(PKG_CFLAGS) $(CFLAGS) -c $< -o $@

$(B)/libibsmcore.a: $(CORE_OBJ)
	@rm -f $@; ar rcs $@ $^

$(B)/ibsm: $(B)/obj/core/main.o $(B)/libibsmcore.a
	$(CC) $(OPT) $(CFLAGS) -o $@ $^ $(PKG_LIBS) $(LDFLAGS)

# A plugin is every .c in plugins/NAME, built only against include/ibsm (the SDK).
.SECONDEXPANSION:
$(B)/plugins/%.so: $$(wildcard plugins/%/*.c plugins/%/*.h) $(PLUGIN_COMMON) $(wildcard include/ibsm/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g $(WARN) -Iinclude -Iplugins/common $(OPT) -fPIC -shared -fvisibility=hidden $(CFLAGS) \
	  -o $@ $(filter %.c,$^) -lpthread

# Test engines for the simulated tests, loaded by the plain build/ibsm.
$(B)/tests/plugins/%.so: tests/plugins/%.c $(wildcard include/ibsm/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g $(WARN) -Iinclude $(OPT) -fPIC -shared -fvisibility=hidden -o $@ $<

# ---- sanitizer builds for the unit tests ----
$(B)/asan/%.o: %.c $(wildcard include/ibsm/*.h core/*.h policy/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 $(SAN) $(PKG_CFLAGS) -c $< -o $@

$(B)/asan/libibsmcore.a: $(ASAN_OBJ)
	@rm -f $@; ar rcs $@ $^

$(B)/asan/plugins/%.so: $$(wildcard plugins/%/*.c plugins/%/*.h) $(PLUGIN_COMMON) $(wildcard include/ibsm/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g $(WARN) -Iinclude -Iplugins/common -O1 $(SAN) -fPIC -shared -fvisibility=hidden \
	  -o $@ $(filter %.c,$^) -lpthread

$(B)/asan/tests/plugins/%.so: tests/plugins/%.c $(wildcard include/ibsm/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g $(WARN) -Iinclude -O1 $(SAN) -fPIC -shared -fvisibility=hidden -o $@ $<

$(B)/tests/unit/%: tests/unit/%.c $(UNIT_HELPERS) $(B)/asan/libibsmcore.a $(wildcard tests/unit/*.h) $(wildcard tests/fuzz/*.c)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Itests/unit -O1 $(SAN) $(PKG_CFLAGS) \
	  -DTEST_SRCDIR='"$(CURDIR)"' -DTEST_PLUGIN_DIR='"$(CURDIR)/$(B)/asan/plugins"' \
	  -DTEST_TPLUGIN_DIR='"$(CURDIR)/$(B)/asan/tests/plugins"' \
	  -o $@ $< $(UNIT_HELPERS) $(B)/asan/libibsmcore.a $(PKG_LIBS)

# ---- set-up, tests, demo, bench ----
deps:
	@sh tools/deps.sh $(DEPS_PKGS)

deps-bench:
	@sh tools/deps.sh $(DEPS_PKGS) $(BENCH_PKGS)

TEST_ENV = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1

unit-build: all $(UNIT_BIN) $(ASAN_PLUGIN_SO) $(TPLUGIN_SO)
sim-build: all $(SIM_TPLUGIN_SO)

unit: unit-build
	$(TEST_ENV) prove -e '' $(UNIT_BIN)

sim: sim-build
	prove -e '' tests/sim/*.t

# One prove run over unit (ASan/UBSan) and simulated tests, so CI reads one closing line.
check: deps
	$(MAKE) unit-build sim-build
	$(TEST_ENV) prove -e '' $(UNIT_BIN) tests/sim/*.t

demo: deps
	$(MAKE) all
	sh tools/demo.sh

bench: deps-bench
	$(MAKE) all
	python3 bench/bench.py $(BENCH_ARGS)

# libFuzzer targets (clang): tests/fuzz/fuzz_<target>.c over the core sources. Findings go to
# $(B)/fuzz/; FUZZ_MERGE=1 merges new coverage into tests/fuzz/corpus/<target>/ (to commit;
# make check replays that corpus under ASan with gcc).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
deps-fuzz:
	@sh tools/deps.sh $(DEPS_PKGS) clang libclang-rt-14-dev

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(CORE_SRC) $(wildcard core/*.h policy/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -g -O1 $(WARN) -Wno-unknown-warning-option -fsanitize=fuzzer,address,undefined \
	  -DIBSM_LIBFUZZER -Iinclude -Icore -Ipolicy -D_GNU_SOURCE $(PKG_CFLAGS) -o $@ $< $(CORE_SRC) $(PKG_LIBS)

fuzz: deps-fuzz
	$(MAKE) $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(B)/fuzz/corpus-$$t tests/fuzz/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(B)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -artifact_prefix=$(B)/fuzz/$$t- \
	    $(B)/fuzz/corpus-$$t tests/fuzz/corpus/$$t tests/fabrics || exit 1; \
	  if [ "$(FUZZ_MERGE)" = 1 ]; then $(B)/fuzz/fuzz_$$t -merge=1 tests/fuzz/corpus/$$t $(B)/fuzz/corpus-$$t; fi; \
	done

install: all
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PLUGIN_INSTALL_DIR) \
	  $(DESTDIR)$(PREFIX)/include/ibsm $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(B)/ibsm $(DESTDIR)$(PREFIX)/sbin/ibsm
	install -m 755 $(PLUGIN_SO) $(DESTDIR)$(PLUGIN_INSTALL_DIR)/
	install -m 644 include/ibsm/*.h $(DESTDIR)$(PREFIX)/include/ibsm/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@PLUGINDIR@|$(PLUGIN_INSTALL_DIR)|g' \
	  etc/ibsm-plugin.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/ibsm-plugin.pc
	install -d $(DESTDIR)$(SYSCONFDIR)/ibsm $(DESTDIR)$(SYSCONFDIR)/logrotate.d \
	  $(DESTDIR)$(SYSTEMD_UNIT_DIR) $(DESTDIR)$(PREFIX)/share/doc/ibsm
	# the example configuration, never over an existing one
	[ -e $(DESTDIR)$(SYSCONFDIR)/ibsm/ibsm.yaml ] || \
	  install -m 644 etc/ibsm.yaml $(DESTDIR)$(SYSCONFDIR)/ibsm/ibsm.yaml
	install -m 644 etc/logrotate.d/ibsm $(DESTDIR)$(SYSCONFDIR)/logrotate.d/ibsm
	sed -e 's|/usr/sbin/ibsm|$(PREFIX)/sbin/ibsm|g' etc/ibsm.service \
	  > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/ibsm.service
	install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/ibsm/README.md

clean:
	rm -rf $(B)
