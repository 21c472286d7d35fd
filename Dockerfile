# The Tessera image: `tessera serve` as the `tessera` container of deploy/scheduler.yaml runs it (any subcommand works).
# Two stages on Debian 12 (bookworm): the build stage installs the toolchain and the -dev
# packages with scripts/deps.sh and builds the tessera binary alone (no tests, no benchmarks);
# the runtime stage installs only the Debian packages that hold the shared libraries the binary
# links (listed by the build stage with scripts/runtime-packages.sh, so the list cannot drift
# from the build) and runs as the non-root user 65532 (its runAsUser in deploy/scheduler.yaml).
#
# Build it with scripts/build-image.sh (docker, podman or buildah; from a debootstrap root when
# no registry is reachable), or directly:
#   docker build -t localhost/tessera:0.1.0 .
# BASE and BUILD_BASE name the Debian 12 images of the two stages.
ARG BUILD_BASE=docker.io/library/debian:bookworm
ARG BASE=docker.io/library/debian:bookworm-slim

FROM ${BUILD_BASE} AS build
WORKDIR /src
COPY scripts/deps.sh scripts/runtime-packages.sh scripts/
RUN bash scripts/deps.sh && rm -rf /var/lib/apt/lists/*
COPY CMakeLists.txt ./
COPY src ./src
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_TESTS=OFF \
      -DTESSERA_BENCH=OFF >/dev/null \
 && cmake --build build --target tessera \
 && strip build/tessera \
 && ./build/tessera --version \
 && bash scripts/runtime-packages.sh build/tessera >runtime-packages.txt \
 && echo "runtime packages: $(tr '\n' ' ' <runtime-packages.txt)"

FROM ${BASE}
COPY --from=build /src/runtime-packages.txt /usr/share/tessera/runtime-packages.txt
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates $(cat /usr/share/tessera/runtime-packages.txt) >/dev/null \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && groupadd --gid 65532 tessera \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin tessera
COPY --from=build /src/build/tessera /usr/local/bin/tessera
USER 65532:65532
EXPOSE 8888
ENTRYPOINT ["/usr/local/bin/tessera"]
CMD ["serve", "--help"]
