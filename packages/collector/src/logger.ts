/** How the collector says what an operator needs to know: the host process decides where it goes. */
export type LogLevel = 'info' | 'warn' | 'error';
export type Logger = (level: LogLevel, message: string) => void;
