import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';
import type { Kysely } from 'kysely';
import type { DB } from '../db/db.schema.ts';

/**
 * The storage adapter of the OpenID Connect library over the database: sessions, interactions, grants,
 * authorization and device codes, tokens. One table, one row per (model, id), the payload as JSON text.
 *
 * Expiry is the library's own clock (wall time): it stamps `exp` into payloads from Date.now and never sees the
 * application clock. Expired rows are skipped on read and swept now and then on write.
 */
const SWEEP_EVERY_WRITES = 200;

function epochSeconds(iso: string): number {
  return Math.floor(Date.parse(iso) / 1000);
}

export function createOidcAdapterFactory(db: Kysely<DB>): AdapterFactory {
  let writes = 0;

  async function sweep(): Promise<void> {
    await db.deleteFrom('oidc_records').where('expires_at', '<', new Date().toISOString()).execute();
  }

  return (model: string): Adapter => {
    async function findWhere(column: 'id' | 'user_code' | 'uid', value: string): Promise<AdapterPayload | undefined> {
      const row = await db
        .selectFrom('oidc_records')
        .select(['payload', 'expires_at', 'consumed_at'])
        .where('model', '=', model)
        .where(column, '=', value)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      if (row.expires_at !== null && Date.parse(row.expires_at) <= Date.now()) return undefined;
      const payload = JSON.parse(row.payload) as AdapterPayload;
      return row.consumed_at === null ? payload : { ...payload, consumed: epochSeconds(row.consumed_at) };
    }

    return {
      async upsert(id, payload, expiresIn) {
        const values = {
          payload: JSON.stringify(payload),
          grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
          user_code: typeof payload.userCode === 'string' ? payload.userCode : null,
          uid: typeof payload.uid === 'string' ? payload.uid : null,
          expires_at: expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000).toISOString(),
        };
        await db
          .insertInto('oidc_records')
          .values({ model, id, consumed_at: null, ...values })
          .onConflict((conflict) => conflict.columns(['model', 'id']).doUpdateSet(values))
          .execute();
        writes += 1;
        if (writes % SWEEP_EVERY_WRITES === 0) await sweep();
      },
      find: (id) => findWhere('id', id),
      findByUserCode: (userCode) => findWhere('user_code', userCode),
      findByUid: (uid) => findWhere('uid', uid),
      async consume(id) {
        await db
          .updateTable('oidc_records')
          .set({ consumed_at: new Date().toISOString() })
          .where('model', '=', model)
          .where('id', '=', id)
          .execute();
      },
      async destroy(id) {
        await db.deleteFrom('oidc_records').where('model', '=', model).where('id', '=', id).execute();
      },
      async revokeByGrantId(grantId) {
        await db.deleteFrom('oidc_records').where('grant_id', '=', grantId).execute();
      },
    };
  };
}
