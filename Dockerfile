# rivet's container image for machines with a registry: `docker build -t rivet .`
#
# The same image `make image` builds (scripts/image.sh) from a local build, but compiled here in a
# Debian 12 stage: its root filesystem is assembled by the same script (`--context-only`: the
# binary, the libraries ldd names, the loader, /etc/passwd and /etc/group for uid 65532, the demo
# site in /srv/www), and the final stage below repeats the generated Dockerfile's settings
# (tests/e2e/test_image.py checks they agree). No shell, no package manager in the result.
#
# Untested as a whole on the project's machines: they reach no registry, so debian:12 cannot be
# pulled there. What is tested there: the build stage's commands (on Debian 12 itself) and the
# image they assemble (make image, tests/e2e/test_image.py).

FROM debian:12 AS build
# The build dependencies of the server, as scripts/setup.sh installs them (no test tools).
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake ninja-build g++ pkg-config \
      nlohmann-json3-dev libgmp-dev zlib1g-dev libbrotli-dev libzstd-dev libssl-dev \
      libc-ares-dev libhiredis-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRIVET_BUILD_TESTS=OFF \
      -DRIVET_BUILD_EXAMPLES=OFF \
 && ninja -C build rivet \
 && bash scripts/image.sh --context-only build

FROM scratch
COPY --from=build /src/build/image/rootfs/ /
# From here on, as scripts/image.sh writes it.
USER 65532:65532
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/rivet", "--healthcheck", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/rivet"]
CMD ["--bind", "0.0.0.0", "--port", "8080", "--root", "/srv/www", "--access-log", "stdout"]
