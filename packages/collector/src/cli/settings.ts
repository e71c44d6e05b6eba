import path from 'node:path';
import { z } from 'zod';

/** The environment the collector's own commands read (the server maps its own settings itself). */
const environment = z.object({
  GATEHOUSE_DATA_DIR: z.string().trim().min(1).default('./data'),
});

export interface StoreSettings {
  /** Absolute folder of the telemetry store. */
  dataDir: string;
}

/** Reads GATEHOUSE_DATA_DIR (default `./data`, relative to the working directory). */
export function readStoreSettings(env: NodeJS.ProcessEnv = process.env): StoreSettings {
  const parsed = environment.safeParse(env);
  if (!parsed.success) {
    throw new Error(`Invalid settings: ${z.prettifyError(parsed.error)}`);
  }
  return { dataDir: path.resolve(parsed.data.GATEHOUSE_DATA_DIR) };
}
