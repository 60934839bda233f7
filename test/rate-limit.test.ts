import { expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase } from './support/test-app.ts';

/** Per-caller rate limiting (DESIGN.md §4): IETF draft RateLimit headers, then 429 with Retry-After. */
describeEachDatabase('rate limit', (ctx) => {
  async function limitedApp(perMinute: number): Promise<FastifyTypeBox> {
    return buildApp({
      config: { oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience }, egressIps: [], logLevel: 'silent', rateLimitPerMinute: perMinute },
      database: ctx().database,
    });
  }

  it('counts per caller: the sixth request of a caller in a minute is 429, another caller is not affected', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const other = await ctx().signUpWithOrganization();
    const app = await limitedApp(5);
    try {
      const get = (auth: string, org: string) => app.inject({ method: 'GET', url: `/organization/${org}/project`, headers: { authorization: auth } });
      for (let i = 0; i < 5; i++) {
        const response = await get(owner.auth, organizationId);
        expect(response.statusCode).toBe(200);
        expect(response.headers['ratelimit-limit']).toBe('5');
        expect(response.headers['ratelimit-remaining']).toBe(String(4 - i));
      }
      const refused = await get(owner.auth, organizationId);
      const body = expectErrorBody(refused, 429);
      expect(body.message).toMatch(/at most 5 a minute/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await get(other.owner.auth, other.organizationId)).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('counts callers without credentials by their address', async () => {
    const app = await limitedApp(3);
    try {
      for (let i = 0; i < 3; i++) expect((await app.inject({ method: 'GET', url: '/ips' })).statusCode).toBe(200);
      expectErrorBody(await app.inject({ method: 'GET', url: '/ips' }), 429);
    } finally {
      await app.close();
    }
  });

  it('is off when no limit is configured', async () => {
    const app = await limitedApp(0);
    try {
      const response = await app.inject({ method: 'GET', url: '/ips' });
      expect(response.headers['ratelimit-limit']).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
