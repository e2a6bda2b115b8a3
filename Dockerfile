# askops' container image: `bot serve` as a static binary on distroless, as a
# non-root user. compose.yaml builds it and starts it beside Redis:
#
#   docker compose up
#
# By hand: docker build -t askops . && docker run --rm askops version
# Release builds stamp what `bot version` prints:
#   docker build --build-arg VERSION=v0.1.0 --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) -t askops .
# Without them the binary names the commit Go reads from .git, when the
# context has one.
#
# cmd/bot/dockerfile_test.go runs this file's go build line with go build
# itself, so the image cannot drift from the binary the tests build.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" -o /out/bot ./cmd/bot

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bot /usr/local/bin/bot
USER nonroot:nonroot
WORKDIR /home/nonroot
# The console (a serve without Slack) or http.listen (with Slack).
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/bot"]
CMD ["serve"]
