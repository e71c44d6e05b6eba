import { readFileSync } from 'node:fs';
import { environment } from '@gatehouse/config';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../apps/server/src/config';
import {
  byKind,
  containerEnv,
  named,
  playOnOneHost,
  readManifests,
  selects,
  workloads,
  type Container,
  type KubeObject,
  type PodSpec,
  type Probe,
} from './kubernetes-manifests.mjs';

/**
 * deploy/kubernetes read as a cluster would apply it, checked against what the server reads and serves:
 * the settings, the probes, the drain's timings, the hardening, and which pods the Service, the
 * disruption budget and the store holder's address reach. e2e/kubernetes.spec.ts plays the same files.
 */
const manifests = readManifests();
const replicas = named(manifests, 'Deployment', 'gatehouse');
const storeHolder = named(manifests, 'StatefulSet', 'gatehouse-store');
const gatehousePods = [replicas, storeHolder];
const podSpec = (workload: KubeObject): PodSpec => workload.spec!.template!.spec;
const server = (workload: KubeObject): Container =>
  podSpec(workload).containers.find((c) => c.image === 'gatehouse')!;
const labels = (workload: KubeObject) => workload.spec!.template!.metadata.labels;
const envOf = (workload: KubeObject) => containerEnv(manifests, server(workload));
/** What the Containerfile's ENV gives every container of the image. */
const IMAGE_ENV = { NODE_ENV: 'production', PORT: '3000', GATEHOUSE_DATA_DIR: '/data' };
/** Read by Node.js itself, not by Gatehouse's schema. */
const NODE_VARIABLES = new Set(['NODE_EXTRA_CA_CERTS']);
/** What the server serves for each probe: liveness must never ask readiness (a draining pod is alive). */
const PROBE_PATHS = [
  ['startupProbe', '/healthz'],
  ['livenessProbe', '/healthz'],
  ['readinessProbe', '/readyz'],
] as const;
const seconds = (env: Record<string, string>, key: string) => Number(env[key]);
const filled = (env: Record<string, string>) =>
  Object.fromEntries(
    Object.entries({ ...IMAGE_ENV, ...env }).map(([key, value]) => [
      key,
      value.replaceAll('set-me', 'x'.repeat(40)),
    ]),
  );

describe('the Kubernetes manifests', () => {
  it('set only variables the configuration knows, and each pod starts in production once the placeholders are filled', () => {
    const known = new Set(Object.keys(environment.shape));
    for (const workload of gatehousePods) {
      const container = server(workload);
      const env = container.env ?? [];
      const composed = env
        .filter(({ name }) => env.some((e) => e.value?.includes(`$(${name})`)))
        .map(({ name }) => name);
      const unknown = Object.keys(envOf(workload)).filter(
        (name) => !known.has(name) && !NODE_VARIABLES.has(name) && !composed.includes(name),
      );
      expect(unknown, workload.metadata.name).toEqual([]);
      expect(() => loadConfig(filled(envOf(workload)))).not.toThrow();
      // The placeholders are refused: nobody runs with them by mistake.
      expect(() => loadConfig({ ...IMAGE_ENV, ...envOf(workload) })).toThrow(/TELEMETRY_USER_ID_SECRET/);
    }
  });

  it('probe the paths the server serves, on a port the container names, with the scheme it speaks', () => {
    const probes = readFileSync(new URL('../apps/server/src/probes.ts', import.meta.url), 'utf8');
    for (const workload of gatehousePods) {
      const container = server(workload);
      const portNames = (container.ports ?? []).map((p) => p.name);
      const tls = envOf(workload).TLS_CERT_FILE !== undefined;
      for (const [kind, path] of PROBE_PATHS) {
        const probe: Probe | undefined = container[kind];
        expect(probe?.httpGet?.path, `${workload.metadata.name} ${kind}`).toBe(path);
        expect(probes).toContain(`app.get('${path}'`);
        expect(portNames).toContain(probe?.httpGet?.port);
        expect(probe?.httpGet?.scheme ?? 'HTTP').toBe(tls ? 'HTTPS' : 'HTTP');
      }
    }
  });

  it('give the drain its time: endpoints drop the pod before it stops listening, and the grace period outlasts it', () => {
    for (const workload of gatehousePods) {
      const env = envOf(workload);
      const { periodSeconds = 10, failureThreshold = 3 } = server(workload).readinessProbe ?? {};
      const delay = seconds(env, 'SHUTDOWN_DELAY_SECONDS');
      expect(delay).toBeGreaterThan(periodSeconds * failureThreshold);
      // A few seconds for the collector's last flush and the exit.
      expect(podSpec(workload).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
        delay + seconds(env, 'SHUTDOWN_TIMEOUT_SECONDS') + 5,
      );
    }
  });

  it('run every pod without root, privileges, capabilities or a writable root file system', () => {
    for (const workload of workloads(manifests)) {
      const pod = podSpec(workload);
      expect(pod.securityContext, workload.metadata.name).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of pod.containers) {
        expect(container.securityContext, container.name).toEqual({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
      }
    }
    // The image's own user: numeric, so that runAsNonRoot is checked without a passwd lookup.
    for (const workload of gatehousePods) {
      expect(podSpec(workload).securityContext).toMatchObject({ runAsUser: 65532, runAsGroup: 65532 });
    }
  });

  it('reach the right pods: the Service and the budget the replicas, the store address the store holder alone', () => {
    for (const workload of workloads(manifests)) {
      expect(selects(workload.spec?.selector, labels(workload)), workload.metadata.name).toBe(true);
    }
    const pdb = named(manifests, 'PodDisruptionBudget', 'gatehouse').spec!;
    const service = named(manifests, 'Service', 'gatehouse').spec!;
    for (const selector of [pdb.selector, service.selector]) {
      expect(selects(selector, labels(replicas))).toBe(true);
      // The store holder serves TLS to the replicas, not the public.
      expect(selects(selector, labels(storeHolder))).toBe(false);
    }
    expect(pdb.maxUnavailable ?? replicas.spec!.replicas! - pdb.minAvailable!).toBe(1);

    const collectorUrl = new URL(envOf(replicas).COLLECTOR_URL!);
    const storeService = named(manifests, 'Service', collectorUrl.hostname).spec!;
    expect(selects(storeService.selector, labels(storeHolder))).toBe(true);
    expect(selects(storeService.selector, labels(replicas))).toBe(false);
    expect(storeService.ports?.map((p) => p.port)).toContain(Number(collectorUrl.port));
    expect(envOf(storeHolder).COLLECTOR_URL).toBeUndefined();

    for (const workload of gatehousePods) {
      const redis = named(manifests, 'Service', new URL(envOf(workload).REDIS_URL!).hostname).spec!;
      const redisPods = byKind(manifests, 'Deployment').filter((d) => selects(redis.selector, labels(d)));
      expect(redisPods.map((d) => d.metadata.name)).toEqual(['gatehouse-redis']);
    }
  });

  it('keep the store on one claimed disk of the store holder, mounted where the image writes', () => {
    expect(storeHolder.spec!.replicas).toBe(1);
    const [claim] = storeHolder.spec!.volumeClaimTemplates ?? [];
    expect(claim?.spec.accessModes).toEqual(['ReadWriteOnce']);
    const mount = server(storeHolder).volumeMounts?.find((m) => m.name === claim?.metadata.name);
    expect(mount?.mountPath).toBe(IMAGE_ENV.GATEHOUSE_DATA_DIR);
  });

  it('play on one host as Pods on its network, each address a loopback one', () => {
    const { yaml, pods, behind, haproxyCfg, volumes } = playOnOneHost(manifests, {
      image: 'localhost/gatehouse:test',
      toolsImage: 'localhost/tools:test',
      port: (i) => 5000 + i,
      volumePrefix: 'test',
      service: 'gatehouse',
      idpPort: 4999,
      lbPort: 4998,
      haproxyDir: '/tmp/haproxy',
      secretDirs: { 'gatehouse-internal-tls': '/tmp/tls' },
    });
    expect(pods.map((p) => p.name)).toEqual([
      'gatehouse-redis-0',
      'gatehouse-store-0',
      'gatehouse-0',
      'gatehouse-1',
    ]);
    expect(behind.map((p) => p.name)).toEqual(['gatehouse-0', 'gatehouse-1']);
    expect(haproxyCfg).toContain('server gatehouse-1 127.0.0.1:5003');
    expect(haproxyCfg).not.toMatch(/server .*GATEHOUSE_REPLICA_/);
    expect(volumes).toEqual(['test-data-gatehouse-store-0']);
    expect(yaml).not.toMatch(/kind: (Service|StatefulSet|Secret|ConfigMap|Deployment)/);
    expect(yaml).toContain('value: https://127.0.0.1:5001');
    expect(yaml).toContain('@127.0.0.1:5000');
    expect(yaml).not.toContain('$(REDIS_PASSWORD)');
  });
});
