import path from 'node:path';
import { environment, readEnvironment } from '@gatehouse/config';

export interface StoreSettings {
  /** Absolute folder of the telemetry store. */
  dataDir: string;
}

/** The one key the collector's own commands read, as every Gatehouse process reads it. */
const storeEnvironment = environment.pick({ GATEHOUSE_DATA_DIR: true });

/** Reads GATEHOUSE_DATA_DIR (default `./data`, relative to the working directory). */
export function readStoreSettings(env: NodeJS.ProcessEnv = process.env): StoreSettings {
  const { GATEHOUSE_DATA_DIR } = readEnvironment(storeEnvironment, env, 'The telemetry command');
  return { dataDir: path.resolve(GATEHOUSE_DATA_DIR) };
}
