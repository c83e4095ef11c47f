# syntax=docker/dockerfile:1
#
# The rtload image that deploy/kubernetes/ runs (rtload:<Cargo.toml version>, e.g.
#   docker build -t rtload:0.1.0 .
# ): the release binary on a small Debian runtime with what the workloads call at run
# time (ffmpeg/ffprobe: OmniInteract media preparation and transcription datasets in
# other formats than WAV; CA roots: wss:// targets), as a non-root user. Linted by
# hadolint in CI; the build itself has not been run where this was written (no Docker
# engine there), see README "Deploy".

# Build stage: the same Debian release as the runtime, so the binary's glibc matches.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Everything cargo reads for the binary (Cargo.toml also names the benches and the
# integration tests); .dockerignore keeps target/, .git/ and run outputs out.
COPY . .
# The registry and target caches survive between builds (BuildKit); the binary is copied
# out of the cache mount, which is not part of the layer.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin rtload \
    && cp target/release/rtload /usr/local/bin/rtload

FROM debian:bookworm-slim
# Unpinned on purpose: bookworm's security updates replace these versions, and a pin
# would make the build fail instead of taking them.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates ffmpeg \
    && rm -rf /var/lib/apt/lists/*
# A fixed numeric uid, so Kubernetes can check runAsNonRoot (deploy/kubernetes uses it
# as runAsUser and fsGroup).
RUN groupadd --system --gid 10001 rtload \
    && useradd --system --uid 10001 --gid rtload --home-dir /work --create-home \
        --shell /usr/sbin/nologin rtload
COPY --from=build /usr/local/bin/rtload /usr/local/bin/rtload
# The shipped scenarios and their small synthetic datasets, in the working directory so
# their outputs (written next to the scenario) land somewhere writable:
#   docker run --rm rtload:0.1.0 run scenarios/quickstart.toml
COPY --chown=10001:10001 scenarios /work/scenarios
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["rtload"]
CMD ["--help"]
