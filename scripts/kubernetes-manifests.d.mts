/** The parts of Kubernetes objects that the tests read and playOnOneHost rewrites; the rest passes through. */
export interface Probe {
  httpGet?: { path: string; port: string | number; scheme?: 'HTTP' | 'HTTPS' };
  tcpSocket?: { port: string | number };
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}
export interface KeyRef {
  name: string;
  key: string;
}
export interface Container {
  name: string;
  image: string;
  command?: string[];
  env?: { name: string; value?: string; valueFrom?: { configMapKeyRef?: KeyRef; secretKeyRef?: KeyRef } }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface PodSpec {
  containers: Container[];
  securityContext?: Record<string, unknown>;
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
  volumes?: Record<string, unknown>[];
}
export type Labels = Record<string, string>;
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Labels };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    replicas?: number;
    /** A Service's labels, or a workload's or budget's `matchLabels`. */
    selector?: Selector;
    template?: { metadata: { labels: Labels }; spec: PodSpec };
    volumeClaimTemplates?: { metadata: { name: string }; spec: { accessModes: string[] } }[];
    ports?: { name?: string; port: number }[];
    maxUnavailable?: number;
    minAvailable?: number;
  };
}

export interface PlayedPod {
  name: string;
  port: number;
  labels: Labels;
}

export const MANIFESTS: string;
export function readManifests(dir?: string): KubeObject[];
export function byKind(manifests: KubeObject[], kind: string): KubeObject[];
export function named(manifests: KubeObject[], kind: string, name: string): KubeObject;
export type Selector = Labels | { matchLabels: Labels };
export function selects(selector: Selector | undefined, labels?: Labels): boolean;
export function workloads(manifests: KubeObject[]): KubeObject[];
export function containerEnv(manifests: KubeObject[], container: Container): Record<string, string>;
export function playOnOneHost(
  manifests: KubeObject[],
  options: {
    image: string;
    toolsImage: string;
    port: (index: number) => number;
    config?: Record<string, string>;
    secrets?: Record<string, string>;
    secretDirs?: Record<string, string>;
    volumePrefix: string;
    service: string;
    idpPort: number;
    lbPort: number;
    haproxyDir: string;
  },
): { yaml: string; pods: PlayedPod[]; behind: PlayedPod[]; haproxyCfg: string; volumes: string[] };
