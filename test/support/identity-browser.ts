/**
 * A minimal browser for driving server-rendered pages over real HTTP: keeps cookies (by name and path), follows
 * nothing by itself (each redirect is a step the test sees), and reads form fields out of HTML.
 */
interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

export interface BrowserResponse {
  status: number;
  location: string | undefined;
  body: string;
  headers: Headers;
  url: string;
}

export class TestBrowser {
  private readonly cookies: StoredCookie[] = [];

  private cookieHeader(url: URL): string | undefined {
    const matching = this.cookies.filter((cookie) => url.pathname === cookie.path || url.pathname.startsWith(cookie.path.endsWith('/') ? cookie.path : `${cookie.path}/`) || cookie.path === '/');
    return matching.length === 0 ? undefined : matching.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
  }

  private remember(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator);
      const value = pair.slice(separator + 1);
      const pathAttribute = attributes.find((attribute) => attribute.toLowerCase().startsWith('path='));
      const path = pathAttribute === undefined ? url.pathname.replace(/\/[^/]*$/, '') || '/' : pathAttribute.slice(5);
      const expired = attributes.some((attribute) => /^expires=/i.test(attribute) && Date.parse(attribute.slice(8)) <= Date.now()) || attributes.some((attribute) => /^max-age=0$/i.test(attribute));
      const index = this.cookies.findIndex((cookie) => cookie.name === name && cookie.path === path);
      if (index >= 0) this.cookies.splice(index, 1);
      if (!expired && value !== '') this.cookies.push({ name, value, path });
    }
  }

  async request(method: 'GET' | 'POST', target: string, form?: Record<string, string>): Promise<BrowserResponse> {
    const url = new URL(target);
    const headers: Record<string, string> = { accept: 'text/html' };
    const cookie = this.cookieHeader(url);
    if (cookie !== undefined) headers.cookie = cookie;
    let body: string | undefined;
    if (form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(form).toString();
    }
    const response = await fetch(url, { method, headers, redirect: 'manual', ...(body === undefined ? {} : { body }) });
    this.remember(url, response.headers);
    const location = response.headers.get('location') ?? undefined;
    return { status: response.status, location: location === undefined ? undefined : new URL(location, url).href, body: await response.text(), headers: response.headers, url: url.href };
  }

  get(url: string): Promise<BrowserResponse> {
    return this.request('GET', url);
  }

  post(url: string, form: Record<string, string>): Promise<BrowserResponse> {
    return this.request('POST', url, form);
  }

  /**
   * Follows redirects (GET) from `response` while they stay on the same origin, answering the page reached or the
   * redirect that leaves (to an application's redirect URI).
   */
  async follow(response: BrowserResponse, limit = 10): Promise<BrowserResponse> {
    let current = response;
    const origin = new URL(response.url).origin;
    for (let hops = 0; current.location !== undefined && current.status >= 300 && current.status < 400 && new URL(current.location).origin === origin; hops += 1) {
      if (hops >= limit) throw new Error(`too many redirects from ${response.url}`);
      current = await this.get(current.location);
    }
    return current;
  }
}

/** The value of the input named `name` in the form with id or action `form` (first form when omitted). */
export function formField(html: string, name: string): string | undefined {
  const pattern = new RegExp(`<input[^>]*name="${name}"[^>]*>`, 'i');
  const input = pattern.exec(html)?.[0];
  if (input === undefined) return undefined;
  return /value="([^"]*)"/.exec(input)?.[1];
}

/** The action URL of the first form on the page, resolved against the page URL. */
export function formAction(html: string, pageUrl: string): string | undefined {
  const action = /<form[^>]*action="([^"]*)"/i.exec(html)?.[1];
  return action === undefined ? undefined : new URL(action.replaceAll('&amp;', '&'), pageUrl).href;
}

/** On a sign-in page, submits e-mail and password; answers the provider's redirect (or the page, when refused). */
export async function submitSignIn(browser: TestBrowser, page: BrowserResponse, email: string, password: string): Promise<BrowserResponse> {
  const action = formAction(page.body, page.url);
  if (action === undefined) throw new Error(`no sign-in form at ${page.url} (${page.status}): ${page.body.slice(0, 300)}`);
  return browser.post(action, { email, password });
}

/**
 * What a person does with the code the CLI shows: opens the verification page, enters the code, confirms, signs in.
 * Answers the last page (the provider's success page when all went well).
 */
export async function approveDeviceCode(browser: TestBrowser, verificationUri: string, userCode: string, email: string, password: string): Promise<BrowserResponse> {
  const input = await browser.get(verificationUri);
  const inputAction = formAction(input.body, input.url);
  const xsrf = formField(input.body, 'xsrf');
  if (inputAction === undefined || xsrf === undefined) throw new Error(`no code form at ${verificationUri}: ${input.body.slice(0, 300)}`);
  const confirmation = await browser.post(inputAction, { xsrf, user_code: userCode });
  const confirmXsrf = formField(confirmation.body, 'xsrf');
  if (confirmXsrf === undefined) throw new Error(`no confirmation form (${confirmation.status}): ${confirmation.body.slice(0, 300)}`);
  const confirmed = await browser.post(inputAction, { xsrf: confirmXsrf, user_code: userCode, confirm: 'yes' });
  return completeInteraction(browser, await browser.follow(confirmed), email, password);
}

/** Signs in and allows access on whatever interaction pages come, answering the first other page. */
export async function completeInteraction(browser: TestBrowser, first: BrowserResponse, email: string, password: string): Promise<BrowserResponse> {
  let page = first;
  for (let step = 0; step < 4; step += 1) {
    if (/name="password"/.test(page.body)) {
      page = await browser.follow(await submitSignIn(browser, page, email, password));
    } else if (/name="decision" value="allow"/.test(page.body)) {
      const action = formAction(page.body, page.url);
      if (action === undefined) throw new Error('no consent form');
      page = await browser.follow(await browser.post(action, { decision: 'allow' }));
    } else {
      return page;
    }
  }
  return page;
}
