# Shoal: the commands a newcomer types.  A thin wrapper around CMake and
# CTest; `make help` lists the targets and variables, docs/BUILDING.md says
# more.  Needs only gcc, make and cmake (clang for `make fuzz`).

BUILD_DIR    ?= build
SANITIZE_DIR ?= build-sanitize
THREAD_DIR   ?= build-thread
FUZZ_DIR     ?= build-fuzz
PREFIX       ?= /usr/local
DESTDIR      ?=
WERROR       ?= 0
SANITIZERS   ?= address,undefined
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE        ?= cmake
CTEST        ?= ctest
CMAKE_ARGS   ?=
CTEST_ARGS   ?=

# Quiet recursive makes (cmake --build runs make again).
MAKEFLAGS += --no-print-directory

# Sanitizer reports: stop at the first error, with a stack, and count leaks.
# Values already in the environment win.
export ASAN_OPTIONS ?= detect_leaks=1:abort_on_error=0:halt_on_error=1:print_stacktrace=1:strict_string_checks=1
export UBSAN_OPTIONS ?= halt_on_error=1:print_stacktrace=1
# Every test fails on a lost wake-up: a sleep that outlived what it waited
# for (docs/CONFIG.md, SHOAL_WAIT_CHECK).
export SHOAL_WAIT_CHECK ?= fatal

werror_flag = $(if $(filter 1 ON on yes YES true,$(WERROR)),ON,OFF)
common_args = -DSHOAL_WERROR=$(werror_flag) $(CMAKE_ARGS)

# $(call configure,<dir>,<cmake arguments>): configures <dir> with these
# arguments.  It runs every time (a tenth of a second once configured) so
# that new test folders and examples, which CMake finds by looking, and
# changed arguments (`make WERROR=1` after `make`) always take effect.
define configure
	@command -v $(CMAKE) >/dev/null 2>&1 || { \
	    echo "error: cmake is not installed."; \
	    echo "On Debian or Ubuntu, as root: apt-get install cmake"; \
	    exit 1; }
	@command -v $${CC:-cc} >/dev/null 2>&1 || { \
	    echo "error: no C compiler ($${CC:-cc}) found."; \
	    echo "On Debian or Ubuntu, as root: apt-get install build-essential"; \
	    exit 1; }
	$(CMAKE) -S . -B $(1) $(2)
endef

# $(call run_tests,<dir>[,<labels>]): unit tests run in parallel; every
# other test (multi-process, launcher, fault, abi, install, docs) runs
# alone, because ranks of concurrent jobs on 2 cores starve each other into
# timeouts.  Tests labelled one of <labels> (a|b|...) are left out.  After
# each run the skipped tests are listed with their reasons (show_skips).
define run_tests
	@cd $(1) && rc=0 && out=Testing/Temporary/make-ctest.out && \
	mkdir -p Testing/Temporary && \
	echo "== unit tests ($(JOBS) at a time) in $(1)"; \
	rm -f $$out.failed; \
	{ $(CTEST) --output-on-failure -j $(JOBS) -L '^unit$$' $(CTEST_ARGS) || \
	    : >$$out.failed; } 2>&1 | tee $$out; \
	[ -f $$out.failed ] && rc=1; \
	$(show_skips) \
	echo "== all other tests (one at a time) in $(1)$(if $(2), but those labelled $(2))"; \
	rm -f $$out.failed; \
	{ $(CTEST) --output-on-failure -LE '^(unit$(if $(2),|$(2)))$$' $(CTEST_ARGS) || \
	    : >$$out.failed; } 2>&1 | tee $$out; \
	[ -f $$out.failed ] && rc=1; \
	$(show_skips) \
	rm -f $$out $$out.failed; \
	if [ $$rc -ne 0 ]; then echo "FAILED: tests in $(1) (details above)"; fi; \
	exit $$rc
endef

# Part of run_tests, after a ctest run whose output is in $$out: CTest
# names skipped tests only as "(Skipped)" and keeps their output in
# Testing/Temporary/LastTest.log; print each one's SKIP lines from there
# (its last line of output when it printed none), so the reason shows
# without `ctest -V`.
define show_skips
	skipped=$$(sed -n 's/^[[:space:]]*[0-9][0-9]* - \(.*\) (Skipped)$$/\1/p' $$out); \
	if [ -n "$$skipped" ]; then \
	    echo "== skipped tests, and what they need:"; \
	    for t in $$skipped; do \
	        awk -v t="$$t" 'index($$0, "\"" t "\" start time:") == 1 { on = 1; next } \
	            on == 1 && /^Output:$$/ { on = 2; getline; next } \
	            on == 2 && /^<end of output>$$/ { exit } \
	            on == 2 && /SKIP/ { print "  " t ": " $$0; found = 1; next } \
	            on == 2 && NF { last = $$0 } \
	            END { if (!found) print "  " t ": " (last != "" ? last : "(no reason printed)") }' \
	            Testing/Temporary/LastTest.log; \
	    done; \
	fi;
endef

.PHONY: all build demo check test check-sanitize build-sanitize check-thread check-clients fuzz install clean help

all: build

build:
	$(call configure,$(BUILD_DIR),$(common_args))
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@[ -x $(BUILD_DIR)/examples/shoal-demo ] || { \
	    echo "error: $(BUILD_DIR)/examples/shoal-demo was not built (is examples/shoal-demo.c there?)"; \
	    exit 1; }
	$(BUILD_DIR)/tools/shoalrun/shoalrun -n 4 $(BUILD_DIR)/examples/shoal-demo

# The long conformance run (label conformance-long) is CI's sanitizer step's;
# stress tests that load every CPU (label stress) run by hand (docs/TESTING.md).
check: build
	$(call run_tests,$(BUILD_DIR),conformance-long|stress)

test: check

build-sanitize:
	$(call configure,$(SANITIZE_DIR),$(common_args) -DSHOAL_SANITIZE=$(SANITIZERS))
	$(CMAKE) --build $(SANITIZE_DIR) -j $(JOBS)

# The sanitizers watch the library's code: the checks of the build itself
# (exported symbols, headers, layering, install, docs) and the benchmark
# smoke runs are the same as in the plain build and stay out, and so do
# the multihost cases that mostly wait for a timeout (label "waits").
check-sanitize: build-sanitize
	$(call run_tests,$(SANITIZE_DIR),abi|install|docs|bench-smoke|waits|stress)

# ThreadSanitizer sees the threads of one process, so it runs the unit tests
# (the channel between two threads, the PMI client against a server thread)
# and the tests labelled thread (MPI_THREAD_MULTIPLE: four threads per rank
# in one engine); traffic between ranks is out of its sight.
check-thread:
	$(call configure,$(THREAD_DIR),$(common_args) -DSHOAL_SANITIZE=thread)
	$(CMAKE) --build $(THREAD_DIR) -j $(JOBS)
	cd $(THREAD_DIR) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	    $(CTEST) --output-on-failure -j $(JOBS) -L '^(unit|thread)$$' $(CTEST_ARGS)

# Real MPI-IO clients (docs/IO.md, "Real clients"): PnetCDF and parallel
# HDF5 from their Debian source packages (apt-get source, which needs a
# deb-src line), built with Shoal's mpicc and tested with their own suites
# at 4 ranks under shoalrun.  Sources, builds and logs go in
# $(BUILD_DIR)/clients/.  A client whose source cannot be fetched is
# SKIPPED; any failing client test fails the target.  Both run even when the
# first fails.
check-clients: build
	@rc=0; \
	CLIENT_JOBS=$(JOBS) tests/clients/pnetcdf.sh $(BUILD_DIR) || rc=1; \
	CLIENT_JOBS=$(JOBS) tests/clients/hdf5.sh $(BUILD_DIR) || rc=1; \
	if [ $$rc -ne 0 ]; then echo "FAILED: check-clients (the summaries above say which client)"; fi; \
	exit $$rc

# Fuzz targets are the executables of the fuzz build that link libFuzzer
# (they define LLVMFuzzerTestOneInput and LLVMFuzzerRunDriver).  Each runs
# for FUZZ_SECONDS, growing a corpus in $(FUZZ_DIR)/corpus/<target>/ from
# the seeds in tests/fuzz/corpus/<target>/ and using tests/fuzz/<target>.dict
# when those exist.  Crashing inputs are left in $(FUZZ_DIR)/artifacts/.
fuzz:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { \
	    echo "error: $(FUZZ_CC) is not installed; as root: apt-get install clang libclang-rt-14-dev"; \
	    exit 1; }
	$(call configure,$(FUZZ_DIR),$(common_args) -DCMAKE_C_COMPILER=$(FUZZ_CC) -DSHOAL_BUILD_FUZZ=ON -DSHOAL_SANITIZE=$(SANITIZERS))
	$(CMAKE) --build $(FUZZ_DIR) -j $(JOBS)
	@targets=$$(find $(FUZZ_DIR) -path '*/CMakeFiles' -prune -o -type f -perm -u+x -print | sort | \
	    while read -r t; do \
	        syms=$$(nm "$$t" 2>/dev/null) || continue; \
	        case "$$syms" in *LLVMFuzzerTestOneInput*) ;; *) continue ;; esac; \
	        case "$$syms" in *LLVMFuzzerRunDriver*) echo "$$t" ;; esac; \
	    done); \
	if [ -z "$$targets" ]; then \
	    if [ -f tests/fuzz/CMakeLists.txt ]; then \
	        echo "error: tests/fuzz exists but $(FUZZ_DIR) holds no libFuzzer target"; exit 1; \
	    fi; \
	    echo "no fuzz targets yet (tests/fuzz/ does not exist): nothing to run"; exit 0; \
	fi; \
	failed=; \
	for t in $$targets; do \
	    name=$$(basename "$$t"); \
	    mkdir -p $(FUZZ_DIR)/corpus/$$name $(FUZZ_DIR)/artifacts; \
	    seeds=; [ -d tests/fuzz/corpus/$$name ] && seeds=tests/fuzz/corpus/$$name; \
	    dict=; [ -f tests/fuzz/$$name.dict ] && dict=-dict=tests/fuzz/$$name.dict; \
	    echo "== fuzzing $$name for $(FUZZ_SECONDS) s"; \
	    if ! "$$t" -max_total_time=$(FUZZ_SECONDS) -timeout=30 -print_final_stats=1 \
	            -artifact_prefix=$(FUZZ_DIR)/artifacts/$$name- $$dict \
	            $(FUZZ_DIR)/corpus/$$name $$seeds; then \
	        echo "FAILED: $$name; reproduce with: $$t <the input written to $(FUZZ_DIR)/artifacts/ above>"; \
	        failed="$$failed $$name"; \
	    fi; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED fuzz targets:$$failed"; exit 1; fi; \
	echo "fuzz: every target ran $(FUZZ_SECONDS) s without a crash"

install: build
	@echo "installing into $(DESTDIR)$(PREFIX)"
	@DESTDIR='$(DESTDIR)' $(CMAKE) --install $(BUILD_DIR) --prefix '$(PREFIX)' || { \
	    echo "error: install failed. To install into $(PREFIX) you may need root"; \
	    echo "(sudo make install), or choose a prefix of your own: make install PREFIX=\$$HOME/.local"; \
	    exit 1; }
	@if [ -z '$(DESTDIR)' ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then \
	    ldconfig; \
	fi

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) $(THREAD_DIR) $(FUZZ_DIR)

help:
	@echo "Shoal build commands (a wrapper around CMake; see docs/BUILDING.md)"
	@echo ""
	@echo "  make                 configure and build into $(BUILD_DIR)/"
	@echo "  make demo            build, then run the demo on 4 ranks with shoalrun"
	@echo "  make check           build, then run the test suite (make test: the same)"
	@echo "  make check-sanitize  the test suite built with $(SANITIZERS) sanitizers, in $(SANITIZE_DIR)/"
	@echo "  make check-thread    the unit tests under ThreadSanitizer, in $(THREAD_DIR)/"
	@echo "  make check-clients   build PnetCDF and parallel HDF5 (Debian sources) on Shoal, run their tests"
	@echo "  make fuzz            build with $(FUZZ_CC) in $(FUZZ_DIR)/, run each fuzz target $(FUZZ_SECONDS) s"
	@echo "  make install         install into PREFIX (now $(PREFIX))"
	@echo "  make clean           remove $(BUILD_DIR)/ $(SANITIZE_DIR)/ $(FUZZ_DIR)/"
	@echo ""
	@echo "Variables (make VAR=value):"
	@echo "  WERROR=1             treat compiler warnings as errors (what CI does)"
	@echo "  PREFIX=dir DESTDIR=dir   where make install puts files"
	@echo "  JOBS=n               parallel build and unit-test jobs (now $(JOBS))"
	@echo "  FUZZ_SECONDS=n       time per fuzz target (now $(FUZZ_SECONDS))"
	@echo "  SANITIZERS=list      for check-sanitize and fuzz (now $(SANITIZERS))"
	@echo "  CMAKE_ARGS=...       extra cmake arguments, e.g. -DCMAKE_BUILD_TYPE=Debug"
	@echo "  CTEST_ARGS=...       extra ctest arguments, e.g. -R abi or -L mp"
	@echo "  BUILD_DIR, SANITIZE_DIR, FUZZ_DIR   the build directories"
