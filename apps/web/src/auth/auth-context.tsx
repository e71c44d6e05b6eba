import type { SignInTrigger } from '@gatehouse/api-contract';
import {
  createContext,
  use,
  useEffect,
  useMemo,
  useState,
  useSyncExternalStore,
  type ReactNode,
} from 'react';
import { afterFirstPaint, once } from '../shared/after-first-paint';
import { signInUnavailable } from './auth-notices';
import { createAuthSession } from './create-auth-session';
import type { AuthSession, AuthState, AuthUser, CallbackResult, SignOutOutcome } from './auth-state';
import { readSessionHint, sessionMaybeSomewhere } from './session-hint';
import { telemetry } from '../telemetry/telemetry';

export interface Auth {
  state: AuthState;
  signIn: (returnTo?: string, trigger?: SignInTrigger) => Promise<void>;
  signOut: () => Promise<SignOutOutcome>;
  completeSignIn: (url: string) => Promise<CallbackResult>;
  /** One call of Gatehouse's own API with the session's authorization (the token vault adds it). */
  fetchApi: AuthSession['fetchApi'];
  /** Renews the tokens now (after the API refused one with 401); true when a session remains. */
  renew: () => Promise<boolean>;
}

const AuthContext = createContext<Auth | null>(null);

const loadingState: AuthState = { status: 'loading' };
const signedOutState: AuthState = { status: 'signed-out' };
const loadFailedState: AuthState = { status: 'signed-out', notice: signInUnavailable };
const noSubscription = () => () => {};

let defaultSession: Promise<AuthSession> | undefined;
/**
 * The session's code (each mode's) is a chunk of its own, fetched after the first paint (and only once per page), except
 * on the redirect URI: there the token exchange is the page's whole purpose, and it starts at once.
 */
function loadDefaultSession(): Promise<AuthSession> {
  const urgent = window.location.pathname === '/callback';
  defaultSession ??= (
    urgent ? Promise.resolve() : new Promise<void>((resolve) => afterFirstPaint(resolve))
  ).then(() => createAuthSession());
  return defaultSession;
}

/**
 * On the redirect URI, starts loading the session before React's first render rather than from its
 * effect: the code exchange is the page's critical path. Elsewhere it does nothing.
 */
export function loadSessionEarlyOnCallback(): void {
  if (window.location.pathname === '/callback') void loadDefaultSession().catch(() => undefined);
}

/**
 * Runs `task` once the session has loaded (or failed to), or after `timeoutMs` whatever happens: work that
 * can wait (the telemetry SDK's start) then does not stand between a quick click on "Sign in" and the
 * provider.
 */
export function afterSessionLoaded(task: () => void, timeoutMs = 2_000): void {
  const run = once(task);
  setTimeout(run, timeoutMs);
  loadDefaultSession().then(run, run);
}

/** The signed-in user the last page of this tab knew, for the first render (see session-hint.ts). */
function defaultInitialUser(): AuthUser | null {
  return typeof window === 'undefined' ? null : readSessionHint(window.sessionStorage, Date.now());
}

/**
 * Whether a session may exist in this browser though this tab knows of none (session-hint.ts); on the
 * redirect URI, where one is on its way, always.
 */
function defaultSessionElsewhere(): boolean {
  if (typeof window === 'undefined') return true;
  return window.location.pathname === '/callback' || sessionMaybeSomewhere(window.localStorage);
}

export function AuthProvider({
  children,
  loadSession = loadDefaultSession,
  initialUser = defaultInitialUser,
  sessionElsewhere = defaultSessionElsewhere,
}: {
  children: ReactNode;
  loadSession?: () => Promise<AuthSession>;
  /** Who to show as signed in until the session has loaded; null shows `loading` or `signed-out`. */
  initialUser?: () => AuthUser | null;
  /** Without an initial user: whether a session may exist all the same (`loading`), else `signed-out`. */
  sessionElsewhere?: () => boolean;
}) {
  const [session, setSession] = useState<AuthSession | null>(null);
  const [initialState] = useState<AuthState>(() => {
    const user = initialUser();
    if (user) return { status: 'signed-in', user };
    return sessionElsewhere() ? loadingState : signedOutState;
  });
  const [loadFailed, setLoadFailed] = useState(false);

  useEffect(() => {
    let active = true;
    loadSession().then(
      (loaded) => active && setSession(loaded),
      () => active && setLoadFailed(true),
    );
    return () => {
      active = false;
    };
  }, [loadSession]);

  const sessionState = useSyncExternalStore(
    session?.subscribe ?? noSubscription,
    () => session?.getState() ?? initialState,
    // The page's HTML holds the render of an unknown session (index.html): React adopts it as that, then
    // renders what it knows (a signed-in hint, say) right after.
    () => loadingState,
  );
  const state = loadFailed ? loadFailedState : sessionState;

  // The actions keep their identity while the state changes, so effects that depend on them
  // (the callback page's, above all) run once rather than on every state change.
  const actions = useMemo<Omit<Auth, 'state'>>(
    () => ({
      signIn: (returnTo = '/', trigger) => {
        const leaving = loadSession().then((session) => session.signIn(returnTo, trigger));
        // The page leaves: the telemetry SDK's start does not stand between the click and the provider.
        telemetry.holdWhileLeaving(leaving);
        return leaving;
      },
      signOut: async () => (await loadSession()).signOut(),
      completeSignIn: async (url) => (await loadSession()).completeSignIn(url),
      fetchApi: async (request) => (await loadSession()).fetchApi(request),
      renew: async () => (await loadSession()).renew(),
    }),
    [loadSession],
  );
  const auth = useMemo<Auth>(() => ({ state, ...actions }), [state, actions]);

  return <AuthContext value={auth}>{children}</AuthContext>;
}

export function useAuth(): Auth {
  const auth = use(AuthContext);
  if (!auth) throw new Error('useAuth must be used inside <AuthProvider>.');
  return auth;
}
