export interface ClusterReplica {
  name: string;
  port: number;
  origin: string;
  role: 'store holder' | 'forwarding';
}

export interface Cluster {
  base: number;
  /** The load balancer's origin: what browsers use. */
  origin: string;
  idp: string;
  lbPort: number;
  idpPort: number;
  redisPort: number;
  replicaPorts: number[];
  dir: string;
  collectorToken: string;
  userIdSecret: string;
  /** The replicas' client secret at the provider, in BFF mode. */
  clientSecret: string;
  replicas: ClusterReplica[];
  pids: Record<string, number | undefined>;
  startReplica(index: number): Promise<void>;
  stopReplica(index: number, signal?: NodeJS.Signals): Promise<number | null>;
  stop(): Promise<void>;
}

export function ensurePackages(): void;
export function stopLeftovers(base?: number, log?: (line: string) => void): Promise<boolean>;
export function clusterLayout(
  base?: number,
): Omit<
  Cluster,
  | 'collectorToken'
  | 'userIdSecret'
  | 'clientSecret'
  | 'replicas'
  | 'pids'
  | 'startReplica'
  | 'stopReplica'
  | 'stop'
>;
export function startCluster(options?: {
  base?: number;
  env?: Record<string, string>;
  detached?: boolean;
  log?: (line: string) => void;
  /** Where browsers reach the cluster when it is not HAProxy itself (a proxy in front of it). */
  publicOrigin?: string;
  /** BFF mode (OIDC_MODE=bff): the replicas are the provider's confidential client, sessions in Redis. */
  bff?: boolean;
}): Promise<Cluster>;
