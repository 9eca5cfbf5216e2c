# syntax=docker/dockerfile:1
# gw's container image: the `gw` command on Node 24, run as a non-root user. The controller
# Deployment of deploy/install.yaml and the data-plane Deployments gw provisions run it with their
# own command line (`gw controller ...`, `gw run --cluster --read-only ...`), which replaces the
# ENTRYPOINT: `gw` must therefore be a command on the PATH, as it is here.
#
#   docker build -t ghcr.io/gw-dev/gw:0.1.0 .     (the tag provisioning defaults to: gw's version)
#
# Node: the base image's Node is the exact version package.json pins through the npm package
# `node` (package-lock.json: node_modules/node). To move to another Node, change both together:
# `npm install node@24.X.Y` (package.json and the lock), then every `FROM node:...` below to
# 24.X.Y; test/packaging/dockerfile.test.ts fails while they differ. A slim Debian (glibc: bin/gw.js
# tunes glibc's malloc) rather than Alpine (musl) or distroless (no version-pinned tags).

# 1. The npm package, built as `npm pack` builds it (scripts/build-package.ts writes dist/ with
#    tsc, a dev dependency), then unpacked into /opt/gw with its production dependencies only,
#    at the versions the lock file pins.
FROM node:24.21.0-trixie-slim AS build
WORKDIR /build
COPY package.json package-lock.json ./
# --ignore-scripts: the only install scripts are the `node` package's (it downloads a second Node
# binary; the image's own is the same version) and protobufjs's (a version notice).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY scripts ./scripts
COPY deploy ./deploy
COPY docs ./docs
COPY examples ./examples
COPY tsconfig.json tsconfig.build.json README.md ./
RUN npm pack --pack-destination /tmp --loglevel=error \
 && mkdir -p /opt/gw \
 && tar -xzf /tmp/gw-*.tgz -C /opt/gw --strip-components=1 \
 && cp package-lock.json /opt/gw/ \
 && cd /opt/gw \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/node node_modules/.bin/node \
 && chmod 0755 bin/gw.js

# 2. The image: Node, the built gw and its production dependencies; npm and the other package
#    managers of the base image removed (nothing installs at run time).
FROM node:24.21.0-trixie-slim
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
    /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* \
 && ln -s /opt/gw/bin/gw.js /usr/local/bin/gw
COPY --from=build /opt/gw /opt/gw
# The base image's `node` user, by number: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 1000:1000
WORKDIR /home/node
ENTRYPOINT ["gw"]
CMD ["--help"]
