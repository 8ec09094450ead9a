# migadvisor: build, test and try it.
#   make build    compile bin/migadvisor and bin/migadvisor-monitor
#   make test     lint, unit tests, then the integration tests on a real local
#                 Slurm (scripts/dev-cluster.sh; as root; SKIP_SLURM=1 skips them)
#   make demo     the main job on the built-in site, no cluster needed
#   make test-gpu the real-GPU tests (NVIDIA GPU, driver, PyTorch; not in make test)
#   make bench    Go benchmarks, then the wrapper's and the site store's (figures in docs/performance.md);
#                 each alone: make bench-wrapper, bench-jobstats, bench-mariadb, bench-ingest, and make
#                 bench-clifilter what cli_filter.lua adds to sbatch on the dev cluster (as root), bench-plan
#                 the layout plan at a million jobs (its search, sizing the jobs from a history, and both)
#   make fuzz     run each fuzz target for FUZZTIME (default 2m)
#   make install  install to $(DESTDIR)$(PREFIX) what make build built (no Go needed)
#   make accuracy the runtime model beside simple baselines on the public tables, and the emulation gate
#   make plan-fidelity  the queue replay against a real queue on the dev cluster (as root; in make test too)
#   make reference  regenerate docs/reference/ from the commands' --help (make test checks it)
#   make generate   regenerate catalog/models_gen.go from catalog/data/gpus.toml (make test checks it)
#   make site     build the MkDocs site into bin/site (needs mkdocs and mkdocs-material)

GO       ?= go
PREFIX   ?= /usr/local
BIN      := bin/migadvisor
LEAN     := bin/migadvisor-monitor
WRAPPER  := bin/migadvisor-sbatch
# Evaluated only where used (build): install runs no git and no Go.
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   = -X main.version=$(VERSION)
# urfave/cli's man-page and markdown writers are never used; leaving them out
# saves a millisecond of start-up on every wrapped sbatch.
TAGS     := urfave_cli_no_docs
FUZZTIME ?= 2m
DEMO_DIR := bin/demo

export CGO_ENABLED := 1

.PHONY: all build test test-unit test-slurm test-gpu gpu-bundle lint bench bench-wrapper bench-jobstats bench-mariadb bench-ingest bench-clifilter bench-plan fuzz demo install installable reference generate site accuracy site-replay plan-fidelity clean

all: build

# bin/migadvisor-monitor is the monitor alone, for inside jobs (a third of
# the memory); sweep variants use it when it sits beside migadvisor.
# bin/migadvisor-sbatch is the sbatch wrapper alone (cmd/migadvisor-sbatch),
# without cgo: a static binary that reads advice indexes and no SQLite. The
# sbatch shim runs it on every submission.
build:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/migadvisor
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $(WRAPPER) ./cmd/migadvisor-sbatch
	$(GO) build -ldflags '$(LDFLAGS)' -o $(LEAN) ./cmd/migadvisor-monitor

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags noreport ./cmd/migadvisor
	$(GO) vet -tags mariadb ./advisor/base/history/mariadb ./cmd/migadvisor

test: lint test-unit test-slurm

test-unit:
	$(GO) test -count=1 -race ./...

# The integration tests submit real jobs to a single-node Slurm 22.05 that
# scripts/dev-cluster.sh installs (Debian packages) and starts; it stays up
# for the next run (scripts/dev-cluster.sh down stops it). The site store's
# tests use the MariaDB that slurmdbd keeps its accounts in, in databases of
# their own.
test-slurm:
ifeq ($(SKIP_SLURM),1)
	@echo "test-slurm: SKIPPED because SKIP_SLURM=1: the integration tests against a real Slurm did not run"
else
	@if [ "$$(id -u)" != 0 ]; then \
		echo "test-slurm: the integration tests need a local Slurm, which scripts/dev-cluster.sh installs and starts as root." >&2; \
		echo "  Run 'sudo make test', or 'SKIP_SLURM=1 make test' to skip them." >&2; exit 1; fi
	@scripts/dev-cluster.sh up || { echo "test-slurm: could not start the dev cluster (see above); SKIP_SLURM=1 skips these tests" >&2; exit 1; }
	$(GO) test -count=1 -timeout 30m -tags slurm -run '^TestSlurm' -v ./cmd/migadvisor ./advisor/app/wrapper
	$(GO) test -count=1 -tags mariadb -run '^TestMariaDB' -v ./advisor/base/history/mariadb ./cmd/migadvisor
endif

# The real-GPU tests (build tag gpu): on a machine with an NVIDIA GPU, its
# driver, python3 and PyTorch. CPU-only machines (CI) never run them.
test-gpu: build
	MIGADVISOR_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -tags gpu -run '^TestGPU' -v ./cmd/migadvisor

# For a GPU machine without Go: bin/migadvisor and bin/gpu.test to copy there,
# then: cd cmd/migadvisor && MIGADVISOR_BIN=../../bin/migadvisor ../../bin/gpu.test -test.run '^TestGPU' -test.v
gpu-bundle: build
	$(GO) test -c -tags gpu -o bin/gpu.test ./cmd/migadvisor

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@scripts/dev-cluster.sh up >/dev/null 2>&1 || { echo "bench: the wrapper's and the site store's benchmarks need the dev cluster (as root)" >&2; exit 1; }
	$(MAKE) bench-wrapper bench-mariadb

# plan at a year of a 500-GPU site: the search and its replays, the jobs
# sized from a history of a million, and both as the command runs them,
# which fails over 60 s or 512 MiB (docs/admin/plan.md, Scale).
# MIGADVISOR_BENCH_HISTORY=FILE keeps the history's import for the next run.
bench-plan:
	$(GO) test -count=1 -run '^$$' -bench 'Replay1M' -benchtime 1x ./advisor/base/replay
	$(GO) test -count=1 -timeout 30m -run '^$$' -bench 'Plan1M|Demand1M|PlanFromHistory1M' -benchtime 1x ./advisor/app/plan

# The sbatch wrapper as users meet it, through the installed shim, against
# the dev cluster's sbatch and a stub: time to the prompt (p50/p95/p99),
# CPU per submission, where the advice lands; 1 and 8 submitters.
WRAPPER_ROUNDS ?= 200
bench-wrapper:
	@scripts/dev-cluster.sh up
	MIGADVISOR_BENCH_SLURM=1 MIGADVISOR_BENCH_ROUNDS=$(WRAPPER_ROUNDS) $(GO) test -count=1 -run '^$$' -tags slurm -bench SbatchWrapper -benchtime 1x ./cmd/migadvisor

# What jobstats summaries cost collect: BENCH_PAIRS interleaved pairs.
BENCH_PAIRS ?= 8
bench-jobstats:
	MIGADVISOR_BENCH_PAIRS=$(BENCH_PAIRS) $(GO) test -count=1 -run '^$$' -bench CollectJobstatsShare -benchtime 1x ./advisor/app/collect

# Ingestion: collect --sacct-file of a 1M-job dump against sqlite3's .import
# of it (fails under 1.5 times its speed or over 64 MiB), then what each
# stage of the import and each step of the collect costs.
INGEST_PAIRS ?= 5
bench-ingest:
	@command -v sqlite3 >/dev/null || { echo "bench-ingest: the baseline is sqlite3's .import: install sqlite3" >&2; exit 1; }
	MIGADVISOR_BENCH_PAIRS=$(INGEST_PAIRS) $(GO) test -count=1 -run '^$$' -bench CollectVsSQLiteImport -benchtime 1x ./cmd/migadvisor
	$(GO) test -count=1 -run '^$$' -bench 'ImportStages|CollectSteps' -benchtime 1x ./advisor/base/history ./advisor/app/collect

# The site store's benchmark: a collect into the dev cluster's MariaDB
# (scripts/dev-cluster.sh up first, as root).
bench-mariadb:
	@scripts/dev-cluster.sh up
	$(GO) test -count=1 -run '^$$' -tags mariadb -bench 'MariaDBCollect$$' -benchtime 3x ./advisor/base/history/mariadb
	MIGADVISOR_BENCH_PAIRS=$(BENCH_PAIRS) $(GO) test -count=1 -run '^$$' -tags mariadb -bench MariaDBCollectInto1M -benchtime 1x ./advisor/base/history/mariadb

# What cli_filter.lua adds to sbatch --test-only over an empty one, on the
# dev cluster's Slurm: CLIFILTER_PAIRS interleaved pairs (its cache
# answering), and its cache missing; min, median, p95 and max of each side
# and of the pairs' differences (docs/performance.md).
CLIFILTER_PAIRS ?= 200
bench-clifilter:
	@scripts/dev-cluster.sh up
	MIGADVISOR_TEST_CLIFILTER_PAIRS=$(CLIFILTER_PAIRS) $(GO) test -count=1 -tags slurm -run '^TestSlurmCliFilterCost$$' -v ./cmd/migadvisor

# Each target in turn (go test fuzzes one at a time). New interesting
# inputs are minimized for a few seconds at most: the default minute, on
# inputs the size of a site file, stalls the search. Failing inputs land in
# the package's testdata/fuzz/, which make test runs from then on.
FUZZ_TARGETS := slurm:FuzzParse slurm:FuzzSacctReader slurm:FuzzScanOutput slurm:FuzzOutputWorkloadGates slurm:FuzzDecodeJobstats slurm:FuzzJobstatsJSON catalog:FuzzSiteParse catalog:FuzzParseLayout advisor/app/index:FuzzDecodePeers

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "fuzz: $$name (./$$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./$$pkg; \
	done

# The demo keeps its history beside its sweep, out of the user's own.
demo: export MIGADVISOR_DB = $(CURDIR)/bin/demo-history.db
demo: build
	@echo '$$ migadvisor catalog'
	@$(BIN) catalog
	@echo
	@echo '$$ migadvisor lint examples/multi_slice_misuse.sh'
	@$(BIN) lint examples/multi_slice_misuse.sh || echo "(exit status $$?: the script has errors)"
	@echo
	@echo '$$ migadvisor lint examples/pytorch_mnist.sh'
	@$(BIN) lint examples/pytorch_mnist.sh && echo "(no findings)"
	@echo
	@echo '$$ migadvisor su --profile 2g.20gb --cpus 1 --mem 4G --hours 0.556'
	@$(BIN) su --profile 2g.20gb --cpus 1 --mem 4G --hours 0.556
	@echo
	@echo '$$ migadvisor su examples/full_gpu.sh'
	@$(BIN) su examples/full_gpu.sh
	@echo
	@rm -rf $(DEMO_DIR)
	@echo '$$ migadvisor sweep examples/qlora_finetune.sh --out $(DEMO_DIR)'
	@$(BIN) sweep examples/qlora_finetune.sh --out $(DEMO_DIR)
	@echo
	@echo '$$ diff examples/qlora_finetune.sh $(DEMO_DIR)/full.sh'
	@diff examples/qlora_finetune.sh $(DEMO_DIR)/full.sh || true
	@echo
	@echo '$$ migadvisor recommend examples/qlora_finetune.sh'
	@$(BIN) recommend examples/qlora_finetune.sh

# install builds only what is missing: 'sudo make install' after 'make build'
# needs no Go on root's PATH.
install: installable
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/migadvisor
	install -m 0755 $(LEAN) $(DESTDIR)$(PREFIX)/bin/migadvisor-monitor
	install -d $(DESTDIR)$(PREFIX)/libexec/migadvisor $(DESTDIR)$(PREFIX)/share/migadvisor/modulefiles
	install -m 0755 scripts/sbatch $(DESTDIR)$(PREFIX)/libexec/migadvisor/sbatch
	install -m 0755 $(WRAPPER) $(DESTDIR)$(PREFIX)/libexec/migadvisor/migadvisor-sbatch
	@# The modulefiles point at PREFIX (not DESTDIR: a package is staged there).
	for f in migadvisor.lua migadvisor.tcl; do \
		sed 's|@PREFIX@|$(PREFIX)|g' scripts/modulefiles/$$f > $(DESTDIR)$(PREFIX)/share/migadvisor/modulefiles/$$f && \
		chmod 0644 $(DESTDIR)$(PREFIX)/share/migadvisor/modulefiles/$$f || exit 1; \
	done
	@# Slurm's cli_filter/lua for login nodes (docs/admin/wrapper.md), with its prefix.
	sed 's|@PREFIX@|$(PREFIX)|g' scripts/cli_filter.lua > $(DESTDIR)$(PREFIX)/share/migadvisor/cli_filter.lua
	chmod 0644 $(DESTDIR)$(PREFIX)/share/migadvisor/cli_filter.lua
	@# Open OnDemand's form snippet and completed card (docs/admin/open-ondemand.md), with their prefix.
	install -d $(DESTDIR)$(PREFIX)/share/migadvisor/ood
	for f in form.yml.erb completed.md.erb; do \
		sed 's|@PREFIX@|$(PREFIX)|g' scripts/ood/$$f > $(DESTDIR)$(PREFIX)/share/migadvisor/ood/$$f && \
		chmod 0644 $(DESTDIR)$(PREFIX)/share/migadvisor/ood/$$f || exit 1; \
	done

# Go is needed only when a binary is missing: root's PATH (sudo's
# secure_path) seldom has it. A missing binary with no Go says what to run.
installable:
	@for b in $(BIN) $(LEAN) $(WRAPPER); do \
		if [ ! -x $$b ]; then \
			if command -v $(GO) >/dev/null 2>&1; then $(MAKE) build && exit 0; fi; \
			echo "install: $$b is missing and $(GO) is not on PATH: run 'make build' first (as yourself), then 'sudo make install'" >&2; exit 1; \
		fi; \
	done

# The command reference is generated from each command's --help, and
# TestCommandReference (in make test) fails when it is out of date.
reference:
	$(GO) test -count=1 ./cmd/migadvisor -run '^TestCommandReference$$' -update

generate:
	$(GO) test -count=1 ./catalog -run '^TestBuiltin(Models|SitesAndReferences)$$' -update

site:
	mkdocs build --strict --site-dir bin/site

# The runtime model's error beside the naive model's (time ∝ 1/SMs) on the
# same trials; go test ./... runs the same test quietly.
accuracy:
	$(GO) test -count=1 ./advisor/app/accuracy -run '^TestAccuracy' -v

# The report's advice beside the rules sites run (Job Defense Shield's alert,
# Princeton's MIG calculator, the Alliance's 50/50) on generated months of a
# MIG site whose truth is known, with and without Slurm's GPU figures:
# jobs moved, SU saved, jobs killed, and the scripts left to measure.
# SITE_REPLAY_SEEDS months each (go test ./... runs the three the docs show).
SITE_REPLAY_SEEDS ?= 3
site-replay:
	$(GO) test -count=1 ./cmd/migadvisor -run '^TestSiteReplay$$' -v -site-replay-seeds $(SITE_REPLAY_SEEDS)

# The replay's fidelity (issue 41): 312 short GPU jobs in bursts on the dev
# cluster's slices, run by real Slurm, collected and replayed; the median
# absolute error of the replayed waits against the recorded ones, which must
# be at most 10% of the mean wait (or 30 s). About 6 minutes, as root like
# test-slurm (which runs it too). MIGADVISOR_PLAN_FIDELITY_KEEP=DIR keeps
# the jobs' records there.
plan-fidelity:
	@if [ "$$(id -u)" != 0 ]; then \
		echo "plan-fidelity: the test submits jobs to the local Slurm that scripts/dev-cluster.sh starts as root: run 'sudo make plan-fidelity'" >&2; exit 1; fi
	@scripts/dev-cluster.sh up
	$(GO) test -count=1 -timeout 20m -tags slurm -run '^TestSlurmPlanFidelity$$' -v ./cmd/migadvisor

clean:
	rm -rf bin
