# A small image of perfbase for agents (perfbase k8s): built with the dist profile (fat LTO, as
# the published binary) in a Rust image, run from Debian's slim image as an unprivileged user.
# perfbase links rustls and SQLite statically, so the runtime image needs only CA certificates.
#
#   docker build -t perfbase:0.1.0 .
FROM rust:1.89-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --profile dist --locked --bin perfbase

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /work perfbase \
 && mkdir -p /work && chown perfbase /work
COPY --from=build /src/target/dist/perfbase /usr/local/bin/perfbase
USER perfbase
WORKDIR /work
ENTRYPOINT ["perfbase"]
