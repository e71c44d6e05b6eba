/**
 * Liveness and readiness as load balancers and orchestrators probe them: `/healthz` says the process
 * answers, `/readyz` whether this replica can serve (its own resources in order) and is not shutting
 * down. Both are unauthenticated, so the answer names each check and its state, never an address or an
 * error message (those go to the log, once per change).
 *
 * A dependency that every replica shares (Redis, the identity provider, the store holder) is checked
 * and shown, but never fails readiness: it would fail on every replica at once, and the balancer would
 * then take them all out and answer 503 to everything, including what could still be served (the app,
 * sign-in, bearer calls). Its failure makes the report `degraded` (200), as Kubernetes' probe guidance
 * and Envoy's health checks ask (docs/decisions/0097-shared-dependencies-never-fail-readiness.md).
 */

export type CheckState = 'ok' | 'failing';

/** Resolves (or returns) true when the dependency can be used now; false or a throw is failing. */
export type ReadinessCheck = () => boolean | Promise<boolean>;

export interface ReadinessReport {
  /**
   * `ok`: every check passes; `degraded`: only checks of shared dependencies fail (still ready);
   * `failing`: one of this replica's own checks fails; `draining`: shutting down.
   */
  status: 'ok' | 'degraded' | 'failing' | 'draining';
  checks: Record<string, CheckState>;
}

/** Whether a report means "send traffic here": `/readyz` answers 200 for these, 503 otherwise. */
export const isReady = (report: ReadinessReport): boolean =>
  report.status === 'ok' || report.status === 'degraded';

export interface CheckOptions {
  /**
   * A dependency every replica shares (Redis, the provider, the store holder): its failure is shown
   * and logged, and makes the report `degraded`, never `failing`.
   */
  shared?: boolean;
}

export interface ReadinessOptions {
  /** How long a report is reused: probes from every balancer must not each reach Redis or the provider. */
  cacheMs?: number;
  /** A check that has not answered by then is failing (a hung dependency must not hang the probe). */
  timeoutMs?: number;
  /** Told when a check starts or stops failing, with the reason (for the log only). */
  onChange?: (name: string, state: CheckState, reason: string | undefined) => void;
  now?: () => number;
}

export class Readiness {
  readonly #checks = new Map<string, { check: ReadinessCheck; shared: boolean }>();
  readonly #states = new Map<string, CheckState>();
  readonly #cacheMs: number;
  readonly #timeoutMs: number;
  readonly #onChange: ReadinessOptions['onChange'];
  readonly #now: () => number;
  #draining = false;
  #last: { at: number; report: ReadinessReport } | undefined;
  #pending: Promise<ReadinessReport> | undefined;

  constructor(options: ReadinessOptions = {}) {
    this.#cacheMs = options.cacheMs ?? 1_000;
    this.#timeoutMs = options.timeoutMs ?? 2_000;
    this.#onChange = options.onChange;
    this.#now = options.now ?? Date.now;
  }

  /** Adds a dependency; its name is what `/readyz` shows (a word, not an address). */
  add(name: string, check: ReadinessCheck, options: CheckOptions = {}): this {
    this.#checks.set(name, { check, shared: options.shared ?? false });
    this.#last = undefined;
    return this;
  }

  /** From now on the process is going away: readiness fails at once, whatever the checks say. */
  drain(): void {
    this.#draining = true;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** The checks' states, at most `cacheMs` old; concurrent callers share one round of checks. */
  async report(): Promise<ReadinessReport> {
    if (this.#draining) return { status: 'draining', checks: Object.fromEntries(this.#states) };
    const last = this.#last;
    if (last && this.#now() - last.at < this.#cacheMs) return last.report;
    this.#pending ??= this.#run().finally(() => (this.#pending = undefined));
    const report = await this.#pending;
    return this.#draining ? { ...report, status: 'draining' } : report;
  }

  async #run(): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.#checks].map(
        async ([name, { check, shared }]) => [name, await this.#probe(name, check), shared] as const,
      ),
    );
    const failing = entries.filter(([, state]) => state === 'failing');
    const report: ReadinessReport = {
      status: failing.length === 0 ? 'ok' : failing.every(([, , shared]) => shared) ? 'degraded' : 'failing',
      checks: Object.fromEntries(entries.map(([name, state]) => [name, state])),
    };
    this.#last = { at: this.#now(), report };
    return report;
  }

  async #probe(name: string, check: ReadinessCheck): Promise<CheckState> {
    let timer: NodeJS.Timeout | undefined;
    let state: CheckState;
    let reason: string | undefined;
    try {
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${this.#timeoutMs} ms`)),
          this.#timeoutMs,
        );
      });
      const ok = await Promise.race([Promise.resolve().then(check), timedOut]);
      state = ok ? 'ok' : 'failing';
    } catch (error) {
      state = 'failing';
      reason = error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
    }
    if (this.#states.get(name) !== state) {
      // The first report of a healthy dependency is not news; a failure, and the recovery after it, are.
      if (this.#states.has(name) || state === 'failing') this.#onChange?.(name, state, reason);
      this.#states.set(name, state);
    }
    return state;
  }
}
