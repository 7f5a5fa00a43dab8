# xmem — the one entry point: users and CI only ever type `make`.
# CMake does the compiling underneath (LibTorch ships a CMake config); this file owns
# dependencies, tests, benchmarks, install and the demo.

VERSION    := 0.1.0
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
SYSCONFDIR ?= /etc
DESTDIR    ?=
# Separate build trees let several builds (plain, sanitizer, a helper's) coexist.
SANITIZE   ?= 0
ifeq ($(SANITIZE),1)
BUILD      ?= build-asan
CMAKE_SAN  := -DXMEM_SANITIZE=ON
else
BUILD      ?= build
CMAKE_SAN  :=
endif
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)

# Debian 12 packages the project needs to build, test and run (see README "Dependencies").
DEB_PACKAGES := build-essential cmake pkg-config \
	libuv1-dev libyaml-cpp-dev libcmocka-dev libsqlite3-dev sqlite3 nlohmann-json3-dev \
	libtorch-dev python3-torch python3-torchvision libopenblas0-pthread \
	slurmctld slurmd slurm-client munge libmunge-dev iproute2 libslurm-dev lua5.1 lua-check libjson-c-dev \
	slurmdbd mariadb-server \
	chromium clang-format python3-venv python3-pip scdoc man-db \
	debhelper lintian fakeroot

# The project's own Python environment for tests and benches: PyTorch 2.x from PyPI and the
# Hugging Face stack, pinned in tests/venv/requirements.lock. Debian's torch 1.13 stays too.
VENV       ?= $(CURDIR)/.venv
# torch 2.6.0 + transformers 4.51.3 (tests/venv/hf26.lock), the Hugging Face accuracy set's own
# environment: installed by bench-accuracy only, never by deps or test.
VENV_HF26  ?= $(CURDIR)/.venv-hf26

.PHONY: all deps configure test test-unit test-integration bench bench-sim bench-estimate \
	bench-accuracy bench-daemon bench-packing bench-multigpu install uninstall clean demo format format-check deb

all: configure
	@cmake --build $(BUILD) -j $(JOBS)

configure: $(BUILD)/CMakeCache.txt

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DXMEM_VERSION=$(VERSION) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_SAN) >/dev/null

# Installs only what is missing; silent when everything is present.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "xmem: installing Debian packages:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "xmem: make deps needs root (sudo make deps)"; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@tests/venv/install.sh $(VENV)

test: deps all
	@$(MAKE) --no-print-directory format-check test-unit test-integration

test-unit:
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# On the lab as a small cluster (tests/integration/lab/cluster.sh: a login side and three
# nodes in network namespaces, up in seconds), as a site is; every lab-based area passes on
# it. `make demo` keeps the one-node lab.
test-integration:
	@XMEM_LAB_CLUSTER=1 XMEM_BUILD=$(abspath $(BUILD)) XMEM_VENV=$(VENV) tests/integration/run-all.sh

bench: bench-sim bench-estimate bench-daemon

bench-sim: deps all
	@$(BUILD)/bin/xmem-bench-sim
	@$(BUILD)/bin/xmem-verify-bench

# Exact capture vs plain CPU iterations (profile/analysis split), then the fast mode on the
# same workloads in the same run, then issue 16's targets on the venv's torch 2.x.
bench-estimate: deps all
	@XMEM_BUILD=$(abspath $(BUILD)) XMEM_VENV=$(VENV) bench/estimate.sh
	@XMEM_BUILD=$(abspath $(BUILD)) XMEM_VENV=$(VENV) bench/fast.sh --no-exact --no-plain
	@XMEM_BUILD=$(abspath $(BUILD)) XMEM_VENV=$(VENV) bench/sweep.sh
	@XMEM_BUILD=$(abspath $(BUILD)) XMEM_VENV=$(VENV) bench/targets.sh

bench-accuracy: deps all
	@tests/venv/install.sh $(VENV_HF26) tests/venv/hf26.lock
	@XMEM_BUILD=$(abspath $(BUILD)) XMEM_VENV=$(VENV) XMEM_VENV_HF26=$(VENV_HF26) bench/accuracy.sh

bench-daemon: deps all
	@XMEM_BUILD=$(abspath $(BUILD)) XMEM_VENV=$(VENV) bench/daemon.sh

# Issue 29's targets: a 7B-shaped FSDP2 job at 8 ranks in fast mode, beside PyTorch's
# FSDPMemTracker (docs/bench.md, "Multi-GPU estimates").
bench-multigpu: deps all
	@XMEM_BUILD=$(abspath $(BUILD)) XMEM_VENV=$(VENV) bench/multigpu.sh $(BENCH_ARGS)

# Whole GPUs against xmem's packing on the lab's real Slurm (docs/bench.md): on the lab as a
# cluster (two GPU nodes), unless XMEM_LAB_CLUSTER=0; bench/packing.sh --help for the options.
bench-packing: deps all
	@XMEM_LAB_CLUSTER=$${XMEM_LAB_CLUSTER-1} XMEM_BUILD=$(abspath $(BUILD)) bench/packing.sh $(BENCH_ARGS)

# The Slurm demo (issue: sbatch --xmem), then a replay of a bundled trace through the simulator.
# Its first screen is the demo: the build's lines (every "Entering directory" and "Built
# target") go to a log, printed only when the build fails.
demo: deps
	@mkdir -p $(BUILD)
	@$(MAKE) --no-print-directory all >$(BUILD)/demo-build.log 2>&1 || \
		{ cat $(BUILD)/demo-build.log; echo "xmem: the build failed (above; $(BUILD)/demo-build.log)"; exit 1; }
	@XMEM_BUILD=$(abspath $(BUILD)) examples/demo.sh
	@XMEM_BUILD=$(abspath $(BUILD)) examples/sim-demo.sh

install: all
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

uninstall:
	@if [ -f $(BUILD)/install_manifest.txt ]; then xargs -r rm -f < $(BUILD)/install_manifest.txt; fi

# Debian packages (debian/, docs/packaging.md), built from a copy of the files git tracks or
# would track (a checkout's edits included) in $(DEB_DIR)/src: nothing comes from a build tree.
# $(DEB_DIR) keeps the three .debs, build.log (shown only when the build fails) and lintian.txt;
# the copy is removed once the build succeeds. Keep DEB_DIR's path: ccache hits need it.
# No -dbgsym packages: `apt-get install ./*.deb` must install the three and nothing else.
DEB_DIR ?= $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/src/xmem-$(VERSION)
deb:
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	@git ls-files -z --cached --others --exclude-standard | tar --null --no-recursion \
		--ignore-failed-read --warning=no-failed-read -T - -cf - | tar -xf - -C $(DEB_SRC)
	@$(if $(CCACHE_DIR),export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache;) \
		cd $(DEB_SRC) && DEB_BUILD_OPTIONS="noautodbgsym $${DEB_BUILD_OPTIONS:-}" \
		dpkg-buildpackage -b -us -uc --jobs=$(JOBS) >../../build.log 2>&1 || \
		{ tail -n 60 ../../build.log; echo "xmem: the package build failed ($(DEB_DIR)/build.log)"; exit 1; }
	@mv $(DEB_DIR)/src/*.deb $(DEB_DIR)/ && rm -rf $(DEB_DIR)/src
	@lintian --allow-root --fail-on error $(DEB_DIR)/*.deb >$(DEB_DIR)/lintian.txt 2>&1; rc=$$?; \
		cat $(DEB_DIR)/lintian.txt; [ $$rc = 0 ] || { echo "xmem: lintian found errors (above)"; exit 1; }
	@echo "deb: $$(cd $(DEB_DIR) && echo *.deb) in $(DEB_DIR)"

# The committed .clang-format is enforced, not suggested: make test fails on any drift and
# names the files; `make format` fixes them.
FORMAT_FILES = git ls-files -z '*.c' '*.h' '*.cpp' '*.hpp'
format:
	@$(FORMAT_FILES) | xargs -0 clang-format -i

format-check:
	@bad=$$($(FORMAT_FILES) | xargs -0 clang-format --dry-run 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning:.*/\1/p' | sort -u); \
	if [ -n "$$bad" ]; then \
		echo "xmem: these files differ from .clang-format (run 'make format'):"; echo "$$bad" | sed 's/^/  /'; exit 1; \
	fi; echo "format-check: every C and C++ file matches .clang-format"
	@$(VENV)/bin/ruff check --quiet --output-format concise $$(git ls-files '*.py') || \
		{ echo "xmem: ruff found the problems above in Python (ruff.toml; 'ruff check --fix' mends some)"; exit 1; }
	@echo "format-check: ruff finds nothing in the Python (ruff.toml)"
	@luacheck --formatter plain --codes $$(git ls-files '*.lua') || \
		{ echo "xmem: luacheck found the problems above in Lua (.luacheckrc)"; exit 1; }
	@echo "format-check: luacheck finds nothing in the Lua (.luacheckrc)"

clean:
	@rm -rf build build-asan
