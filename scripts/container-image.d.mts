import type { ExecFileSyncOptions } from 'node:child_process';

export const BASE_RECIPE: { suite: string; mirror: string; node: string; npm: string };
export const LOCAL_BASE: string;
export const IMAGE: string;
export const E2E_IMAGE: string;
export const PODMAN: string[];
export const ULIMITS: string[];
export function podman(args: string[], options?: ExecFileSyncOptions): string;
export function ensurePodman(): void;
export function ensureLocalBase(log?: (line: string) => void): string;
export function buildImage(options?: { localBase?: boolean; tag?: string; log?: (line: string) => void }): {
  tag: string;
  seconds: number;
  bytes: number;
};
export function ensureToolsImage(log?: (line: string) => void): string;
export function writeContainersConf(dir: string, options?: { infraImage?: string }): string;
export function ensurePauseImage(log?: (line: string) => void): string;
export function startComposeEngine(): Promise<{ env: NodeJS.ProcessEnv; stop(): Promise<void> }>;
export function runHardened(options: {
  name: string;
  volume: string;
  image: string;
  env?: Record<string, string>;
  argv?: string[];
}): string;
