import { timingSafeEqual } from 'node:crypto';
import type { Account, FindAccount } from 'oidc-provider';

/** A sign-in the local provider knows. The passwords are public on purpose: this provider is for development. */
export interface DemoAccount {
  readonly username: string;
  readonly password: string;
  /** Shown next to the account in the login page hint. */
  readonly label: string;
  readonly sub: string;
  readonly name: string;
  readonly email: string;
  readonly email_verified: boolean;
  readonly roles: readonly string[];
}

export const DEMO_ACCOUNTS: readonly DemoAccount[] = [
  {
    username: 'alice',
    password: 'alice',
    label: 'member',
    sub: 'alice',
    name: 'Alice Liddell',
    email: 'alice@example.com',
    email_verified: true,
    roles: ['member'],
  },
  {
    username: 'admin',
    password: 'admin',
    label: 'admin',
    sub: 'admin',
    name: 'Ada Admin',
    email: 'admin@example.com',
    email_verified: true,
    roles: ['admin', 'member'],
  },
];

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Returns the account for a username/password pair, or undefined when either is wrong. */
export function authenticate(username: string, password: string): DemoAccount | undefined {
  const account = DEMO_ACCOUNTS.find((candidate) => candidate.username === username.trim());
  return account && sameText(account.password, password) ? account : undefined;
}

export function accountBySub(sub: string): DemoAccount | undefined {
  return DEMO_ACCOUNTS.find((account) => account.sub === sub);
}

/**
 * The account's roles under `claim`: `roles` as a top-level array, or nested along a dotted path
 * (`realm_access.roles` -> `{ realm_access: { roles } }`), where Keycloak puts them.
 */
export function rolesClaims(account: DemoAccount, claim: string): Record<string, unknown> {
  const place = (path: string[]): unknown => {
    const [first, ...rest] = path;
    return first === undefined ? [...account.roles] : { [first]: place(rest) };
  };
  return place(claim.split('.')) as Record<string, unknown>;
}

/**
 * oidc-provider's findAccount: it filters these claims by the granted scopes (see `claims` in the
 * configuration). Roles are under `rolesClaim` (default `roles`).
 */
export function accountFinder(rolesClaim = 'roles'): FindAccount {
  return (_ctx, sub): Account | undefined => {
    const account = accountBySub(sub);
    if (!account) return undefined;
    return {
      accountId: account.sub,
      claims: () => ({
        sub: account.sub,
        name: account.name,
        email: account.email,
        email_verified: account.email_verified,
        ...rolesClaims(account, rolesClaim),
      }),
    };
  };
}
