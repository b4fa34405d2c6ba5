# SPDX-License-Identifier: BSD-2-Clause
# ibsm - InfiniBand Subnet Manager. GNU make + pkg-config; everything lands in $(B) (build/).
#
#   make                     build/ibsm, build/plugins/*.so, build/tests/plugins/*.so
#   make B=DIR OPT=.. CFLAGS=.. LDFLAGS=..   the same into another tree (sanitized builds use it)
#   make check               deps, both trees, then every test under one prove run
#   make demo | deps | bench | fuzz | install | clean
#   (debian/ builds the .deb packages: dpkg-buildpackage -us -uc -b)
PREFIX  ?= /usr/local
SYSCONFDIR ?= /etc
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
PLUGIN_INSTALL_DIR ?= $(PREFIX)/lib/ibsm/plugins
LIBEXEC_DIR ?= $(PREFIX)/libexec/ibsm
PKGCONFIG_DIR ?= $(PREFIX)/share/pkgconfig
MAN_DIR ?= $(PREFIX)/share/man
DESTDIR ?=
CC      ?= cc
B       ?= build
OPT     ?= -O2
CFLAGS  ?=
LDFLAGS ?=

PKGS      = libibumad libibmad glib-2.0 gmodule-2.0 yaml-0.1
DEPS_PKGS = libibumad-dev libibmad-dev libglib2.0-dev libyaml-dev ibsim-utils libumad2sim0 \
            infiniband-diags ibutils opensm pkg-config python3 perl valgrind gdb \
            build-essential dpkg-dev debhelper lintian man-db groff-base mandoc logrotate systemd procps \
            chromium linux-perf
# what the tests need beyond building: OpenSM/osmtest judge and stand beside ibsm; the
# packaging test builds the .debs (dpkg-dev, debhelper; lintian judges them), renders and lints the man pages
# (man-db, groff-base, mandoc) and checks the logrotate snippet and the units (logrotate -d,
# systemd-analyze verify; procps: the units' /bin/kill); chromium: tests/sim/64-report.t renders
# the fabric report headless; linux-perf: the flame graphs of make bench (bench/flame.py); gdb:
# the backtraces of an SM that crashed in a sim test (tests/sim/harness.py, 84-crash-evidence)

# ---- pkg-config: once, and a missing package is an error that names it ----
# (not for the goals that install the packages, or that only call make again after doing so)
NO_PKG_GOALS = deps deps-fuzz clean check demo bench fuzz install-test
ifneq ($(filter-out $(NO_PKG_GOALS),$(or $(MAKECMDGOALS),all)),)
PKG_MISSING := $(strip $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) && echo ok),,$(p))))
ifneq ($(PKG_MISSING),)
$(error pkg-config cannot find: $(PKG_MISSING) (run `make deps`, or install their -dev packages))
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS)) -lpthread -lm
endif

WARN    = -Wall -Wextra -Werror
DEPFL   = -MMD -MP
SAN     = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_B  = build/asan
GLIB_CFLAGS := $(shell pkg-config --cflags glib-2.0 2>/dev/null)
GLIB_LIBS   := $(shell pkg-config --libs glib-2.0 2>/dev/null)
CORE_CFLAGS = -std=gnu11 -g $(WARN) $(DEPFL) -D_GNU_SOURCE -Iinclude -Icore -I. -I$(B)/gen
# the policy library: position-independent, so the engines that read policy files link the
# same objects as the daemon; hidden, so no engine exports a parser. It sees the SDK, policy/
# and glib only.
POLICY_CFLAGS = -std=gnu11 -g $(WARN) $(DEPFL) -D_GNU_SOURCE -fPIC -fvisibility=hidden \
                -Iinclude -I. $(GLIB_CFLAGS)
# the graph library (graph/: channel dependency graphs), the same way: the core and the
# engines that give routes virtual lanes link it; it sees nothing but itself and libc.
GRAPH_CFLAGS = -std=gnu11 -g $(WARN) $(DEPFL) -D_GNU_SOURCE -fPIC -fvisibility=hidden -I.
# engines see the SDK, their shared helpers, and the policy and graph libraries
PLUGIN_CFLAGS = -std=gnu11 -g $(WARN) $(DEPFL) -fPIC -fvisibility=hidden -Iinclude -Iplugins/common -I.
PLUGIN_LDFLAGS = -shared -Wl,--no-undefined

CORE_SRC   = $(filter-out core/ops/main.c,$(wildcard core/*/*.c))
CORE_OBJ   = $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC))
POLICY_SRC = $(wildcard policy/*.c)
POLICY_OBJ = $(patsubst %.c,$(B)/pic/%.o,$(POLICY_SRC))
GRAPH_SRC  = $(wildcard graph/*.c)
GRAPH_OBJ  = $(patsubst %.c,$(B)/pic/%.o,$(GRAPH_SRC))
CORE_LIB   = $(B)/libibsmcore.a
POLICY_LIB = $(B)/libibsmpolicy.a
GRAPH_LIB  = $(B)/libibsmgraph.a
PLUGINS    = $(filter-out common,$(notdir $(wildcard plugins/*)))
# plugins/NAME/ALIASES: more engines built from one folder (ALIAS@NAME; see ALIAS_RULES)
PLUGIN_ALIASES = $(foreach p,$(PLUGINS),$(foreach a,$(if $(wildcard plugins/$(p)/ALIASES),\
                 $(file < plugins/$(p)/ALIASES)),$(a)@$(p)))
PLUGIN_SO  = $(patsubst %,$(B)/plugins/%.so,$(PLUGINS)) $(B)/plugins/torus-2QoS.so \
             $(foreach x,$(PLUGIN_ALIASES),$(B)/plugins/$(firstword $(subst @, ,$(x))).so)
plugin_objs = $(patsubst %.c,$(B)/obj/%.o,$(wildcard plugins/$(1)/*.c))
PLUGIN_OBJ = $(foreach p,$(PLUGINS),$(call plugin_objs,$(p)))
COMMON_OBJ = $(call plugin_objs,common)
COMMON_LIB = $(B)/libplugincommon.a
PATHS_H    = $(B)/gen/ibsm_paths.h
TPLUGIN_SO = $(patsubst tests/plugins/%.c,$(B)/tests/plugins/%.so,$(wildcard tests/plugins/*.c))
TTOOL_SO   = $(patsubst tests/tools/%.c,$(B)/tests/tools/%.so,$(wildcard tests/tools/*.c))
TCLIENT    = $(patsubst tests/clients/%.c,$(B)/tests/clients/%,$(wildcard tests/clients/*.c))
UNIT_SRC   = $(wildcard tests/unit/test_*.c)
UNIT_BIN   = $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
UNIT_HELPERS = $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))

.PHONY: all check unit sim units test-plugins demo deps bench chaos install install-test clean fuzz \
        deps-fuzz FORCE
all: $(B)/ibsm $(B)/ibsm-cli $(PLUGIN_SO) test-plugins

# ---- paths the binary embeds (the .c files that use them include ibsm_paths.h): written
#      only when its text would change, so a new PREFIX rebuilds exactly those, and an
#      unchanged one leaves the tree up to date (make -q) ----
define PATHS_H_TEXT
/* generated by make: install paths */
#define IBSM_PLUGIN_DIR "$(PLUGIN_INSTALL_DIR)"
#define IBSM_SYSCONFDIR "$(SYSCONFDIR)"
endef
ifneq ($(file < $(PATHS_H)),$(PATHS_H_TEXT))
$(PATHS_H): FORCE
endif
$(PATHS_H):
	@mkdir -p $(dir $@)
	@printf '/* generated by make: install paths */\n#define IBSM_PLUGIN_DIR "%s"\n#define IBSM_SYSCONFDIR "%s"\n' \
	  '$(PLUGIN_INSTALL_DIR)' '$(SYSCONFDIR)' > $@

# ---- the daemon: the core library, the policy library, main ----
# (the header is made before any core object; only those that include it depend on it)
$(B)/obj/core/%.o: core/%.c | $(PATHS_H)
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) $(OPT) $(PKG_CFLAGS) $(CFLAGS) -c $< -o $@
# (position-independent, so in a folder of their own: a tree built before never links its
# obj/policy objects into an engine)
$(B)/pic/policy/%.o: policy/%.c
	@mkdir -p $(dir $@)
	$(CC) $(POLICY_CFLAGS) $(OPT) $(CFLAGS) -c $< -o $@
$(B)/pic/graph/%.o: graph/%.c
	@mkdir -p $(dir $@)
	$(CC) $(GRAPH_CFLAGS) $(OPT) $(CFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	@rm -f $@; ar rcs $@ $^
$(POLICY_LIB): $(POLICY_OBJ)
	@rm -f $@; ar rcs $@ $^
$(GRAPH_LIB): $(GRAPH_OBJ)
	@rm -f $@; ar rcs $@ $^

$(B)/ibsm: $(B)/obj/core/ops/main.o $(CORE_LIB) $(POLICY_LIB) $(GRAPH_LIB)
	$(CC) $(OPT) $(CFLAGS) -o $@ $^ $(PKG_LIBS) $(LDFLAGS)

# the console client (tools/ibsm-cli.c): libc only
$(B)/ibsm-cli: tools/ibsm-cli.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g $(WARN) $(DEPFL) -D_GNU_SOURCE $(OPT) $(CFLAGS) -o $@ $< $(LDFLAGS)

# ---- engines: plugins/NAME/*.c, and from plugins/common (an archive) what they use; one rule
#      for all. Their objects are kept (.SECONDARY), so a second make has nothing to do ----
$(B)/obj/plugins/%.o: plugins/%.c
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) $(OPT) $(CFLAGS) -DIBSM_PLUGIN_NAME='"$(firstword $(subst /, ,$*))"' -c $< -o $@
.SECONDARY: $(PLUGIN_OBJ)

$(COMMON_LIB): $(COMMON_OBJ)
	@rm -f $@; ar rcs $@ $^

.SECONDEXPANSION:
plugin_link = $(filter %.o,$^) $(COMMON_LIB) $(filter $(POLICY_LIB),$^) $(GRAPH_LIB)
$(B)/plugins/%.so: $$(call plugin_objs,$$*) $(COMMON_LIB) $(GRAPH_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(CFLAGS) $(PLUGIN_LDFLAGS) -o $@ $(plugin_link) $(PLUGIN_LIBS) -lpthread $(LDFLAGS)

# torus-2QoS reads torus-2QoS.conf and the qos_* options, and the default routing orchestrator
# (plugins/chain, chain.so) the port-group, topology and chain policies, with the policy
# library: each links the archive (the parsers it calls, nothing more, all hidden) and glib.
# torus-2QoS is also found by OpenSM's name, torus-2QoS (a symlink).
POLICY_PLUGINS = $(B)/plugins/torus2qos.so $(B)/plugins/chain.so
$(B)/obj/plugins/torus2qos/%.o $(B)/obj/plugins/chain/%.o: PLUGIN_CFLAGS += -I. $(GLIB_CFLAGS)
$(POLICY_PLUGINS): $(POLICY_LIB)
$(POLICY_PLUGINS): PLUGIN_LIBS = $(GLIB_LIBS)
$(B)/plugins/torus-2QoS.so: $(B)/plugins/torus2qos.so
	@ln -sf torus2qos.so $@

# One folder, several engines: plugins/NAME/ALIASES lists further .so names (words only). Each
# ALIAS.so is the folder's sources compiled again (into obj/alias/ALIAS/) and linked as NAME.so
# is; every plugin object is compiled with -DIBSM_PLUGIN_NAME='"the .so name"', so one source
# tells its names apart (plugins/sssp: sssp.so and dfsssp.so; plugins/updn: dnup.so).
alias_objs = $(patsubst %.c,$(B)/obj/alias/$(1)/%.o,$(wildcard plugins/$(2)/*.c))
define ALIAS_RULES
$(B)/obj/alias/$(1)/plugins/$(2)/%.o: plugins/$(2)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(PLUGIN_CFLAGS) $$(OPT) $$(CFLAGS) -DIBSM_PLUGIN_NAME='"$(1)"' -c $$< -o $$@
$(B)/plugins/$(1).so: $(call alias_objs,$(1),$(2)) $$(COMMON_LIB) $$(GRAPH_LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(OPT) $$(CFLAGS) $$(PLUGIN_LDFLAGS) -o $$@ $$(plugin_link) $$(PLUGIN_LIBS) -lpthread $$(LDFLAGS)
.SECONDARY: $(call alias_objs,$(1),$(2))
endef
$(foreach x,$(PLUGIN_ALIASES),$(eval $(call ALIAS_RULES,$(firstword $(subst @, ,$(x))),$(lastword $(subst @, ,$(x))))))

# Test engines (tests/plugins/NAME.c). abi10_*.c are built against the frozen ABI 1.0 headers.
$(B)/tests/plugins/%.so: tests/plugins/%.c
	@mkdir -p $(dir $@)
	$(CC) $(subst -Iinclude,$(if $(filter abi10_%,$*),-Itests/plugins/abi-1.0,-Iinclude),$(PLUGIN_CFLAGS)) \
	  $(OPT) $(CFLAGS) $(PLUGIN_LDFLAGS) -o $@ $< $(LDFLAGS)
# Test tools: LD_PRELOAD shims the simulated tests put beside libumad2sim (e.g. an SMP counter).
# A tool's helpers, if any, are in tests/tools/NAME/ (rmpp: its protocol engine).
$(B)/tests/tools/%.so: tests/tools/%.c $$(wildcard tests/tools/$$*/*.c tests/tools/$$*/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g $(WARN) $(DEPFL) -D_GNU_SOURCE -fPIC $(OPT) $(CFLAGS) -shared -o $@ $< \
	  $(wildcard tests/tools/$*/*.c) -ldl $(LDFLAGS)
# Test clients: programs the simulated tests run on a host (an SA event subscriber).
$(B)/tests/clients/%: tests/clients/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g $(WARN) $(DEPFL) -D_GNU_SOURCE $(OPT) $(CFLAGS) -o $@ $< -libmad -libumad $(LDFLAGS)
test-plugins: $(TPLUGIN_SO) $(TTOOL_SO) $(TCLIENT)

# ---- unit tests (GTest, TAP), built in whatever tree B is (make check: the sanitized one) ----
# UNIT_EXTRA_<test>: sources outside the core a test links (a test tool's engine).
UNIT_EXTRA_test_rmpp = tests/tools/rmpp/rmpp_engine.c tests/tools/rmpp/tail_stash.c
$(B)/tests/unit/%: tests/unit/%.c $(UNIT_HELPERS) $$(UNIT_EXTRA_$$*) $(CORE_LIB) $(POLICY_LIB) $(GRAPH_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -Itests/unit $(OPT) $(PKG_CFLAGS) $(CFLAGS) \
	  -DTEST_SRCDIR='"$(CURDIR)"' -DTEST_PLUGIN_DIR='"$(CURDIR)/$(B)/plugins"' \
	  -DTEST_TPLUGIN_DIR='"$(CURDIR)/$(B)/tests/plugins"' \
	  -o $@ $< $(UNIT_EXTRA_$*) $(UNIT_HELPERS) $(CORE_LIB) $(POLICY_LIB) $(GRAPH_LIB) $(PKG_LIBS) $(LDFLAGS)
units: $(UNIT_BIN) $(PLUGIN_SO) test-plugins

# ---- set-up, tests, demo, bench ----
deps:
	@sh tools/deps.sh $(DEPS_PKGS)

SAN_MAKE = $(MAKE) B=$(ASAN_B) OPT="-O1 $(SAN)" LDFLAGS="$(SAN)"
# Tests run two at a time (TEST_JOBS): each has its own ibsim socket and scratch directories,
# and every wait is for an event with a ceiling that IBSM_TEST_SLOW raises (doc/testing.md)
TEST_JOBS ?= 2
IBSM_TEST_SLOW ?= 2
TEST_ENV = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 IBSM_TEST_SLOW=$(IBSM_TEST_SLOW)
ASAN_UNIT_BIN = $(patsubst tests/unit/%.c,$(ASAN_B)/tests/unit/%,$(UNIT_SRC))

unit:
	$(SAN_MAKE) units
	$(TEST_ENV) prove -e tests/tap-exec $(ASAN_UNIT_BIN)

sim: all
	IBSM_TEST_SLOW=$(IBSM_TEST_SLOW) prove -j$(TEST_JOBS) -e tests/tap-exec tests/sim/*.t

# One prove run over the architecture checks, the unit tests (ASan/UBSan), the simulated
# tests, and the simulated bring-up/daemon/input tests again against the sanitized ibsm and
# engines (tests/sanitized), so CI reads one closing line. The sanitized run, the longest
# test, goes first so that the rest runs beside it.
check: deps
	$(MAKE) all
	$(SAN_MAKE) all units
	$(TEST_ENV) IBSM_ASAN_BUILD=$(CURDIR)/$(ASAN_B) prove -j$(TEST_JOBS) -e tests/tap-exec tests/sanitized/*.t \
	  tests/arch/*.t $(ASAN_UNIT_BIN) tests/sim/*.t

demo: deps
	$(MAKE) all
	sh tools/demo.sh

# The chaos run (doc/chaos.md): CHAOS_ARGS, e.g. "--minutes 60 --hosts 8192 --seed 7"
chaos: deps
	$(MAKE) all
	python3 tests/chaos/chaos.py $(CHAOS_ARGS)

bench: deps
	$(MAKE) all
	python3 bench/bench.py $(BENCH_ARGS)
	python3 bench/sa_bench.py $(SA_BENCH_ARGS)
	python3 bench/mcast_bench.py $(MCAST_BENCH_ARGS)
	python3 bench/qos_bench.py $(QOS_BENCH_ARGS)
	python3 bench/torus_bench.py $(TORUS_BENCH_ARGS)
	python3 bench/engines_bench.py $(ENGINES_BENCH_ARGS)
	python3 bench/repair_bench.py $(REPAIR_BENCH_ARGS)
	python3 bench/scale_bench.py $(SCALE_BENCH_ARGS)
	python3 bench/flame.py $(FLAME_ARGS)

# libFuzzer targets (clang): tests/fuzz/fuzz_<target>.c over the core and policy sources
# (compiled again by clang, instrumented for coverage, not from the archives). Findings go to
# $(B)/fuzz/; FUZZ_MERGE=1 merges new coverage into tests/fuzz/corpus/<target>/ (to commit;
# make check replays that corpus under ASan with gcc).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
deps-fuzz:
	@sh tools/deps.sh $(DEPS_PKGS) clang libclang-rt-14-dev

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(CORE_SRC) $(POLICY_SRC) $(GRAPH_SRC) | $(PATHS_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -g -O1 $(WARN) -Wno-unknown-warning-option -fsanitize=fuzzer,address,undefined \
	  -DIBSM_LIBFUZZER -D_GNU_SOURCE -Iinclude -Icore -I. -I$(B)/gen $(shell pkg-config --cflags $(PKGS)) \
	  -o $@ $< $(CORE_SRC) $(POLICY_SRC) $(GRAPH_SRC) $(shell pkg-config --libs $(PKGS)) -lpthread -lm

fuzz: deps-fuzz
	$(MAKE) $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(B)/fuzz/corpus-$$t tests/fuzz/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(B)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -artifact_prefix=$(B)/fuzz/$$t- \
	    $(B)/fuzz/corpus-$$t tests/fuzz/corpus/$$t tests/fabrics || exit 1; \
	  if [ "$(FUZZ_MERGE)" = 1 ]; then $(B)/fuzz/fuzz_$$t -merge=1 tests/fuzz/corpus/$$t $(B)/fuzz/corpus-$$t; fi; \
	done

# The SDK's pkg-config file: its version is the plugin ABI (IBSM_ABI_MAJOR.IBSM_ABI_MINOR).
ABI_VERSION = $(shell sed -n 's/^\#define IBSM_ABI_MAJOR \([0-9]*\).*/\1/p' include/ibsm/routing.h).$(shell \
              sed -n 's/^\#define IBSM_ABI_MINOR \([0-9]*\).*/\1/p' include/ibsm/routing.h)
$(B)/ibsm-plugin.pc: etc/ibsm-plugin.pc.in include/ibsm/routing.h FORCE
	@mkdir -p $(dir $@)
	@sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@PLUGINDIR@|$(PLUGIN_INSTALL_DIR)|g' \
	  -e 's|@ABI_VERSION@|$(ABI_VERSION)|g' $< > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# The configuration template /etc/ibsm/ibsm.yaml, from the binary itself (ibsm --create-config,
# with an empty file so no installed configuration leaks in): every key of the core and of the
# engines built here (and of any found in PLUGIN_INSTALL_DIR), each at its default.
$(B)/ibsm.yaml: $(B)/ibsm $(PLUGIN_SO)
	@: > $@.empty
	@IBSM_PLUGIN_PATH= $(B)/ibsm -F $@.empty -c $@.tmp >/dev/null && rm -f $@.empty && mv $@.tmp $@

# What the installed files name, written for this PREFIX/SYSCONFDIR: etc/ and doc/man/ spell
# the Debian layout (/usr/sbin/ibsm, /usr/lib/ibsm, /usr/libexec/ibsm, /usr/share/pkgconfig, /etc,
# /lib/systemd/system).
INSTALL_SED = -e 's|/usr/sbin/ibsm|$(PREFIX)/sbin/ibsm|g' \
  -e 's|/usr/lib/ibsm/plugins|$(PLUGIN_INSTALL_DIR)|g' \
  -e 's|/usr/libexec/ibsm/ibsm-ports|$(LIBEXEC_DIR)/ibsm-ports|g' \
  -e 's|/usr/include/ibsm|$(PREFIX)/include/ibsm|g' \
  -e 's|/usr/share/pkgconfig|$(PKGCONFIG_DIR)|g' \
  -e 's|/usr/share/doc/ibsm|$(PREFIX)/share/doc/ibsm|g' \
  -e 's|/usr/share/man|$(MAN_DIR)|g' \
  -e 's,\(^\|[^r]\)/lib/systemd/system,\1$(SYSTEMD_UNIT_DIR),g' \
  -e 's|/etc/ibsm/|$(SYSCONFDIR)/ibsm/|g' -e 's|/etc/default/ibsm|$(SYSCONFDIR)/default/ibsm|g' \
  -e 's|/etc/opensm/|$(SYSCONFDIR)/opensm/|g' -e 's|/etc/logrotate.d/ibsm|$(SYSCONFDIR)/logrotate.d/ibsm|g'
MAN_PAGES = $(wildcard doc/man/*.[1-8])

# Every directory under DESTDIR is created here; the configuration files (ibsm.yaml, the
# defaults file) are never written over an existing one.
install: all $(B)/ibsm-plugin.pc $(B)/ibsm.yaml
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PLUGIN_INSTALL_DIR) $(DESTDIR)$(LIBEXEC_DIR) \
	  $(DESTDIR)$(PREFIX)/include/ibsm $(DESTDIR)$(PKGCONFIG_DIR)
	install -m 755 $(B)/ibsm $(DESTDIR)$(PREFIX)/sbin/ibsm
	install -m 755 $(B)/ibsm-cli $(DESTDIR)$(PREFIX)/sbin/ibsm-cli
	install -m 755 $(filter-out %/torus-2QoS.so,$(PLUGIN_SO)) $(DESTDIR)$(PLUGIN_INSTALL_DIR)/
	ln -sf torus2qos.so $(DESTDIR)$(PLUGIN_INSTALL_DIR)/torus-2QoS.so
	install -m 644 include/ibsm/*.h $(DESTDIR)$(PREFIX)/include/ibsm/
	install -m 644 $(B)/ibsm-plugin.pc $(DESTDIR)$(PKGCONFIG_DIR)/ibsm-plugin.pc
	install -d $(DESTDIR)$(SYSCONFDIR)/ibsm $(DESTDIR)$(SYSCONFDIR)/default \
	  $(DESTDIR)$(SYSCONFDIR)/logrotate.d $(DESTDIR)$(SYSTEMD_UNIT_DIR) \
	  $(DESTDIR)$(PREFIX)/share/doc/ibsm \
	  $(sort $(patsubst .%,$(DESTDIR)$(MAN_DIR)/man%,$(suffix $(MAN_PAGES))))
	[ -e $(DESTDIR)$(SYSCONFDIR)/ibsm/ibsm.yaml ] || \
	  install -m 644 $(B)/ibsm.yaml $(DESTDIR)$(SYSCONFDIR)/ibsm/ibsm.yaml
	[ -e $(DESTDIR)$(SYSCONFDIR)/default/ibsm ] || \
	  install -m 644 etc/default/ibsm $(DESTDIR)$(SYSCONFDIR)/default/ibsm
	sed $(INSTALL_SED) etc/logrotate.d/ibsm > $(DESTDIR)$(SYSCONFDIR)/logrotate.d/ibsm
	sed $(INSTALL_SED) etc/ibsm-ports > $(DESTDIR)$(LIBEXEC_DIR)/ibsm-ports
	chmod 755 $(DESTDIR)$(LIBEXEC_DIR)/ibsm-ports
	for u in ibsm.service ibsm@.service; do \
	  sed $(INSTALL_SED) etc/$$u > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/$$u && \
	  chmod 644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/$$u || exit 1; \
	done
	for m in $(MAN_PAGES); do \
	  sed $(INSTALL_SED) $$m > $(DESTDIR)$(MAN_DIR)/man$${m##*.}/$${m##*/} && \
	  chmod 644 $(DESTDIR)$(MAN_DIR)/man$${m##*.}/$${m##*/} || exit 1; \
	done
	install -m 644 README.md LICENSE doc/opensm-dropin.md doc/console.md $(DESTDIR)$(PREFIX)/share/doc/ibsm/
	install -d $(DESTDIR)$(PREFIX)/share/doc/ibsm/examples/engine
	install -m 644 examples/engine/Makefile examples/engine/README.md examples/engine/*.c \
	  $(DESTDIR)$(PREFIX)/share/doc/ibsm/examples/engine/

clean:
	rm -rf $(B)

FORCE:

-include $(shell find $(B)/obj $(B)/pic $(B)/tests -name '*.d' 2>/dev/null)
