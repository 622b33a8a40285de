# The operator image for a registry (the lab packs its own: scripts/operator-image.sh). Build with
#   docker build -t REGISTRY/etcd-operator:VERSION .
# and install with `etcd-operator manifests --image REGISTRY/etcd-operator:VERSION | kubectl apply -f -`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# distroless: no shell or package manager; uid 65532 (nonroot), the Deployment's runAsUser.
FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
USER 65532:65532
# Pods the operator makes (restores, volume backups) pass only arguments: the entrypoint is the CLI.
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/src/cli/main.js"]
CMD ["run", "--cluster-wide"]
