# Builds the controller image that config/default and charts/bg-gitops run:
#   make image                      # bg-gitops:$(VERSION), VERSION from git describe
#   docker build --build-arg VERSION=v0.1.0 -t bg-gitops:v0.1.0 .
# VERSION is stamped into the binary (bg-gitops version); tag the image with
# the same string, since `bg-gitops version` reads the controller's version
# from its Deployment's image tag.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# -tags nodev leaves out `bg-gitops dev` (the local environment: test control plane,
# Gitea, Flink operator simulator): 42 MB instead of 57 MB.
RUN CGO_ENABLED=0 go build -trimpath -tags nodev \
    -ldflags "-s -w -X bggitops.dev/bg-gitops/internal/cli.Version=${VERSION}" \
    -o /bg-gitops ./cmd/bg-gitops

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /bg-gitops /bg-gitops
USER 65532:65532
ENTRYPOINT ["/bg-gitops"]
