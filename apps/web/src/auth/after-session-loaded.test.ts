import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AuthSession } from './auth-state';

// The session's loading, held open by the test: the default loader's only input.
let finishLoading: (session: AuthSession) => void = () => undefined;
vi.mock('./create-auth-session', () => ({
  createAuthSession: () => new Promise<AuthSession>((resolve) => (finishLoading = resolve)),
}));

afterEach(() => {
  vi.useRealTimers();
  vi.resetModules();
});

describe('afterSessionLoaded (what the telemetry SDK waits for besides the first paint)', () => {
  it('runs the task once the session has loaded, not before, and once only', async () => {
    vi.useFakeTimers();
    const { afterSessionLoaded } = await import('./auth-context');
    const task = vi.fn();
    afterSessionLoaded(task, 10_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(task).not.toHaveBeenCalled();
    finishLoading({} as AuthSession);
    await vi.advanceTimersByTimeAsync(0);
    expect(task).toHaveBeenCalledOnce();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(task).toHaveBeenCalledOnce();
  });

  it('runs it after the timeout when the session never loads', async () => {
    vi.useFakeTimers();
    const { afterSessionLoaded } = await import('./auth-context');
    const task = vi.fn();
    afterSessionLoaded(task, 2_000);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(task).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(task).toHaveBeenCalledOnce();
  });
});
