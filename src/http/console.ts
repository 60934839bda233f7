import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';
import type { FastifyTypeBox } from './fastify.types.ts';
import { markRoutesPublic } from './security.ts';

/**
 * The web console (docs/console.md): the single-page application that `npm run build` writes to dist/console, served
 * by this process under /console/. Files are read on demand (nothing at start but three routes): hashed assets are
 * cached for a year, index.html is revalidated and answers every /console/* path that is not a file (deep links: the
 * console's router reads the path). A browser asking for `/` (Accept: text/html) is sent to /console/; any other
 * client keeps the JSON 404 it always had there. Every route is public and hidden from the API description: the
 * console authenticates its API calls itself, with the user's bearer token.
 */
export const CONSOLE_PATH = '/console';
/** The built-in identity provider's client for the console (identity.provider.ts registers it). */
export const CONSOLE_CLIENT_ID = 'slipway-console';
/** Where the issuer sends the browser back with the authorization code, under the public URL. */
export const CONSOLE_CALLBACK_PATH = `${CONSOLE_PATH}/callback`;

export interface ConsoleOptions {
  /** The OIDC issuer the console signs people in with; none: the console says sign-in is not configured. */
  issuer: string | undefined;
  /** The client id to use at that issuer: CONSOLE_CLIENT_ID unless given (docs/console.md, "An external issuer"). */
  clientId?: string;
  /** An external issuer's audience for the API, sent as `audience` (Auth0 and others want it); none for the built-in. */
  audience?: string | undefined;
  /** Where dist/console is; found next to the running code unless given (tests). */
  root?: string;
}

const HIDDEN = { hide: true } as const;

interface CachedAsset {
  bytes: Buffer;
  gzip: Buffer | undefined;
}
/** Sent gzipped to browsers that accept it. */
const COMPRESSED = new Set(['.js', '.css', '.svg']);

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

const NOT_BUILT =
  'The web console is not built in this checkout: run `npm run build` (or `npm install`, which runs it), then reload. ' +
  'For development, `npm run console:dev` serves it with live reload (docs/console.md).';

/**
 * dist/console: beside the bundled server (dist/*.js, `npm start`), or from the sources (`npm run dev`, tests), two
 * levels up from src/http. Looked up at the first request, not at start.
 */
function defaultRoot(): string {
  const candidates = [new URL('./console/', import.meta.url), new URL('../../dist/console/', import.meta.url)].map((url) => fileURLToPath(url));
  return candidates.find((candidate) => existsSync(path.join(candidate, 'index.html'))) ?? (candidates[1] as string);
}

function wantsHtml(request: FastifyRequest): boolean {
  return request.headers.accept?.includes('text/html') === true;
}

/** The security headers of every console page: scripts and styles from here only, API and issuer calls only. */
function pageHeaders(reply: FastifyReply, issuer: string | undefined): FastifyReply {
  const issuerOrigin = issuer === undefined ? '' : ` ${new URL(issuer).origin}`;
  return reply
    .header(
      'content-security-policy',
      // React Aria sets style attributes (positions of popovers), hence 'unsafe-inline' for styles only.
      `default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'${issuerOrigin}; ` +
        `form-action 'self'${issuerOrigin}; frame-ancestors 'none'; base-uri 'none'; object-src 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    // The callback's URL carries the authorization code: it is not passed on to anything the page links to.
    .header('referrer-policy', 'no-referrer');
}

export async function registerConsole(app: FastifyTypeBox, options: ConsoleOptions): Promise<void> {
  let root: string | undefined;
  const rootDir = () => (root ??= options.root ?? defaultRoot());
  const assets = new Map<string, CachedAsset>();
  const settings = JSON.stringify({ issuer: options.issuer ?? null, clientId: options.clientId ?? CONSOLE_CLIENT_ID, audience: options.audience ?? null }).replaceAll('<', '\\u003c');

  /** index.html with the sign-in settings in it (a JSON script, read by the console before anything else). */
  async function indexPage(reply: FastifyReply): Promise<FastifyReply> {
    let html: string;
    try {
      html = await readFile(path.join(rootDir(), 'index.html'), 'utf8');
    } catch {
      return notBuilt(reply);
    }
    pageHeaders(reply, options.issuer);
    return reply
      .code(200)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send(html.replace('<!--slipway-settings-->', `<script id="slipway-settings" type="application/json">${settings}</script>`));
  }

  function notBuilt(reply: FastifyReply): FastifyReply {
    return reply
      .code(404)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Console not built · Slipway</title></head><body><main><h1>The console is not built</h1><p>${NOT_BUILT.replaceAll('`', '')}</p></main></body></html>`);
  }

  async function serve(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    let rest: string;
    try {
      rest = decodeURIComponent((request.url.split('?', 1)[0] ?? '').slice(CONSOLE_PATH.length + 1));
    } catch {
      throw new AppError('not_found', `no file at ${request.url}`);
    }
    const extension = path.extname(rest);
    // A page of the application (no file extension): index.html, the router shows it.
    if (extension === '' || rest === 'index.html') {
      if (!wantsHtml(request) && !existsSync(path.join(rootDir(), 'index.html'))) throw new AppError('not_found', NOT_BUILT);
      return indexPage(reply);
    }
    const file = path.resolve(rootDir(), rest);
    if (!file.startsWith(rootDir()) || rest.split('/').some((part) => part.startsWith('.'))) throw new AppError('not_found', `no file at ${request.url}`);
    const body = await readAsset(file, COMPRESSED.has(extension));
    if (body === undefined) throw new AppError('not_found', existsSync(path.join(rootDir(), 'index.html')) ? `no file at ${request.url}` : NOT_BUILT);
    reply.type(CONTENT_TYPES[extension] ?? 'application/octet-stream').header('cache-control', cacheControlOf(rest)).header('x-content-type-options', 'nosniff');
    if (body.gzip === undefined) return reply.send(body.bytes);
    reply.header('vary', 'accept-encoding');
    return /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')) ? reply.header('content-encoding', 'gzip').send(body.gzip) : reply.send(body.bytes);
  }

  /**
   * A file of dist/console, kept in memory once read (the build writes new names for new contents), with its gzip
   * form for text: compressed once per process, on first request, rather than on every answer.
   */
  async function readAsset(file: string, compress: boolean): Promise<CachedAsset | undefined> {
    let asset = assets.get(file);
    if (asset === undefined) {
      let bytes: Buffer;
      try {
        bytes = await readFile(file);
      } catch {
        return undefined;
      }
      const gzip = compress ? (await import('node:zlib')).gzipSync(bytes) : undefined;
      asset = { bytes, gzip };
      assets.set(file, asset);
    }
    return asset;
  }

  await app.register(async (scope: FastifyTypeBox) => {
    markRoutesPublic(scope);
    // Browsers start at the console; API clients keep the JSON 404 the root has always answered them.
    scope.get('/', { schema: HIDDEN }, async (request, reply) => {
      if (wantsHtml(request)) return reply.redirect(`${CONSOLE_PATH}/`);
      throw new AppError('not_found', `no operation at ${request.method} /`);
    });
    scope.get(CONSOLE_PATH, { schema: HIDDEN }, async (_request, reply) => reply.redirect(`${CONSOLE_PATH}/`));
    scope.get(`${CONSOLE_PATH}/*`, { schema: HIDDEN }, serve);
  });
}

/** The API path of an invitation, which its e-mail links to (invitations.service.ts, `invitation_link`). */
const INVITATION_LINK = /^\/organization\/([0-9a-f-]{36})\/inviteMember\/([0-9a-f-]{36})\/?$/i;

/**
 * The invitation e-mail links to the invitation's API path (`invitation_link`, which the CLI also reads). A browser
 * following that link (it asks for HTML and sends no credential) is sent to the console's page for the invitation,
 * which signs the person in first when needed; API clients at the same path get the operation as before. Installed
 * before authentication (app.ts), since a browser arrives there without a token.
 */
export function redirectInvitationLinksToConsole(app: FastifyTypeBox): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' || request.headers.authorization !== undefined || !wantsHtml(request)) return;
    const link = INVITATION_LINK.exec(request.url.split('?', 1)[0] ?? '');
    if (link === null) return;
    return reply.redirect(`${CONSOLE_PATH}/invitations/${link[1] as string}/${link[2] as string}`);
  });
}

/** Vite names built assets by their content: they never change. Everything else is revalidated within the hour. */
function cacheControlOf(rest: string): string {
  return rest.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=3600';
}
