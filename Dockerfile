# Multi-stage build: compile in the official Rust image, run in a small Debian
# image as an unprivileged user. Base images are pinned by digest (the tag is
# for people; the digest is what is pulled): update both together.
#
#   docker build --build-arg FENIX_GIT_REVISION=$(git rev-parse --short HEAD) -t fenix .
FROM rust:1.95-bookworm@sha256:6258907abe69656e41cd992e0b705cdcfabcbbe3db374f92ed2d47121282d4a1 AS build
# .dockerignore keeps .git out of the context: the revision `fenix --version`
# shows comes from this argument (else "unknown").
ARG FENIX_GIT_REVISION=unknown
WORKDIR /src
COPY . .
# --locked: exactly the versions of Cargo.lock, or fail.
RUN cargo build --release --locked -p fenix --bin fenix && strip target/release/fenix

FROM debian:bookworm-slim@sha256:3783cc01769c7b2b1b83a5c5ad96c815348e28ed7da68e2e3687004faa906251
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/fenix --create-home fenix
COPY --from=build /src/target/release/fenix /usr/local/bin/fenix
USER fenix
WORKDIR /var/lib/fenix
# The SQLite database and its key file (the default); with PostgreSQL nothing
# is written here.
VOLUME /var/lib/fenix
ENV FENIX_LISTEN=0.0.0.0:8080 DATABASE_URL=sqlite:///var/lib/fenix/fenix.db
EXPOSE 8080
# `fenix health` asks /healthz (the image has no curl). A --worker-only
# instance serves /healthz on FENIX_LISTEN too.
HEALTHCHECK --interval=10s --timeout=6s --start-period=30s --retries=3 \
    CMD ["fenix", "health", "--url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["fenix"]
CMD ["serve"]
