# capbroker as a container image: a static binary on distroless, run as a
# non-root user (uid 65532).
#
#   docker build --build-arg COMMIT=$(git rev-parse HEAD) -t capbroker .
#   docker run --rm capbroker version
#   docker run --rm -p 8080:8080 -e CAPBROKER_TOKEN=secret capbroker serve --addr 0.0.0.0:8080
#
# The build stage compiles with CGO off (SQLite is pure Go), so the final
# image holds only the binary, CA certificates and /etc/passwd.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/capbroker/capbroker/internal/buildinfo.version=${VERSION} -X github.com/capbroker/capbroker/internal/buildinfo.commit=${COMMIT}" \
      -o /out/capbroker ./cmd/capbroker

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/capbroker /usr/local/bin/capbroker
COPY LICENSE NOTICE /usr/share/doc/capbroker/
USER nonroot:nonroot
# Sessions, traces and the card index live under the user's home
# (/home/nonroot/.local/share/capbroker, /home/nonroot/.cache/capbroker):
# mount a volume there to keep them.
ENV HOME=/home/nonroot
EXPOSE 8080 8931
ENTRYPOINT ["/usr/local/bin/capbroker"]
CMD ["--help"]
