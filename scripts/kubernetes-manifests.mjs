// deploy/kubernetes as objects, for the test that checks them offline and for the one that plays them with
// `podman kube play` (docs/decisions/0112). Podman 4.3 plays Pods and Deployments only and resolves
// neither Services nor Secrets of the file; playOnOneHost() turns the shipped objects into Pods on the
// host's network, with HAProxy standing in for the Service, so that the test runs the same containers,
// settings and volumes as a cluster would.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';

export const MANIFESTS = fileURLToPath(new URL('../deploy/kubernetes/', import.meta.url));
const HAPROXY_CFG = fileURLToPath(new URL('../deploy/haproxy.cfg', import.meta.url));

function parseFile(file) {
  return parseAllDocuments(readFileSync(file, 'utf8')).flatMap((document) => {
    const [error] = document.errors;
    if (error) throw new Error(`${file}: ${error.message}`);
    const object = document.toJS();
    return object ? [object] : [];
  });
}

/** Every object the kustomization lists, in its order. */
export function readManifests(dir = MANIFESTS) {
  const [kustomization] = parseFile(join(dir, 'kustomization.yaml'));
  return kustomization.resources.flatMap((file) => parseFile(join(dir, file)));
}

export const byKind = (manifests, kind) => manifests.filter((object) => object.kind === kind);

export function named(manifests, kind, name) {
  const found = manifests.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`deploy/kubernetes has no ${kind} ${name}`);
  return found;
}

/** Whether `labels` carry every label of `selector` (a Service's map, or a `matchLabels`). */
export function selects(selector, labels = {}) {
  const wanted = selector?.matchLabels ?? selector ?? {};
  return (
    Object.keys(wanted).length > 0 && Object.entries(wanted).every(([key, value]) => labels[key] === value)
  );
}

/** The Deployments and StatefulSets, each with its pod template. */
export const workloads = (manifests) =>
  manifests.filter((object) => object.kind === 'Deployment' || object.kind === 'StatefulSet');

/** `$(NAME)` as Kubernetes expands it: from the variables defined before; unknown references stay. */
const expand = (text, env) =>
  text.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, name) => env[name] ?? ref);

/**
 * A container's environment as the kubelet gives it: `envFrom` first, then `env` in order, each value
 * read from its ConfigMap or Secret and its `$(NAME)` references expanded.
 */
export function containerEnv(manifests, container) {
  const data = (kind, name) => {
    const object = named(manifests, kind, name);
    return kind === 'Secret' ? { ...object.data, ...object.stringData } : object.data;
  };
  const env = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, data('ConfigMap', source.configMapRef.name));
    if (source.secretRef) Object.assign(env, data('Secret', source.secretRef.name));
  }
  for (const { name, value, valueFrom } of container.env ?? []) {
    const ref = valueFrom?.configMapKeyRef ?? valueFrom?.secretKeyRef;
    const kind = valueFrom?.configMapKeyRef ? 'ConfigMap' : 'Secret';
    env[name] = ref ? data(kind, ref.name)[ref.key] : expand(value ?? '', env);
  }
  return env;
}

/**
 * The objects as Pods that Podman 4.3 plays on one machine, the cluster's differences replaced:
 * - each Deployment's `replicas` and each StatefulSet's one pod become Pods (`<name>-0`, `-1`, …) on the
 *   host's network, each on a port of its own (`port(i)`, given to the server as PORT and to Redis in
 *   its command), the Services' names in the settings replaced by those addresses;
 * - ConfigMaps and Secrets are read into each container's environment (`config` and `secrets` replace
 *   their values: the test's addresses and secrets), secret volumes become `secretDirs`' folders and
 *   volume claims Podman volumes named `<volumePrefix>-<claim>-<pod>`;
 * - the image `gatehouse` is `image`, any other the stand-in `toolsImage`; probes are left out (Podman
 *   would run them as health checks inside the image): HAProxy, standing in for the Service, probes
 *   readiness as the endpoints would; resources are left out too (a test machine shared with others);
 * - the bundled provider (on `idpPort`) and HAProxy (deploy/haproxy.cfg on `lbPort`, its servers the pods
 *   the Service `service` selects, the file written to `haproxyDir`) are added.
 * Returns the YAML, the Pods (name, port, labels), the HAProxy configuration and the volumes to create.
 */
export function playOnOneHost(manifests, options) {
  const { image, toolsImage, port, config = {}, secrets = {}, secretDirs = {}, volumePrefix } = options;
  const objects = manifests.map((object) => {
    if (object.kind === 'ConfigMap') return { ...object, data: { ...object.data, ...config } };
    if (object.kind === 'Secret')
      return { ...object, data: {}, stringData: { ...object.stringData, ...secrets } };
    return object;
  });
  const instances = workloads(objects).flatMap((workload) =>
    Array.from({ length: workload.spec.replicas ?? 1 }, (_, i) => ({
      workload,
      name: `${workload.metadata.name}-${i}`,
    })),
  );
  const pods = instances.map(({ workload, name }, i) => ({
    name,
    port: port(i),
    labels: workload.spec.template.metadata.labels,
  }));
  /** `service:port` → the loopback address of the first pod it selects. */
  const addresses = byKind(objects, 'Service').flatMap((service) => {
    const pod = pods.find((candidate) => selects(service.spec.selector, candidate.labels));
    return pod
      ? service.spec.ports.map(({ port: servicePort }) => [
          `${service.metadata.name}:${servicePort}`,
          `127.0.0.1:${pod.port}`,
        ])
      : [];
  });
  const local = (text) =>
    addresses.reduce(
      (result, [from, to]) => result.replaceAll(`//${from}`, `//${to}`).replaceAll(`@${from}`, `@${to}`),
      text,
    );
  const volumes = [];

  const played = instances.map(({ workload, name }, i) => {
    const { spec: podSpec, metadata } = workload.spec.template;
    const hostPort = String(pods[i].port);
    const claims = new Set((workload.spec.volumeClaimTemplates ?? []).map((claim) => claim.metadata.name));
    const podVolumes = (podSpec.volumes ?? []).map((volume) =>
      volume.secret
        ? { name: volume.name, hostPath: { path: secretDirs[volume.secret.secretName], type: 'Directory' } }
        : volume,
    );
    for (const claim of claims) {
      const volumeName = `${volumePrefix}-${claim}-${name}`;
      volumes.push(volumeName);
      podVolumes.push({ name: claim, persistentVolumeClaim: { claimName: volumeName } });
    }
    const containers = podSpec.containers.map((container) => {
      const ours = container.image === 'gatehouse';
      const containerPort = String(container.ports?.[0]?.containerPort ?? '');
      const env = containerEnv(objects, container);
      if (ours) env.PORT = hostPort;
      const resolved = Object.fromEntries(Object.entries(env).map(([key, value]) => [key, local(value)]));
      const command = container.command?.map((part) =>
        part === containerPort ? hostPort : expand(part, resolved),
      );
      const {
        envFrom: _envFrom,
        readinessProbe: _r,
        livenessProbe: _l,
        startupProbe: _s,
        ports: _p,
        resources: _resources,
        ...rest
      } = container;
      return {
        ...rest,
        image: ours ? image : toolsImage,
        ...(command ? { command } : {}),
        env: Object.entries(resolved).map(([key, value]) => ({ name: key, value })),
        // Podman reads the user from the container's context only.
        securityContext: {
          runAsUser: podSpec.securityContext?.runAsUser,
          runAsGroup: podSpec.securityContext?.runAsGroup,
          ...container.securityContext,
        },
      };
    });
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: metadata.labels },
      spec: { ...podSpec, hostNetwork: true, containers, volumes: podVolumes },
    };
  });

  const service = named(objects, 'Service', options.service);
  const behind = pods.filter((pod) => selects(service.spec.selector, pod.labels));
  const haproxyCfg = readFileSync(HAPROXY_CFG, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*server gatehouse-\d/.test(line))
    .concat(
      behind.map((pod) => `    server ${pod.name} 127.0.0.1:${pod.port}`),
      '',
    )
    .join('\n');
  const standIns = [
    standIn('dev-idp', image, ['node', 'apps/dev-idp/dist/main.js'], {
      IDP_PORT: String(options.idpPort),
      APP_ORIGIN: `http://localhost:${options.lbPort}`,
    }),
    standIn(
      'haproxy',
      toolsImage,
      ['haproxy', '-db', '-n', '400', '-f', '/etc/haproxy-gatehouse/haproxy.cfg'],
      { GATEHOUSE_LB_BIND: `127.0.0.1:${options.lbPort}` },
      { path: options.haproxyDir, mountPath: '/etc/haproxy-gatehouse' },
    ),
  ];

  return {
    // YAML 1.1, as Podman reads it: `no` and `on` quoted, so that they stay strings.
    yaml: [...standIns, ...played].map((pod) => stringify(pod, { version: '1.1' })).join('---\n'),
    pods,
    behind,
    haproxyCfg,
    volumes,
  };
}

/** A Pod of the test's own on the host's network: the provider, or the balancer with its folder mounted. */
function standIn(name, image, command, env, folder) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `stand-in-${name}` },
    spec: {
      hostNetwork: true,
      containers: [
        {
          name,
          image,
          command,
          env: Object.entries(env).map(([key, value]) => ({ name: key, value })),
          ...(folder
            ? { volumeMounts: [{ name: 'folder', mountPath: folder.mountPath, readOnly: true }] }
            : {}),
        },
      ],
      ...(folder
        ? { volumes: [{ name: 'folder', hostPath: { path: folder.path, type: 'Directory' } }] }
        : {}),
    },
  };
}
