# Thin wrapper over CMake. `make run` and `make test` do everything on a fresh machine.
BUILD ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_TSAN ?= build-tsan
JOBS ?= $(shell nproc)
PORT ?= 8080
TLS_PORT ?= 8443
FUZZ_SECONDS ?= 60
# The end-to-end tests run in E2E_JOBS pytest-xdist processes: most of their time is waiting
# (timeouts, drains, restarts crossed on purpose), not CPU. E2E_JOBS=0 runs them in this process.
E2E_JOBS ?= 2
PYTEST_E2E = python3 -m pytest -q -n $(E2E_JOBS) tests/e2e

.PHONY: all setup build run image test test-busy unit layers e2e conformance consumers asan tsan fuzz bench bench-smoke bench-full bench-models bench-framework format clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: setup $(BUILD)/build.ninja
	@ninja -C $(BUILD) -j $(JOBS)

# http://localhost:$(PORT) and https://localhost:$(TLS_PORT), the latter on a self-signed
# certificate for localhost made at the first run into $(BUILD)/demo-tls (scripts/demo_cert.sh).
# Builds only the server it runs, not the tests and examples `make build` makes.
run: setup $(BUILD)/build.ninja
	@ninja -C $(BUILD) -j $(JOBS) rivet
	@bash scripts/demo_cert.sh $(BUILD)/demo-tls $(TLS_PORT)
	./$(BUILD)/rivet --port $(PORT) --root public --tls-port $(TLS_PORT) \
	  --tls-cert $(BUILD)/demo-tls/cert.pem --tls-key $(BUILD)/demo-tls/key.pem

# The container image of build/rivet, FROM scratch (no base image to pull): tagged rivet:VERSION
# and rivet:latest. Needs a running Docker daemon (or IMAGE_TOOL=podman); docs/OPERATIONS.md.
image: build
	bash scripts/image.sh $(BUILD)

unit: build
	./$(BUILD)/unit_tests

# The layer rules are the build's (CMakeLists.txt, RIVET_LAYER_RULES): this proves an include
# across them fails to compile, with the build's own flags (a few seconds).
layers: build
	bash tests/layers/check.sh $(BUILD)

e2e: build
	RIVET_BIN=$(abspath $(BUILD))/rivet $(PYTEST_E2E)

# The conformance suites at full length (~5 min): Autobahn's every WebSocket case over ws://,
# the large compression cases included (`make e2e` runs all but the 90 largest of them), and
# h2spec.
conformance: build
	RIVET_AUTOBAHN=full RIVET_BIN=$(abspath $(BUILD))/rivet python3 -m pytest -q \
	  tests/e2e/test_websocket_autobahn.py tests/e2e/test_http2_conformance.py

# rivet as users get it (tests/consumer/run.sh): installed into a temporary prefix, then used
# through find_package, add_subdirectory and pkg-config, and every public header compiled alone.
consumers: build
	bash tests/consumer/run.sh $(BUILD)

# Everything CI runs: unit tests, the layer rules, end-to-end tests, rivet as a library its users
# build against (consumers), the benchmark harness's smoke run, the same tests under ASan+UBSan,
# the unit tests (which include the framework on real sockets with workers) under TSan, and a
# bounded fuzz run.
test: build
	./$(BUILD)/unit_tests
	bash tests/layers/check.sh $(BUILD)
	RIVET_BIN=$(abspath $(BUILD))/rivet $(PYTEST_E2E)
	$(MAKE) --no-print-directory consumers
	$(MAKE) --no-print-directory bench-smoke
	$(MAKE) --no-print-directory asan
	$(MAKE) --no-print-directory tsan
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

# `make test` beside `stress-ng --cpu $(JOBS)`, the load of a busy laptop or a shared CI runner:
# the suite waits for events, not for time, and must pass so. stress-ng is checked to be running
# before the tests start, and stopped however they end.
test-busy: setup
	@stress-ng --cpu $(JOBS) --quiet & load=$$!; \
	  trap 'kill $$load 2>/dev/null' EXIT INT TERM; \
	  sleep 1; kill -0 $$load || { echo "test-busy: stress-ng is not running" >&2; exit 1; }; \
	  echo "test-busy: stress-ng --cpu $(JOBS) is running (pid $$load)"; \
	  $(MAKE) --no-print-directory test

asan: setup
	cmake -S . -B $(BUILD_ASAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRIVET_SANITIZE=ON >/dev/null
	ninja -C $(BUILD_ASAN) -j $(JOBS)
	./$(BUILD_ASAN)/unit_tests
	RIVET_BIN=$(abspath $(BUILD_ASAN))/rivet RIVET_SANITIZED=1 $(PYTEST_E2E)

# The threads' hand-offs (worker pool -> loop inbox, drain) under ThreadSanitizer.
tsan: setup
	cmake -S . -B $(BUILD_TSAN) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIVET_TSAN=ON >/dev/null
	ninja -C $(BUILD_TSAN) -j $(JOBS) unit_tests
	TSAN_OPTIONS=halt_on_error=1 ./$(BUILD_TSAN)/unit_tests

fuzz: setup
	CC=clang CXX=clang++ cmake -S . -B $(BUILD_FUZZ) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIVET_FUZZ=ON -DRIVET_TESTS=OFF >/dev/null
	ninja -C $(BUILD_FUZZ) -j $(JOBS) request_parser_fuzz proxy_header_fuzz websocket_frame_fuzz http2_session_fuzz response_parser_fuzz multipart_parser_fuzz
	mkdir -p $(BUILD_FUZZ)/corpus $(BUILD_FUZZ)/proxy_corpus $(BUILD_FUZZ)/websocket_corpus $(BUILD_FUZZ)/http2_corpus $(BUILD_FUZZ)/response_corpus $(BUILD_FUZZ)/multipart_corpus
	@# FUZZ_SECONDS in all: the small PROXY header parser, the response parser and the multipart
	@# parser a tenth of it each, the WebSocket reader and the HTTP/2 session a fifth each (each at
	@# least 1 s), the request parser the rest (three tenths).
	small=$$(( $(FUZZ_SECONDS) / 10 )); [ $$small -ge 1 ] || small=1; \
	websocket=$$(( $(FUZZ_SECONDS) / 5 )); [ $$websocket -ge 1 ] || websocket=1; \
	http2=$$(( $(FUZZ_SECONDS) / 5 )); [ $$http2 -ge 1 ] || http2=1; \
	request=$$(( $(FUZZ_SECONDS) - 3 * small - websocket - http2 )); [ $$request -ge 1 ] || request=1; \
	./$(BUILD_FUZZ)/request_parser_fuzz -max_total_time=$$request -print_final_stats=1 $(BUILD_FUZZ)/corpus tests/fuzz/corpus && \
	./$(BUILD_FUZZ)/proxy_header_fuzz -max_total_time=$$small -print_final_stats=1 $(BUILD_FUZZ)/proxy_corpus tests/fuzz/proxy_corpus && \
	./$(BUILD_FUZZ)/websocket_frame_fuzz -max_total_time=$$websocket -print_final_stats=1 $(BUILD_FUZZ)/websocket_corpus tests/fuzz/websocket_corpus && \
	./$(BUILD_FUZZ)/http2_session_fuzz -max_total_time=$$http2 -print_final_stats=1 $(BUILD_FUZZ)/http2_corpus tests/fuzz/http2_corpus && \
	./$(BUILD_FUZZ)/response_parser_fuzz -max_total_time=$$small -print_final_stats=1 $(BUILD_FUZZ)/response_corpus tests/fuzz/response_corpus && \
	./$(BUILD_FUZZ)/multipart_parser_fuzz -max_total_time=$$small -print_final_stats=1 $(BUILD_FUZZ)/multipart_corpus tests/fuzz/multipart_corpus

# Benchmarks (docs/BENCHMARKS.md): quick (~6 min), full with a 10-minute soak (~40 min), and
# concurrency models under CPU-heavy load (~4 min). `make bench` ends with rivet against nginx
# over TLS (~2 min).
bench: build
	bash bench/run.sh
	bash bench/run.sh --tls

# The benchmark harness checks itself (~5 min): its parsers and statistics on recorded outputs,
# then every server in every scenario of the main bench and every concurrency model once, briefly,
# and every server of the TLS, WebSocket, HTTP/2 and PostgreSQL benches in the scenarios below
# (each kind of run they make: keep-alive and per-connection TLS, plain and deflate echo, h2 and
# h2c, queries and the HTTP client): each must start, answer correctly and produce a row; then
# the same from the programs packed for another machine (bench/portable.sh). Figures are not
# asserted; docs/ is not touched. BENCH_SMOKE_ALL=1 runs every scenario of every bench.
SMOKE_TLS ?= tls_hello_c100,tls_full_close
SMOKE_WS ?= ws_echo_32_c100,ws_echo_16k_c100_deflate
SMOKE_H2 ?= h2_hello_c100_m10,h2c_hello_c100_m10
SMOKE_PG ?= queries20_c100,fetch_c32
smoke_scenarios = $(if $(BENCH_SMOKE_ALL),,--scenarios $(1))
bench-smoke: build
	python3 -m pytest -q bench
	bash bench/run.sh --smoke
	bash bench/run.sh --models --smoke
	bash bench/run.sh --tls --smoke $(call smoke_scenarios,$(SMOKE_TLS))
	bash bench/run.sh --websocket --smoke $(call smoke_scenarios,$(SMOKE_WS))
	bash bench/run.sh --http2 --smoke $(call smoke_scenarios,$(SMOKE_H2))
	bash bench/run.sh --pg --smoke $(call smoke_scenarios,$(SMOKE_PG))
	bash bench/portable.sh pack $(BUILD)/portable
	bash bench/portable.sh check $(BUILD)/portable

bench-full: build
	bash bench/run.sh --full

bench-models: build
	bash bench/run.sh --models

# What the framework's features cost per request beside a plain /hello: middleware, a coroutine
# that does not wait, 10,000 requests waiting on a timer (~3 min; docs/BENCHMARKS.md). Not in
# `make test`; its smoke test is (bench/test_framework_bench.py). Options: BENCH_FRAMEWORK_ARGS.
bench-framework: build
	python3 bench/framework/run.py $(BENCH_FRAMEWORK_ARGS)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_FUZZ)
