# bench.mk — `make bench`: builds the benchmark workloads (bench/work.c) several ways and runs
# bench/run.c over them.  Included by the top-level Makefile, whose variables it uses.
#   make bench                      full run (a few minutes)
#   make bench BENCH_REPS=9         more repetitions
#   make bench BENCH_QUICK=1        no callgrind counts, no compile-time figures, no speedtest1,
#                                   no zstd, no lua
#   make bench-sampler              only the sampler thread's cost (SPANPROF=sample)
#   make bench-speedtest1           the speedtest1 tables alone
#   make bench-zstd                 the zstd table alone
#   make bench-lua                  the cost budget on Lua's interpreter (bench/lua.sh)
#   make bench-live                 the live-profile tables alone
#   make bench-flight               the flight recorder's cost on a request loop (bench/flight.sh)
# Rows are listed in bench/rows.txt.  Then more tables: the cost of writing a folded file that is
# expensive to write (bench/deepjson.sh), thread churn (bench/churn.sh: 20,000 short-lived
# threads, memory and time), SQLite's speedtest1 in every configuration (bench/speedtest1.sh:
# fetches Debian's sqlite3 sources once, builds take minutes), zstd built whole-program
# (bench/zstd.sh, Debian's libzstd sources, the same way) and Lua's interpreter, many small
# functions, with and without a cost budget (bench/lua.sh).

BB = $(B)/bench
BENCH_REPS ?= 5
BENCH_QUICK ?= 0
# -O2, no -g: the workload as a release build would be.  The same flags for every variant.
BENCH_CFLAGS = -std=gnu11 -O2 -pthread -Wall -Wextra -Ibench
# min-size=0: the work functions are one-liners, measured as spans; inline=all: on the plugin's
# inline path, as spans of that size get it when marked by the attribute (sp-calls: the default
# for such functions chosen by an option, calls to the runtime).  The compile-time table uses the
# default selection (WHOLE_FLAGS), as a user's whole-program build would.
WHOLE_FLAGS = -fplugin=$(CURDIR)/$(B)/spanplugin.so -fplugin-arg-spanplugin-all -Iinclude
CALL_FLAGS = $(WHOLE_FLAGS) -fplugin-arg-spanplugin-min-size=0
SPAN_FLAGS = $(CALL_FLAGS) -fplugin-arg-spanplugin-inline=all
BENCH_BINS = $(BB)/plain $(BB)/floor $(BB)/floor-so $(BB)/sp-static $(BB)/sp-shared $(BB)/sp-calls $(BB)/sp-none $(BB)/pg \
             $(BB)/libspanprof-alloc.so \
             $(BB)/run $(BB)/measure $(BB)/deepjson $(BB)/sampler $(BB)/churn-plain $(BB)/churn-sp \
             $(BB)/livebench
BENCH_DEPS = bench/work.c bench/bench.h $(BB)/driver.o bench/bench.mk

$(BB)/driver.o: bench/driver.c bench/bench.h bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -c $< -o $@

$(BB)/plain: $(BENCH_DEPS)
	$(CC) $(BENCH_CFLAGS) bench/work.c $(BB)/driver.o -o $@

$(BB)/floor: $(BENCH_DEPS) bench/hooks.c
	$(CC) $(BENCH_CFLAGS) -finstrument-functions bench/work.c $(BB)/driver.o bench/hooks.c -o $@

$(BB)/libfloorhooks.so: bench/hooks.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared bench/hooks.c -o $@

$(BB)/floor-so: $(BENCH_DEPS) $(BB)/libfloorhooks.so
	$(CC) $(BENCH_CFLAGS) -finstrument-functions bench/work.c $(BB)/driver.o \
	  -L$(BB) -lfloorhooks -Wl,-rpath,'$$ORIGIN' -o $@

$(BB)/sp-static: $(BENCH_DEPS) $(B)/spanplugin.so $(B)/libspanprof.a
	$(CC) $(BENCH_CFLAGS) $(SPAN_FLAGS) bench/work.c $(BB)/driver.o -u __spanprof_enter $(B)/libspanprof.a \
	  $(RUNTIME_LIBS) -o $@

$(BB)/sp-shared: $(BENCH_DEPS) $(B)/spanplugin.so $(B)/libspanprof.so
	$(CC) $(BENCH_CFLAGS) $(SPAN_FLAGS) bench/work.c $(BB)/driver.o -L$(B) -Wl,--no-as-needed -lspanprof \
	  -Wl,-rpath,'$$ORIGIN/..' -o $@

$(BB)/sp-calls: $(BENCH_DEPS) $(B)/spanplugin.so $(B)/libspanprof.a
	$(CC) $(BENCH_CFLAGS) $(CALL_FLAGS) bench/work.c $(BB)/driver.o -u __spanprof_enter $(B)/libspanprof.a \
	  $(RUNTIME_LIBS) -o $@

# Instrumented but linked without the runtime (a build-time tool built with the project's
# CFLAGS and inline=0): the plugin's calls are weak references, every site stays NEW and no
# call is made.
$(BB)/sp-none: $(BENCH_DEPS) $(B)/spanplugin.so
	$(CC) $(BENCH_CFLAGS) $(CALL_FLAGS) -fplugin-arg-spanplugin-inline=0 bench/work.c $(BB)/driver.o -o $@

# The allocation interposer, next to the builds: rows preload it as @BIN@/libspanprof-alloc.so.
$(BB)/libspanprof-alloc.so: $(B)/libspanprof-alloc.so
	@mkdir -p $(@D)
	cp $< $@

# For uftrace: mcount calls in the same functions.
$(BB)/pg: $(BENCH_DEPS)
	$(CC) $(BENCH_CFLAGS) -pg bench/work.c $(BB)/driver.o -o $@

$(BB)/run: bench/run.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra $< -lm -o $@

$(BB)/measure: bench/measure.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra $< -o $@

$(BB)/deepjson: bench/deepjson.c bench/bench.mk $(B)/spanplugin.so $(B)/libspanprof.a
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -fplugin=$(CURDIR)/$(B)/spanplugin.so -Iinclude $< -u __spanprof_enter $(B)/libspanprof.a \
	  $(RUNTIME_LIBS) -o $@

# Live profiles (bench/live.sh): 500 marked spans, the shared runtime.
$(BB)/livebench: bench/live.c bench/bench.mk live/protocol.h $(B)/spanplugin.so $(B)/libspanprof.so
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -I. $(WHOLE_FLAGS) $< -L$(B) -Wl,--no-as-needed -lspanprof \
	  -Wl,-rpath,'$$ORIGIN/..' -o $@

# Thread churn (bench/churn.sh): the lifecycle test's program, without and with the plugin.
CHURN_SRC = testsuite/lifecycle/thread_churn.c
$(BB)/churn-plain: $(CHURN_SRC) bench/bench.mk
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -pthread -Wno-attributes $< -o $@

$(BB)/churn-sp: $(CHURN_SRC) bench/bench.mk $(B)/spanplugin.so $(B)/libspanprof.a
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -pthread -fplugin=$(CURDIR)/$(B)/spanplugin.so -Iinclude $< \
	  -u __spanprof_enter $(B)/libspanprof.a $(RUNTIME_LIBS) -o $@

# SPANPROF=sample's sampler thread: its CPU time with 1, 8 and 64 threads waiting in spans.
$(BB)/sampler: bench/sampler.c bench/bench.mk $(B)/spanplugin.so $(B)/libspanprof.a
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -pthread -fplugin=$(CURDIR)/$(B)/spanplugin.so -Iinclude $< \
	  -u __spanprof_enter $(B)/libspanprof.a $(RUNTIME_LIBS) -o $@

bench-sampler: $(BB)/sampler
	@echo "### The sampler thread (SPANPROF=sample): its CPU time per second of the run"
	@echo
	@echo "| threads in spans | passes/s | sampler CPU per s | of one core | per pass |"
	@echo "|---|---|---|---|---|"
	@for n in 1 8 64; do (cd $(BB) && SPANPROF=sample SPANPROF_FOLDED= ./sampler $$n 3); done

# Compile-time figure: the project's own C sources (runtime and tool) with and without
# whole-program mode.
BENCH_SOURCES = $(RUNTIME_SRC) $(TOOL_SRC)

bench: $(BENCH_BINS) bench-tools-bins
	BENCH_BIN='$(BB)' BENCH_ROWS=bench/rows.txt BENCH_REPS='$(BENCH_REPS)' \
	BENCH_QUICK='$(BENCH_QUICK)' BENCH_CC='$(CC)' \
	BENCH_COMPILE='$(CC) -std=gnu11 -O2 -pthread -Iinclude -Iruntime -Ipprof -I$(B)/pprof $(PROTOBUFC_CFLAGS) $(JSONC_CFLAGS) -DSPANPROF_VERSION=\"$(VERSION)\"' \
	BENCH_PLUGIN_FLAGS='$(WHOLE_FLAGS)' BENCH_SOURCES='$(BENCH_SOURCES)' \
	  $(BB)/run | tee $(BB)/results.md
	@echo | tee -a $(BB)/results.md
	$(TOOLBENCH) | tee -a $(BB)/results.md
	@echo | tee -a $(BB)/results.md
	BENCH_BIN='$(CURDIR)/$(BB)' sh bench/deepjson.sh | tee -a $(BB)/results.md
	@echo | tee -a $(BB)/results.md
	BENCH_BIN='$(CURDIR)/$(BB)' sh bench/churn.sh | tee -a $(BB)/results.md
	@echo | tee -a $(BB)/results.md
	BENCH_BIN='$(CURDIR)/$(BB)' sh bench/live.sh | tee -a $(BB)/results.md
	@echo | tee -a $(BB)/results.md
	@$(MAKE) -s bench-sampler | tee -a $(BB)/results.md
	@echo | tee -a $(BB)/results.md
	@if [ '$(BENCH_QUICK)' = 1 ]; then \
	  echo "### speedtest1: left out by BENCH_QUICK=1 (its builds and runs take about 12 minutes)"; \
	else \
	  $(SPEEDTEST1); \
	fi | tee -a $(BB)/results.md
	@echo | tee -a $(BB)/results.md
	@if [ '$(BENCH_QUICK)' = 1 ]; then \
	  echo "### zstd: left out by BENCH_QUICK=1 (its builds and runs take about 8 minutes)"; \
	else \
	  $(ZSTDBENCH); \
	fi | tee -a $(BB)/results.md
	@echo | tee -a $(BB)/results.md
	@if [ '$(BENCH_QUICK)' = 1 ]; then \
	  echo "### lua: left out by BENCH_QUICK=1 (its builds and runs take about 4 minutes)"; \
	else \
	  $(LUABENCH); \
	fi | tee -a $(BB)/results.md

bench-live: $(BB)/livebench $(BB)/measure
	BENCH_BIN='$(CURDIR)/$(BB)' sh bench/live.sh

# The flight recorder's cost on a request loop, against exact mode (bench/flight.sh).
bench-flight: $(LIBS_BUILT) $(BB)/measure
	BENCH_BIN='$(CURDIR)/$(BB)' B='$(B)' CC='$(CC)' sh bench/flight.sh

# SQLite's speedtest1 tables alone (bench/speedtest1.sh; SPEEDTEST_REPS, SPEEDTEST_SIZE and
# SPEEDTEST_DBS apply).
SPEEDTEST1 = BENCH_BIN='$(CURDIR)/$(BB)' CC='$(CC)' PLUGIN='$(CURDIR)/$(B)/spanplugin.so' \
  INCLUDE_DIR='$(CURDIR)/include' LIBDIR='$(CURDIR)/$(B)' MEASURE='$(CURDIR)/$(BB)/measure' \
  HOOKS='$(CURDIR)/bench/hooks.c' TOOL='$(CURDIR)/$(B)/spanprof' sh bench/speedtest1.sh
bench-speedtest1: $(LIBS_BUILT) $(BB)/measure $(B)/spanprof
	$(SPEEDTEST1) | tee $(BB)/speedtest1.md

# zstd built whole-program, every function and with min-size=50, beside -pg and XRay
# (bench/zstd.sh; ZSTD_REPS and ZSTD_INPUT_MB apply).
ZSTDBENCH = BENCH_BIN='$(CURDIR)/$(BB)' CC='$(CC)' PLUGIN='$(CURDIR)/$(B)/spanplugin.so' \
  INCLUDE_DIR='$(CURDIR)/include' LIBDIR='$(CURDIR)/$(B)' MEASURE='$(CURDIR)/$(BB)/measure' \
  TOOL='$(CURDIR)/$(B)/spanprof' sh bench/zstd.sh
bench-zstd: $(LIBS_BUILT) $(BB)/measure $(B)/spanprof
	$(ZSTDBENCH) | tee $(BB)/zstd.md

# The cost budget on a program of many small functions: Lua's interpreter (bench/lua.sh;
# LUA_REPS applies).
LUABENCH = BENCH_BIN='$(CURDIR)/$(BB)' CC='$(CC)' PLUGIN='$(CURDIR)/$(B)/spanplugin.so' \
  INCLUDE_DIR='$(CURDIR)/include' LIBDIR='$(CURDIR)/$(B)' MEASURE='$(CURDIR)/$(BB)/measure' sh bench/lua.sh
bench-lua: $(LIBS_BUILT) $(BB)/measure
	$(LUABENCH) | tee $(BB)/lua.md

# The spanprof command on large inputs (bench/toolbench.c): 300,000 spans, 100,000 coz
# experiments, a 100 MB JSON profile broken near its end; seconds and peak memory per command.
# About 300 MB of inputs go to build/bench/tools.  Alone: make bench-tools.
TOOLBENCH = $(B)/toolbench '$(CURDIR)/$(B)/spanprof' $(BB)/tools 300000 100000 100
bench-tools-bins: $(B)/toolbench $(B)/spanprof
bench-tools: bench-tools-bins
	$(TOOLBENCH)

.PHONY: bench bench-sampler bench-speedtest1 bench-zstd bench-lua bench-tools bench-tools-bins bench-live bench-flight
