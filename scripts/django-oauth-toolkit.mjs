#!/usr/bin/env node
// An independent OpenID provider for the end-to-end tests: Django OAuth Toolkit, from Debian
// (python3-django-oauth-toolkit). Installs it with apt-get when it is missing (as root), generates a
// tiny Django project into a temporary folder (OIDC with an RSA key, a public PKCE client for the app,
// a demo user) and runs it on loopback until SIGINT/SIGTERM.
//
//   node scripts/django-oauth-toolkit.mjs --port 4170 --app-origin http://localhost:4171 [--access-token-ttl 20]
//   node scripts/django-oauth-toolkit.mjs --install-only
//
// The issuer is http://localhost:<port>/o; the client id is "gatehouse"; the demo account alice / alice.
// Development and tests only: DEBUG-free but with Django's development server and a public password.
import { execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

// Debian's interpreter, whatever python3 comes first on PATH (pyenv and the like lack Debian's packages).
const PYTHON = '/usr/bin/python3';
const PACKAGE = 'python3-django-oauth-toolkit';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    'app-origin': { type: 'string' },
    'access-token-ttl': { type: 'string', default: '300' },
    // A Gatehouse in BFF mode (OIDC_MODE=bff) at this origin: the confidential client gatehouse-bff.
    'bff-origin': { type: 'string' },
    'install-only': { type: 'boolean', default: false },
  },
});

function installed() {
  try {
    execFileSync(PYTHON, ['-c', 'import oauth2_provider, django'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function ensureInstalled() {
  if (installed()) return;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    console.error(
      `Django OAuth Toolkit is needed for the independent-provider tests: \`sudo apt-get install ${PACKAGE}\`.`,
    );
    process.exit(1);
  }
  console.info(`Django OAuth Toolkit is missing: installing Debian package "${PACKAGE}" with apt-get…`);
  const run = (aptArgs) =>
    execFileSync('apt-get', aptArgs, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  // The package lists may be fresh already (ensure-test-tools.mjs runs first in `npm test`).
  const known = (() => {
    try {
      execFileSync('apt-cache', ['show', PACKAGE], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  if (!known) run(['update', '-qq']);
  run(['install', '-y', '-qq', '--no-install-recommends', PACKAGE]);
  if (!installed()) {
    console.error(`apt-get finished but ${PYTHON} still cannot import oauth2_provider.`);
    process.exit(1);
  }
}

ensureInstalled();
if (args['install-only']) process.exit(0);

const port = Number(args.port);
const appOrigin = args['app-origin'] && new URL(args['app-origin']).origin;
const accessTokenTtl = Number(args['access-token-ttl']);
const bffOrigin = args['bff-origin'] && new URL(args['bff-origin']).origin;
/** The BFF client's secret: a development provider's, printed below, as its demo password is. */
const BFF_SECRET = 'gatehouse-bff-development-secret';
if (!Number.isInteger(port) || port < 1 || port > 65_535 || !appOrigin || !(accessTokenTtl >= 1)) {
  console.error(
    'usage: django-oauth-toolkit.mjs --port <port> --app-origin <http://host:port> [--access-token-ttl <s>] [--bff-origin <http://host:port>]',
  );
  process.exit(2);
}
const issuer = `http://localhost:${port}/o`;

// --- the generated project: settings, urls, a CORS middleware, a claims validator, a login page ---
const root = mkdtempSync(join(tmpdir(), 'gatehouse-dot-'));
const pkg = join(root, 'gatehouse_dot');
mkdirSync(join(pkg, 'templates', 'registration'), { recursive: true });
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const py = (value) => JSON.stringify(value); // a JSON string is a valid Python string literal here
const files = {
  'manage.py': `import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gatehouse_dot.settings")
from django.core.management import execute_from_command_line
execute_from_command_line(sys.argv)
`,
  'gatehouse_dot/__init__.py': '',
  'gatehouse_dot/settings.py': `import os
BASE_DIR = os.path.dirname(os.path.abspath(__file__))
SECRET_KEY = ${py(randomBytes(32).toString('hex'))}
DEBUG = False
ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
# A request that fails prints its traceback (without DEBUG, Django would only mail it to the admins).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR"}},
}
APP_ORIGIN = ${py(appOrigin)}
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]
MIDDLEWARE = [
    "gatehouse_dot.serial.OneRequestAtATime",
    "gatehouse_dot.cors.AppOriginCors",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "gatehouse_dot.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [os.path.join(BASE_DIR, "templates")],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(BASE_DIR, "db.sqlite3")}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# Cookies ignore ports: names of its own, so the app and the other providers on localhost keep theirs.
SESSION_COOKIE_NAME = "dot_session"
CSRF_COOKIE_NAME = "dot_csrftoken"
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": ${py(privateKey.export({ type: 'pkcs8', format: 'pem' }))},
    "OIDC_ISS_ENDPOINT": ${py(issuer)},
    "PKCE_REQUIRED": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": ${accessTokenTtl},
    "ID_TOKEN_EXPIRE_SECONDS": ${accessTokenTtl},
    "OAUTH2_VALIDATOR_CLASS": "gatehouse_dot.claims.Claims",
    "SCOPES": {"openid": "OpenID Connect", "profile": "Your name", "email": "Your email address"},
}
`,
  'gatehouse_dot/urls.py': `from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from oauth2_provider.views import ConnectDiscoveryInfoView

urlpatterns = [
    # Relying parties append /.well-known/openid-configuration to the issuer, without a trailing slash.
    re_path(r"^o/\\.well-known/openid-configuration$", ConnectDiscoveryInfoView.as_view()),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
]
`,
  // The token and userinfo endpoints answer the app's origin (DOT sets CORS only on discovery and JWKS).
  // SQLite takes one writer at a time, and Django's transactions begin deferred: two token requests at
  // once (two sign-ins side by side) failed with "database is locked". Connections still get a thread
  // each; their requests take turns.
  'gatehouse_dot/serial.py': `import threading

_turn = threading.Lock()


class OneRequestAtATime:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with _turn:
            return self.get_response(request)
`,
  'gatehouse_dot/cors.py': `from django.conf import settings
from django.http import HttpResponse


class AppOriginCors:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        origin = request.headers.get("Origin")
        allowed = origin == settings.APP_ORIGIN and request.path.startswith("/o/")
        if allowed and request.method == "OPTIONS":
            response = HttpResponse(status=204)
            response["Access-Control-Allow-Methods"] = "GET, POST"
            response["Access-Control-Allow-Headers"] = request.headers.get("Access-Control-Request-Headers", "")
            response["Access-Control-Max-Age"] = "600"
        else:
            response = self.get_response(request)
        if allowed:
            response["Access-Control-Allow-Origin"] = origin
            response["Vary"] = "Origin"
        return response
`,
  // DOT 1.7 puts only sub in its ID tokens and userinfo; a project adds the standard claims it has.
  'gatehouse_dot/claims.py': `from oauth2_provider.oauth2_validators import OAuth2Validator


class Claims(OAuth2Validator):
    def get_additional_claims(self, request):
        user = request.user
        return {"name": user.get_full_name(), "email": user.email, "preferred_username": user.username}

    # prompt=none (a reload whose token vault has stopped): DOT 1.7 leaves these to the deployment, and
    # oauthlib's defaults raise NotImplementedError, a 500 page. The authorization view has already
    # required a signed-in user, and skip_authorization applications need no consent.
    def validate_silent_login(self, request):
        return True

    def validate_silent_authorization(self, request):
        return True
`,
  'gatehouse_dot/templates/registration/login.html': `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in – Django OAuth Toolkit</title></head>
<body><main><h1>Django OAuth Toolkit</h1>
<form method="post">{% csrf_token %}{{ form.as_p }}
<input type="hidden" name="next" value="{{ next }}"><button type="submit">Sign in</button></form>
<p>Demo account: alice / alice</p></main></body></html>
`,
  'bootstrap.py': `import os
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gatehouse_dot.settings")
django.setup()
from django.core.management import call_command
from django.contrib.auth import get_user_model
from oauth2_provider.models import get_application_model

call_command("migrate", verbosity=0)
user = get_user_model().objects.create_user(
    "alice", "alice@example.com", "alice", first_name="Alice", last_name="Liddell"
)
Application = get_application_model()
Application.objects.create(
    client_id="gatehouse",
    name="Gatehouse",
    user=user,
    client_type=Application.CLIENT_PUBLIC,
    authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
    redirect_uris=${py(`${appOrigin}/callback`)},
    algorithm=Application.RS256_ALGORITHM,
    skip_authorization=True,
)
${
  bffOrigin
    ? `Application.objects.create(
    client_id="gatehouse-bff",
    client_secret=${py(BFF_SECRET)},
    name="Gatehouse (BFF)",
    user=user,
    client_type=Application.CLIENT_CONFIDENTIAL,
    authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
    redirect_uris=${py(`${bffOrigin}/bff/callback`)},
    algorithm=Application.RS256_ALGORITHM,
    skip_authorization=True,
)
`
    : ''
}`,
};
for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);

execFileSync(PYTHON, ['bootstrap.py'], { cwd: root, stdio: 'inherit' });
console.info(
  `Django OAuth Toolkit (development and tests only): issuer ${issuer}, client gatehouse, alice / alice` +
    (bffOrigin ? `; confidential client gatehouse-bff, secret ${BFF_SECRET}` : ''),
);

const server = spawn(PYTHON, ['manage.py', 'runserver', `127.0.0.1:${port}`, '--noreload'], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
});
const stop = (signal) => server.kill(signal);
process.once('SIGINT', () => stop('SIGINT'));
process.once('SIGTERM', () => stop('SIGTERM'));
server.once('exit', (code, signal) => {
  rmSync(root, { recursive: true, force: true });
  process.exit(signal ? 0 : (code ?? 1));
});
