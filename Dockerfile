# folio's container image: built on Debian 13, run from an empty image that
# holds only what folio needs (no shell, no package manager). No `# syntax=`
# line and nothing pulled at build time but debian:trixie-slim, so the classic
# builder works offline from a local one.
#   docker build -t folio .
#   docker run --read-only -p 8080:8080 folio
#   docker run --read-only -p 8080:8080 -v "$PWD/my-article:/article:ro" -e FOLIO_ROOT=/article folio
# The classic builder keeps the build stage as an untagged image (~600 MB)
# after each build; it carries the label below, so this removes it and no
# other image: docker image prune -f --filter label=folio.stage=build
# (BuildKit keeps a build cache instead: docker builder prune.)

FROM debian:trixie-slim AS build
LABEL folio.stage=build
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
# No QR code: the address a container sees is not one a phone reaches.
RUN meson setup /build --buildtype=release -Dtests=disabled -Dqrencode=disabled \
 && ninja -C /build \
 && meson install -C /build --destdir /install
# The runtime's whole file system: folio, every shared object ldd names for
# it (the dynamic loader included) at the path ldd gives, libmagic's
# database where libmagic looks (/usr/share/misc/magic.mgc), the passwd and
# group entries of 65534, and how to look up host names (files, then DNS).
RUN mkdir -p /rootfs/usr/local/bin /rootfs/usr/share/misc /rootfs/etc \
 && cp /install/usr/local/bin/folio /rootfs/usr/local/bin/folio \
 && for lib in $(ldd /rootfs/usr/local/bin/folio | grep -o '/[^ ]*'); do cp -L --parents "$lib" /rootfs; done \
 && cp -L /usr/share/misc/magic.mgc /rootfs/usr/share/misc/magic.mgc \
 && grep '^nobody:' /etc/passwd >/rootfs/etc/passwd \
 && grep '^nogroup:' /etc/group >/rootfs/etc/group \
 && echo 'hosts: files dns' >/rootfs/etc/nsswitch.conf

FROM scratch
COPY --from=build /rootfs/ /
# This repo's article is the default content; mount your own at /article and
# set FOLIO_ROOT=/article (or pass --root /article).
COPY www/ /srv/folio/www/
COPY fragments/ /srv/folio/fragments/
COPY assets/ /srv/folio/assets/
COPY config/folio.conf /srv/folio/config/folio.conf
# All addresses inside the container, the platform's PORT, production unless
# FOLIO_PRODUCTION=false; access log on stdout, diagnostics on stderr; folio
# writes no file, so --read-only works.
ENV PATH=/usr/local/bin \
    FOLIO_ROOT=/srv/folio \
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
