# dispatchtop serve in a container: a static binary on a distroless base,
# run as a non-root user.
#
#   docker build -t dispatchtop .
#   docker run --pid=host -p 9477:9477 -v /srv/agents:/srv/agents:ro \
#     -e DISPATCHTOP_ROOT=/srv/agents/.sessions -e DISPATCHTOP_TOKEN=... dispatchtop
#
# Liveness is proved by pids: give the container the host's PID namespace
# (--pid=host) so that the agents' processes are visible, or set
# DISPATCHTOP_NO_PID_CHECK=true to judge by mtimes alone. Every flag of
# serve has a variable (DISPATCHTOP_LISTEN, DISPATCHTOP_TOKEN_FILE, ...).
# The roots are read, never written: mount them read-only.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/dispatchtop/dispatchtop/cli.Version=${VERSION} -X github.com/dispatchtop/dispatchtop/cli.Commit=${COMMIT} -X github.com/dispatchtop/dispatchtop/cli.Date=${DATE}" -o /out/dispatchtop .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/dispatchtop /dispatchtop
# Inside a container loopback is the container's own: listen on every
# address, and set a token (DISPATCHTOP_TOKEN or DISPATCHTOP_TOKEN_FILE).
ENV DISPATCHTOP_LISTEN=0.0.0.0:9477
EXPOSE 9477
USER nonroot:nonroot
ENTRYPOINT ["/dispatchtop", "serve"]
