// The baseline for sign-in: oidc-client-ts's UserManager with no framework, doing the same protocol work
// as Gatehouse (same client, scope and userinfo call) against the same provider.
import { UserManager } from 'oidc-client-ts';
import { clientSettings } from '../client-settings.js';

const manager = new UserManager(clientSettings);
const account = document.getElementById('account');

function showSignedIn(user) {
  const name = document.createElement('span');
  name.dataset.testid = 'display-name';
  name.textContent = user.profile.name ?? user.profile.sub;
  account.replaceChildren(name);
}

function showSignedOut() {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = 'Sign in';
  button.addEventListener('click', () => void manager.signinRedirect());
  account.replaceChildren(button);
}

async function start() {
  if (location.pathname === '/callback') {
    const user = await manager.signinRedirectCallback();
    history.replaceState(null, '', '/');
    showSignedIn(user);
    return;
  }
  const user = await manager.getUser();
  if (user) showSignedIn(user);
  else showSignedOut();
}

void start();
