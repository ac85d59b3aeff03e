# Multi-stage build: compile in the official Rust image, run in a small Debian
# image as an unprivileged user.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p fenix --bin fenix && strip target/release/fenix

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/fenix --create-home fenix
COPY --from=build /src/target/release/fenix /usr/local/bin/fenix
USER fenix
WORKDIR /var/lib/fenix
ENV FENIX_LISTEN=0.0.0.0:8080 DATABASE_URL=sqlite:///var/lib/fenix/fenix.db
EXPOSE 8080
ENTRYPOINT ["fenix"]
CMD ["serve"]
