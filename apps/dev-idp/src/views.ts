import { createHash } from 'node:crypto';
import type Koa from 'koa';

import { DEMO_ACCOUNTS } from './accounts.js';

/** Escapes text for HTML element content and double- or single-quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const CSS = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:grid;place-items:center;background:#eef1f5;color:#1d2330;
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:min(24rem,calc(100vw - 2rem));background:#fff;border-radius:12px;padding:2rem;
box-shadow:0 2px 12px rgba(20,30,50,.12)}
h1{font-size:1.4rem;margin:0 0 .25rem}
.badge{display:inline-block;margin:0 0 1.25rem;padding:.1rem .5rem;border-radius:999px;background:#fff4d6;
color:#7a5200;font-size:.8rem;font-weight:600}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{width:100%;padding:.55rem .7rem;border:1px solid #b8c0cc;border-radius:6px;font:inherit}
input:focus{outline:2px solid #2f6fde;outline-offset:1px}
button{width:100%;margin-top:1.25rem;padding:.6rem;border:0;border-radius:6px;background:#2f6fde;color:#fff;
font:inherit;font-weight:600;cursor:pointer}
button:hover{background:#2559b8}
button.secondary{margin-top:.5rem;background:transparent;color:#2f6fde;border:1px solid #b8c0cc}
.error{margin:0 0 .5rem;padding:.5rem .75rem;border-radius:6px;background:#fde8e8;color:#8a1c1c}
.hint{margin-top:1.5rem;padding:.75rem 1rem;border-radius:6px;background:#f4f6f9;font-size:.9rem}
.hint ul{margin:.25rem 0 0;padding-left:1.25rem}
code{font-family:ui-monospace,Menlo,Consolas,monospace}
`;

/**
 * The policy of every answer of the provider (set by `createProvider`), as strict as the app's: our pages
 * carry no script and load nothing from elsewhere, and their forms post only here, or end at the app (a
 * sign-in's redirect to the callback, a sign-out's to the app's page: browsers apply `form-action` to the
 * redirects that follow a form too). `script-src 'self'` runs nothing of ours; it is there so that
 * oidc-provider can add the hash of the one inline script it renders itself (the form that confirms a
 * sign-out without a session, which submits itself). The icon is `data:`, allowed by `img-src`, so no
 * browser asks for /favicon.ico and logs it refused.
 */
export function contentSecurityPolicy(appOrigin: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'sha256-${createHash('sha256').update(CSS).digest('base64')}'`,
    "img-src 'self' data:",
    `form-action 'self' ${new URL(appOrigin).origin}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Gatehouse dev identity provider</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

/** Writes an HTML page to the Koa response, kept out of caches (its CSP is the provider's, on every answer). */
export function sendPage(ctx: Koa.Context, status: number, title: string, body: string): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = page(title, body);
}

const BADGE = '<p class="badge">Development and tests only</p>';

function demoAccountsHint(): string {
  const items = DEMO_ACCOUNTS.map(
    (account) =>
      `<li><code>${escapeHtml(account.username)}</code> / <code>${escapeHtml(account.password)}</code> — ${escapeHtml(account.label)}</li>`,
  ).join('');
  return `<section class="hint" aria-label="Demo accounts"><strong>Demo accounts</strong><ul>${items}</ul></section>`;
}

export interface LoginPageInput {
  uid: string;
  clientName: string;
  username?: string;
  error?: string;
}

export function loginPage({ uid, clientName, username = '', error }: LoginPageInput): string {
  const base = `/interaction/${encodeURIComponent(uid)}`;
  const alert = error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
  return `<h1>Sign in</h1>
${BADGE}
<p>to continue to <strong>${escapeHtml(clientName)}</strong></p>
${alert}
<form method="post" action="${escapeHtml(`${base}/login`)}">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${escapeHtml(username)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<form method="post" action="${escapeHtml(`${base}/abort`)}">
<button type="submit" class="secondary">Cancel</button>
</form>
${demoAccountsHint()}`;
}

/** Shown only when a sign-out cannot be confirmed by the request itself (see logout.ts). */
export function logoutConfirmPage(form: string): string {
  return `<h1>Sign out</h1>
${BADGE}
<p>Sign out of the development identity provider?</p>
${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>`;
}

export function signedOutPage(): string {
  return `<h1>Signed out</h1>
${BADGE}
<p>You have signed out of the development identity provider. You can close this tab.</p>`;
}

export function errorPage(message: string, details: Readonly<Record<string, unknown>> = {}): string {
  const rows = Object.entries(details)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `<li><code>${escapeHtml(key)}</code>: ${escapeHtml(value)}</li>`)
    .join('');
  return `<h1>Something went wrong</h1>
${BADGE}
<p>${escapeHtml(message)}</p>
${rows ? `<ul>${rows}</ul>` : ''}`;
}
