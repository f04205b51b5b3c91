# folio's container image: built on Debian 12, run on Debian 12 with only the
# runtime libraries. No `# syntax=` line and nothing pulled at build time, so
# the classic builder works offline from a local debian:bookworm-slim.
#   docker build -t folio .
#   docker run --read-only -p 8080:8080 folio
#   docker run --read-only -p 8080:8080 -v "$PWD/my-article:/article:ro" -e FOLIO_ROOT=/article folio

FROM debian:bookworm-slim AS build
# What a release build needs, nothing of the test suite (-Dtests=disabled).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      gcc libc6-dev pkg-config meson ninja-build \
      libmicrohttpd-dev libmagic-dev zlib1g-dev libinih-dev libbrotli-dev libzstd-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY meson.build meson_options.txt ./
COPY src/ src/
COPY docs/man/ docs/man/
RUN meson setup /build --buildtype=release -Dtests=disabled \
 && ninja -C /build \
 && meson install -C /build --destdir /install

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libmagic1 zlib1g libinih1 libbrotli1 libzstd1 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log
# meson install put folio in /usr/local/bin, on PATH.
COPY --from=build /install/usr/local/bin/folio /usr/local/bin/folio
# This repo's article is the default content; mount your own at /article and
# set FOLIO_ROOT=/article (or pass --root /article).
COPY www/ /srv/folio/www/
COPY fragments/ /srv/folio/fragments/
COPY assets/ /srv/folio/assets/
COPY config/folio.conf /srv/folio/config/folio.conf
# All addresses inside the container, the platform's PORT, production unless
# FOLIO_PRODUCTION=false; access log on stdout, diagnostics on stderr; folio
# writes no file, so --read-only works.
ENV FOLIO_ROOT=/srv/folio \
    FOLIO_HOST=0.0.0.0 \
    PORT=8080 \
    FOLIO_PRODUCTION=true
EXPOSE 8080
# nobody:nogroup, numeric so Kubernetes' runAsNonRoot can check it.
USER 65534:65534
WORKDIR /
# The check is a second folio: it sees this ENV and the config file, not the
# flags given after the image name (so set the address with -e PORT / FOLIO_HOST).
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=3 \
  CMD ["folio", "--health-check"]
ENTRYPOINT ["folio"]
