import {
  createContext,
  use,
  useEffect,
  useMemo,
  useState,
  useSyncExternalStore,
  type ReactNode,
} from 'react';
import { afterFirstPaint } from '../shared/after-first-paint';
import type { AuthSession, AuthState, CallbackResult, SignOutOutcome } from './auth-state';

export interface Auth {
  state: AuthState;
  signIn: (returnTo?: string) => Promise<void>;
  signOut: () => Promise<SignOutOutcome>;
  completeSignIn: (url: string) => Promise<CallbackResult>;
  /** A fresh access token for Gatehouse's own API, or null when signed out. */
  getAccessToken: () => Promise<string | null>;
  /** A renewed access token after the API refused the last one (401); null when it cannot be renewed. */
  renewAccessToken: () => Promise<string | null>;
}

const AuthContext = createContext<Auth | null>(null);

const loadingState: AuthState = { status: 'loading' };
const loadFailedState: AuthState = {
  status: 'signed-out',
  notice: {
    code: 'provider_unreachable',
    message: 'Sign-in could not be loaded. Check your connection and reload the page.',
  },
};
const noSubscription = () => () => {};

let defaultSession: Promise<AuthSession> | undefined;
/** The OIDC code is a chunk of its own, fetched after the first paint (and only once per page). */
function loadDefaultSession(): Promise<AuthSession> {
  defaultSession ??= new Promise<void>((resolve) => afterFirstPaint(resolve))
    .then(() => import('./oidc-session'))
    .then((module) => module.createAuthSession());
  return defaultSession;
}

export function AuthProvider({
  children,
  loadSession = loadDefaultSession,
}: {
  children: ReactNode;
  loadSession?: () => Promise<AuthSession>;
}) {
  const [session, setSession] = useState<AuthSession | null>(null);
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
    () => session?.getState() ?? loadingState,
  );
  const state = loadFailed ? loadFailedState : sessionState;

  // The actions keep their identity while the state changes, so effects that depend on them
  // (the callback page's, above all) run once rather than on every state change.
  const actions = useMemo<Omit<Auth, 'state'>>(
    () => ({
      signIn: async (returnTo = '/') => (await loadSession()).signIn(returnTo),
      signOut: async () => (await loadSession()).signOut(),
      completeSignIn: async (url) => (await loadSession()).completeSignIn(url),
      getAccessToken: async () => (await loadSession()).getAccessToken(),
      renewAccessToken: async () => {
        const session = await loadSession();
        return session.renewAccessToken ? session.renewAccessToken() : session.getAccessToken();
      },
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
