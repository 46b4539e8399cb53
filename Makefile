# rsswatch: plain GNU make with pkg-config.
#   make            build build/rsswatch and the client library
#   make check      install missing Debian packages, build, run every test suite
#   make check SANITIZE=1   the same under AddressSanitizer and UBSan (in build-san/)
#   make demo       record the bundled example workload and show the result
#   make bench      rsswatch beside the bash loop, pidstat and a psutil sampler: one table
#                   of ratios in build/bench/ (about 6 minutes; QUICK=1: under a minute)
#   make bench-bin  only build what the benchmarks run (for the scripts in bench/)
#   make lint       the layers' include rule, the store's one-way calls and banned
#                   functions (scripts/lint.sh)
#   make install PREFIX=/usr/local DESTDIR=    (make uninstall, the same variables)
#   make deb        the Debian packages, built from a copy of the tree, into build/deb/

PREFIX  ?= /usr/local
DESTDIR ?=
# where the libraries, their pkg-config file and the systemd unit go (the Debian
# package: lib/<triplet> and /lib/systemd/system, debian/rules)
LIBDIR  ?= $(PREFIX)/lib
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
CC      ?= cc
CFLAGS  ?= -O2 -g
BUILD   ?= build

# Warnings are errors in make check and CI (WERROR=1, which check sets), not in a plain
# make, where a newer compiler's new warnings must not stop a user's build.
WERROR ?= 0
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wno-format-nonliteral $(if $(filter 1,$(WERROR)),-Werror)
ifeq ($(SANITIZE),1)
BUILD := build-san
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

PKGS      := sqlite3 libmicrohttpd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libmicrohttpd's header only: metrics/http.c loads the library with dlopen for --listen.
PKG_LIBS   := $(shell pkg-config --libs sqlite3 2>/dev/null)
# PNG output (plot -o FILE.png, report --png) through librsvg and cairo, where
# pkg-config finds them at build time; NO_PNG=1 builds without (the verbs then say so).
ifneq ($(NO_PNG),1)
ifeq ($(shell pkg-config --exists librsvg-2.0 cairo 2>/dev/null && echo y),y)
# Only the headers: png.c loads librsvg with dlopen at the first PNG (see png.c).
RSVG_CFLAGS := -DHAVE_RSVG $(shell pkg-config --cflags librsvg-2.0 cairo)
endif
endif
# The eBPF peak engine (src/bpf, source/kpeak.c) where clang, bpftool and libbpf are
# found at build time; NO_BPF=1 builds without (the recorder then says so with -v).
# libbpf, libelf and zlib are linked statically: the binary runs where they are not.
# SHARED_ZLIB=1 links zlib's shared library instead (the Debian package: Debian's
# policy is one zlib on the system, which its security updates mend).
ZLIB_LINK = $(if $(filter 1,$(SHARED_ZLIB)),-lz,$(1)/libz.a)
BPF_CLANG ?= clang
BPFTOOL   ?= $(or $(shell command -v bpftool 2>/dev/null),$(wildcard /usr/sbin/bpftool))
ifneq ($(NO_BPF),1)
ifeq ($(shell command -v $(BPF_CLANG) >/dev/null 2>&1 && test -n "$(BPFTOOL)" && \
	pkg-config --exists libbpf libelf zlib 2>/dev/null && echo y),y)
HAVE_BPF  := 1
BPF_LIBDIR := $(shell pkg-config --variable=libdir libbpf)
BPF_LIBS  := $(BPF_LIBDIR)/libbpf.a $(BPF_LIBDIR)/libelf.a $(call ZLIB_LINK,$(BPF_LIBDIR))
BPF_SKEL  := $(BUILD)/gen/bpf/kpeak.skel.h $(BUILD)/gen/bpf/kstacks.skel.h
# the uprobes read the registers of the machine's calling convention (bpf_tracing.h)
BPF_ARCH  := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(firstword $(subst -, ,\
	$(shell $(CC) -dumpmachine)))))
endif
endif
# The stacks' walker and namer (source/unwind.c, record --stacks) on elfutils' libdw
# where pkg-config finds it, with C++ and Rust names demangled by libiberty where its
# header is there; NO_DW=1 builds without (record --stacks then says so). libdw is
# linked statically, like libbpf.
ifneq ($(NO_DW),1)
ifeq ($(shell pkg-config --exists libdw libelf zlib 2>/dev/null && echo y),y)
DW_LIBDIR := $(shell pkg-config --variable=libdir libdw)
DW_CFLAGS := -DHAVE_DW $(if $(wildcard /usr/include/libiberty/demangle.h),-DHAVE_IBERTY)
DW_LIBS   := $(DW_LIBDIR)/libdw.a $(DW_LIBDIR)/libelf.a $(call ZLIB_LINK,$(DW_LIBDIR)) \
	$(if $(wildcard /usr/include/libiberty/demangle.h),$(DW_LIBDIR)/libiberty.a) -lbz2 -llzma
endif
endif
VERSION   := 0.1.0
CPPFLAGS  += -Isrc -Iinclude -I. -D_GNU_SOURCE -DRSSWATCH_VERSION=\"$(VERSION)\"
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SAN) $(PKG_CFLAGS)
LDLIBS    = $(PKG_LIBS) $(DW_LIBS) $(BPF_LIBS) -ldl -lm -lpthread
# The rsswatch binary links SQLite's static archive (libsqlite3-dev has it) where there
# is one: a recorder then maps only the SQLite code it runs, without the shared
# library's relocated pages, about 370 KiB less resident (docs/dev/BENCHMARKS.md).
# SQLITE_SHARED=1 links the shared library (the unit tests always do).
SQLITE_A  := $(shell pkg-config --variable=libdir sqlite3 2>/dev/null)/libsqlite3.a
RSSWATCH_LIBS = $(LDLIBS)
ifneq ($(SQLITE_SHARED),1)
ifneq ($(wildcard $(SQLITE_A)),)
RSSWATCH_LIBS = $(SQLITE_A) $(DW_LIBS) $(BPF_LIBS) -ldl -lm -lpthread
endif
endif

CORE_SRC := $(sort $(wildcard src/base/*.c src/source/*.c src/record/*.c src/store/*.c src/metrics/*.c \
	src/render/*.c src/model/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
LIB_SRC  := $(sort $(wildcard lib/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
TBIN_SRC := $(sort $(wildcard tests/bin/*.c))
EX_SRC   := $(sort $(wildcard examples/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))

CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TBIN     := $(TBIN_SRC:tests/bin/%.c=$(BUILD)/tests/bin/%)
FUZZ_CHECK := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/fuzz/%,\
	$(sort $(wildcard tests/fuzz/fuzz_*.c)))
EX_BIN   := $(EX_SRC:examples/%.c=$(BUILD)/examples/%)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

RSSWATCH := $(BUILD)/rsswatch
LIBSO    := $(BUILD)/librsswatch.so
LIBA     := $(BUILD)/librsswatch.a
CORE_A   := $(BUILD)/libcore.a

.PHONY: all check unit shell demo deps deps-build install uninstall clean fuzz bench bench-bin lint
all: $(RSSWATCH) $(LIBSO) $(LIBA)

# Every object depends on the flags it was compiled with: changing CFLAGS, WERROR or
# SANITIZE rebuilds what they change. The stamp is rewritten only when they differ.
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW := $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) $(LDLIBS) $(RSSWATCH_LIBS)
$(FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(subst ','\'',$(FLAGS_NOW))' | cmp -s - $@ || echo '$(subst ','\'',$(FLAGS_NOW))' >$@
.PHONY: FORCE
FORCE:

# Before the first compiler error, the missing packages by name (scripts/deps.sh).
.PHONY: deps-verify
deps-verify:
	@scripts/deps.sh verify
$(CORE_OBJ) $(CLI_OBJ): | deps-verify

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# only png.c sees librsvg's headers; it is rebuilt when PNG support comes or goes
$(BUILD)/src/render/png.o: ALL_CFLAGS += $(RSVG_CFLAGS)
$(BUILD)/src/render/png.o: $(BUILD)/png.flags
$(BUILD)/png.flags: FORCE
	@mkdir -p $(@D)
	@echo '$(RSVG_CFLAGS)' | cmp -s - $@ || echo '$(RSVG_CFLAGS)' >$@

# only unwind.c sees libdw's headers; it is rebuilt when libdw comes or goes
$(BUILD)/src/source/unwind.o: ALL_CFLAGS += $(DW_CFLAGS)
$(BUILD)/src/source/unwind.o: $(BUILD)/dw.flags
$(BUILD)/dw.flags: FORCE
	@mkdir -p $(@D)
	@echo '$(DW_CFLAGS)' | cmp -s - $@ || echo '$(DW_CFLAGS)' >$@

# The engine's programs (src/bpf/NAME.bpf.c), each compiled for the BPF target and
# wrapped by bpftool as a skeleton that source/NAME.c includes; those objects (and
# source/cudaprobe.c, which attaches both programs' GPU probes) are rebuilt when the
# engine comes or goes.
BPF_OBJ := $(BUILD)/src/source/kpeak.o $(BUILD)/src/source/kstacks.o \
	   $(BUILD)/src/source/cudaprobe.o
$(BPF_OBJ): $(BUILD)/bpf.flags $(BPF_SKEL)
$(BPF_OBJ): ALL_CFLAGS += $(if $(HAVE_BPF),-DHAVE_BPF -I$(BUILD)/gen)
$(BUILD)/bpf.flags: FORCE
	@mkdir -p $(@D)
	@echo '$(HAVE_BPF)' | cmp -s - $@ || echo '$(HAVE_BPF)' >$@
$(BUILD)/gen/bpf/%.skel.h: src/bpf/%.bpf.c src/bpf/%.h src/bpf/kpeak.h src/bpf/cuda_entries.h
	@mkdir -p $(@D)
	$(BPF_CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Isrc \
		-I/usr/include/$(shell $(CC) -print-multiarch) -c -o $(@D)/$*.bpf.o $<
	$(BPFTOOL) gen skeleton $(@D)/$*.bpf.o name $*_bpf >$@.tmp
	@mv $@.tmp $@

# The floor benchmark's program (bench/bpffloor.c), built the same way.
$(BUILD)/bench/bpffloor: ALL_CFLAGS += $(if $(HAVE_BPF),-DHAVE_BPF -I$(BUILD)/gen)
$(BUILD)/bench/bpffloor: $(BUILD)/bpf.flags $(if $(HAVE_BPF),$(BUILD)/gen/bpf/floor.skel.h)
$(BUILD)/gen/bpf/floor.skel.h: bench/bpf/floor.bpf.c
	@mkdir -p $(@D)
	$(BPF_CLANG) -g -O2 -target bpf -mcpu=v3 \
		-I/usr/include/$(shell $(CC) -print-multiarch) -c -o $(@D)/floor.bpf.o $<
	$(BPFTOOL) gen skeleton $(@D)/floor.bpf.o name floor_bpf >$@.tmp
	@mv $@.tmp $@

$(BUILD)/pic/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -std=c89 -pedantic $(WARN) $(CFLAGS) $(SAN) -fPIC -fvisibility=hidden \
		-MMD -MP -c -o $@ $<

$(CORE_A): $(CORE_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(RSSWATCH): $(CLI_OBJ) $(CORE_A)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(CORE_A) $(RSSWATCH_LIBS)
	$(if $(HAVE_BPF),,@echo "rsswatch: built without the eBPF peak engine$(if \
		$(filter 1,$(NO_BPF)), (NO_BPF=1), (clang, bpftool or libbpf-dev missing))")
	$(if $(DW_CFLAGS),,@echo "rsswatch: built without record --stacks$(if \
		$(filter 1,$(NO_DW)), (NO_DW=1), (libdw-dev missing))")

$(LIBSO): $(LIB_OBJ)
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -shared -Wl,-soname,librsswatch.so.1 -o $@ $^ -lpthread

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

CMOCKA_CFLAGS = $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS   = $(shell pkg-config --libs cmocka 2>/dev/null)

$(BUILD)/tests/%: tests/unit/%.c $(CORE_A) $(LIBA) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(CMOCKA_CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< $(UNIT_OBJ) \
		$(CORE_A) $(LIBA) $(CMOCKA_LIBS) $(LDLIBS) -lpthread

# test_opts holds every verb's option table (src/cli/opts.h) to its rules: it links the
# CLI's objects, all but main.o, whose main() is the test's.
CLI_LIB_OBJ := $(filter-out $(BUILD)/src/cli/main.o,$(CLI_OBJ))
$(BUILD)/tests/test_opts: $(CLI_LIB_OBJ)
$(BUILD)/tests/test_opts: UNIT_OBJ = $(CLI_LIB_OBJ)

# Each libFuzzer harness, driven by tests/fuzz/replay.c for a few seconds in make check.
$(BUILD)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/replay.c $(CORE_A) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< tests/fuzz/replay.c $(CORE_A) $(LDLIBS)

$(BUILD)/tests/bin/%: tests/bin/%.c $(LIBA) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< $(LIBA) -lpthread -ldl

# The workloads of known memory are measured, not tested: under SANITIZE=1 they are
# built plain, so that their figures are theirs (AddressSanitizer's shadow of a 256 MiB
# mapping is 32 MiB more resident, its runtime about 12 MiB, and its leak checker a
# second process sharing the memory at the exit). hostile links the client library;
# examples/scale (a peak of 64 MiB + N x 16 MiB, for t64-scale's model) does not.
TBIN_PLAIN := $(addprefix $(BUILD)/tests/bin/,memhog sharemm busy ctxhog) \
	$(BUILD)/examples/scale
$(TBIN_PLAIN): ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(PKG_CFLAGS)

$(BUILD)/examples/%: examples/%.c $(LIBA) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< $(LIBA) -lpthread

$(BUILD)/bench/%: bench/%.c $(CORE_A) $(LIBA) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< $(CORE_A) $(LIBA) $(LDLIBS) -lpthread

# Extra build steps that test suites need (fake shared libraries, ...) hook in here.
TEST_EXTRA :=
-include tests/extra.mk

deps:
	@scripts/deps.sh test
deps-build:
	@scripts/deps.sh build

# The dependency check runs in a sub-make first, so that pkg-config flags are read
# after any missing package has been installed.
check: deps
	@$(MAKE) --no-print-directory WERROR=1 tests-built
	@BUILD=$(BUILD) tests/run.sh

.PHONY: tests-built
tests-built: all $(UNIT_BIN) $(TBIN) $(EX_BIN) $(FUZZ_CHECK) $(TEST_EXTRA)

bench-bin: all $(BENCH_BIN) $(TBIN)

# As check does: the peers are installed first, then everything is built in a sub-make.
QUICK ?= 0
bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory bench-bin
	@BUILD=$(BUILD) QUICK=$(QUICK) bench/run.sh

demo: deps-build
	@$(MAKE) --no-print-directory all $(EX_BIN) $(TBIN)
	@BUILD=$(BUILD) examples/demo.sh

# The loader finds librsswatch.so.1 under /usr/lib or /usr/local/lib once its cache is
# rebuilt: install runs ldconfig there when it can (root, no DESTDIR). Under any other
# prefix a program needs an rpath or LD_LIBRARY_PATH (README, Install).
install: deps-build
	@$(MAKE) --no-print-directory all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(SYSTEMDDIR) \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
	install -m 755 $(RSSWATCH) $(DESTDIR)$(PREFIX)/bin/rsswatch
	install -m 755 $(LIBSO) $(DESTDIR)$(LIBDIR)/librsswatch.so.1
	ln -sf librsswatch.so.1 $(DESTDIR)$(LIBDIR)/librsswatch.so
	install -m 644 $(LIBA) $(DESTDIR)$(LIBDIR)/librsswatch.a
	install -m 644 include/rsswatch.h $(DESTDIR)$(PREFIX)/include/rsswatch.h
	install -m 644 man/rsswatch.1 $(DESTDIR)$(PREFIX)/share/man/man1/rsswatch.1
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@VERSION@|$(VERSION)|g' rsswatch.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/rsswatch.pc
	sed -e 's|/usr/local/bin/rsswatch|$(PREFIX)/bin/rsswatch|' dist/rsswatch-agent.service \
		> $(DESTDIR)$(SYSTEMDDIR)/rsswatch-agent.service
	install -m 644 dist/completion/rsswatch \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/rsswatch
	install -m 644 dist/completion/_rsswatch \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_rsswatch
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && \
	    { [ "$(PREFIX)" = /usr ] || [ "$(PREFIX)" = /usr/local ]; }; then \
		echo ldconfig; ldconfig; \
	fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/rsswatch $(DESTDIR)$(LIBDIR)/librsswatch.so.1 \
		$(DESTDIR)$(LIBDIR)/librsswatch.so $(DESTDIR)$(LIBDIR)/librsswatch.a \
		$(DESTDIR)$(PREFIX)/include/rsswatch.h $(DESTDIR)$(PREFIX)/share/man/man1/rsswatch.1 \
		$(DESTDIR)$(LIBDIR)/pkgconfig/rsswatch.pc \
		$(DESTDIR)$(SYSTEMDDIR)/rsswatch-agent.service \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/rsswatch \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_rsswatch

# The Debian packages rsswatch, librsswatch1 and librsswatch-dev (debian/), built by
# dpkg-buildpackage in a copy of the tree under $(BUILD)/deb/, where the .debs land:
# nothing is written into the tree or beside it (scripts/deb.sh).
.PHONY: deb
deb:
	@scripts/deb.sh $(BUILD)/deb

# The layers' one-way include rule and the banned functions (scripts/lint.sh).
lint:
	@scripts/lint.sh

clean:
	rm -rf build build-san build-fuzz

-include $(CORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(LIB_OBJ:.o=.d)
-include $(addsuffix .d,$(UNIT_BIN) $(TBIN) $(EX_BIN) $(BENCH_BIN) $(FUZZ_CHECK))

# libFuzzer targets (clang), guided by coverage: FUZZ_SECONDS each (default 20). make check
# runs the same harnesses unguided for a few seconds each (tests/fuzz/replay.c).
FUZZ_SECONDS ?= 20
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
FUZZ_CORE := $(filter src/base/% src/source/% src/metrics/prom.c,$(CORE_SRC))
build-fuzz/%: tests/fuzz/%.c $(FUZZ_CORE)
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $< \
		$(FUZZ_CORE) -ldl -lm
fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do mkdir -p build-fuzz/corpus-$${f##*/}; \
		echo "fuzzing $$f for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=4096 build-fuzz/corpus-$${f##*/} \
			tests/fixtures/proc 2>&1 | tail -n 3 || exit 1; done
