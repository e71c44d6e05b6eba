import { createLogger, type Logger } from '../log.js';

export interface LogLine {
  level: string;
  time: string;
  msg: string;
  [field: string]: unknown;
}

/** A real logger (the server's JSON lines, every level) whose lines the test reads back, parsed. */
export function captureLogs(): { logger: Logger; lines: LogLine[]; text: () => string } {
  const raw: string[] = [];
  const logger = createLogger('trace', { write: (line: string) => void raw.push(line) });
  return {
    logger,
    get lines() {
      return raw.map((line) => JSON.parse(line) as LogLine);
    },
    text: () => raw.join(''),
  };
}
