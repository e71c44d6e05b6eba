/** Where a tool was found, or what is missing (with `fix`, a sentence that apt-get would not help). */
export type Found = {
  path?: string;
  source?: string;
  driver?: string;
  xvfb?: string;
  missing?: string;
  fix?: string;
};

export type ToolName =
  'chromium' | 'firefox' | 'webkit' | 'redis' | 'haproxy' | 'podman' | 'django-oauth-toolkit';

export const TOOLS: Record<
  ToolName,
  { what: string; required?: boolean; find(): Found; debian: string[]; otherwise: string }
>;
export function isDebian(): boolean;
export function isRoot(): boolean;
export function inCi(): boolean;
export function findChromium(): Found;
export function findFirefox(): Found;
export function findWebKit(): Found;
export function findPodman(): Found;
export function findDjangoOAuthToolkit(): Found;
/** Null when the tool is here, else the one line that says what is missing and how to get it. */
export function lacking(name: ToolName): string | null;
export function installable(name: ToolName): boolean;
export function installWithApt(names: ToolName[]): void;
