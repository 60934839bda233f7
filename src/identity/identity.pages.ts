import type { SignUpMode } from '../config.ts';

/**
 * The few server-rendered pages of the built-in identity provider: sign-in, sign-up, e-mail verification, the
 * device-code pages and errors. Plain HTML with inline styles, no scripts, nothing fetched from elsewhere.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * The console's look (console/src/styles.css): the same colours, type, radius and focus ring, so signing in from the
 * console does not feel like leaving it. Keep the two in step.
 */
const STYLE =
  "body{font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#1b1f24;background:#f4f5f7;margin:0}" +
  'main{max-width:24rem;margin:3rem auto;background:#fff;padding:1.25rem 1.5rem;border-radius:6px;box-shadow:0 1px 3px rgba(0,0,0,.12)}' +
  '@media (max-width:40rem){main{margin:3rem 1rem}}' +
  '.brand{display:flex;align-items:center;gap:.5rem;margin:0;font-weight:700;font-size:1.15rem}.brand svg{width:1.75rem;height:1.75rem;color:#2458d6}' +
  'h1{font-size:1.6rem;font-weight:600;line-height:1.25;margin:1rem 0 .5rem}label{display:block;margin:.8rem 0 .25rem;font-weight:500}' +
  'input{width:100%;box-sizing:border-box;padding:.5rem .6rem;font:inherit;border:1px solid #8a919c;border-radius:6px;color:#1b1f24}' +
  'button{margin-top:1rem;width:100%;min-height:2.5rem;padding:.5rem 1rem;font:inherit;font-weight:500;background:#2458d6;color:#fff;border:0;border-radius:6px;cursor:pointer}' +
  'button:hover{background:#1c47b0}button.secondary{background:#fff;color:#1b1f24;border:1px solid #d5d9e0}button.secondary:hover{background:#f4f5f7}:focus-visible{outline:3px solid #2458d6;outline-offset:2px}a{color:#2458d6}' +
  '.error{color:#b00020;background:#fdecee;border-radius:6px;padding:.5rem .75rem}.note{color:#545a63}code{font-size:1.4rem}';

/** The mark and name, as the console's header shows them. */
const BRAND =
  '<p class="brand"><svg viewBox="0 0 32 32" aria-hidden="true" focusable="false"><rect width="32" height="32" rx="7" fill="currentColor"/>' +
  '<path d="M6 21h20l-3 5H9z M9 18l7-12v12z M18 9l6 9h-6z" fill="#fff"/></svg>Slipway</p>';

export function page(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · Slipway</title><style>${STYLE}</style></head><body><main>${BRAND}<h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

function errorLine(message: string | undefined): string {
  return message === undefined ? '' : `<p class="error" role="alert">${escapeHtml(message)}</p>`;
}

/** The sign-in page's way to the sign-up form, worded for who may use it (SLIPWAY_SIGNUP); none where nobody may. */
const SIGN_UP_LINKS = {
  open: { question: 'No account yet?', link: 'Create one' },
  invite: { question: 'Invited to an organization?', link: 'Create your account' },
  closed: undefined,
} as const;

function signUpLink(signUp: { url: string; mode: SignUpMode }): string {
  const wording = SIGN_UP_LINKS[signUp.mode];
  return wording === undefined ? '' : `<p class="note">${wording.question} <a href="${escapeHtml(signUp.url)}">${wording.link}</a>.</p>`;
}

export function signInPage(options: { action: string; signUp: { url: string; mode: SignUpMode }; email?: string; error?: string; clientName: string }): string {
  return page(
    'Sign in to Slipway',
    `<p class="note">${escapeHtml(options.clientName)} asks you to sign in.</p>${errorLine(options.error)}` +
      `<form method="post" action="${escapeHtml(options.action)}">` +
      `<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(options.email ?? '')}">` +
      `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>` +
      `<button type="submit">Sign in</button></form>` +
      signUpLink(options.signUp),
  );
}

/**
 * The sign-up form. `notice` says who may use it when not everyone may; an error (a refusal, a field at fault) takes
 * its place.
 */
export function signUpPage(options: { action: string; error?: string; notice?: string; email?: string; name?: string; passwordMinLength: number }): string {
  const notice = options.error === undefined && options.notice !== undefined ? `<p class="note">${escapeHtml(options.notice)}</p>` : '';
  return page(
    'Create a Slipway account',
    `${notice}${errorLine(options.error)}<form method="post" action="${escapeHtml(options.action)}">` +
      `<label for="name">Name</label><input id="name" name="name" autocomplete="name" value="${escapeHtml(options.name ?? '')}">` +
      `<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(options.email ?? '')}">` +
      `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="${options.passwordMinLength}" required>` +
      `<button type="submit">Create account</button></form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<p>${escapeHtml(message)}</p>`);
}

export function errorPage(message: string): string {
  return page('Something went wrong', errorLine(message));
}

/** The device flow's "enter the code shown by the CLI" page; `form` is the library's form with its CSRF token. */
export function userCodeInputPage(form: string, error: string | undefined): string {
  return page('Sign in a device', `${error === undefined ? '<p>Enter the code your terminal shows.</p>' : errorLine(error)}${form}<button type="submit" form="op.deviceInputForm">Continue</button>`);
}

export function userCodeConfirmPage(form: string, clientName: string, userCode: string): string {
  return page(
    'Confirm the device',
    `<p><strong>${escapeHtml(clientName)}</strong> asks to sign in as you. Check that your terminal shows this code:</p><p><code>${escapeHtml(userCode)}</code></p>` +
      `${form}<button type="submit" form="op.deviceConfirmForm">Continue</button>` +
      `<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes" class="secondary">Abort</button>`,
  );
}

export function consentPage(options: { action: string; clientName: string }): string {
  return page(
    'Allow access',
    `<p>${escapeHtml(options.clientName)} asks to use Slipway as you. Allow it only if you started this sign-in yourself.</p>` +
      `<form method="post" action="${escapeHtml(options.action)}"><button type="submit" name="decision" value="allow">Allow</button>` +
      `<button type="submit" name="decision" value="deny" class="secondary">Deny</button></form>`,
  );
}

/** The browser sign-out confirmation; `form` is the library's form with its CSRF token. */
export function signOutPage(form: string): string {
  return page(
    'Sign out',
    `<p>Sign out of Slipway in this browser?</p>${form}<button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>` +
      '<button type="submit" form="op.logoutForm" class="secondary">No, stay signed in</button>',
  );
}
