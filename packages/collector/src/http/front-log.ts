import type { Logger } from '../logger.js';

/** How often a repeated condition (store behind, store full) is logged, with how many requests it hit. */
export const LOG_INTERVAL_MS = 10_000;

export const consoleLogger: Logger = (level, message) => {
  const line = `[collector] ${message}`;
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.info(line);
};

/**
 * A function that calls `say` at most once per `intervalMs`, with how often it was called since and the
 * arguments of the latest call (the reason said is the one that holds now).
 */
export function throttled<A extends unknown[]>(
  intervalMs: number,
  say: (times: number, ...args: A) => void,
): (...args: A) => void {
  let times = 0;
  let last = -Infinity;
  return (...args) => {
    times++;
    if (Date.now() - last < intervalMs) return;
    say(times, ...args);
    times = 0;
    last = Date.now();
  };
}

export const requests = (n: number) => `${n} ${n === 1 ? 'request' : 'requests'}`;
