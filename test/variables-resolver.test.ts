import { v5 as uuidv5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { isUuid } from '../src/lib/ids.ts';
import {
  builtInId,
  builtInVariables,
  isBuiltInShapedName,
  type EnvironmentForVariables,
  type ServiceForVariables,
} from '../src/modules/variables/variables.builtins.ts';
import { aliasTargetOf, findAliasCycle, resolveVariables, type VariableDefinition, type VariableScope } from '../src/modules/variables/variables.resolver.ts';

/**
 * The pure half of SPEC.md's variable rules: precedence between scopes, aliases (chains, cycles, dangling names) and
 * the built-in variables of rule 6, computed from an environment and the services beside it as the services module
 * will describe them (ServiceForVariables records, not stand-ins for our code).
 */

let counter = 0;
function definition(key: string, scope: VariableScope, value: string, extra: Partial<VariableDefinition> = {}): VariableDefinition {
  counter += 1;
  const aliasOf = aliasTargetOf(value);
  return {
    id: `id-${counter}`,
    key,
    scope,
    secret: false,
    sensitive: false,
    value: aliasOf === undefined ? value : undefined,
    aliasOf,
    ...extra,
  };
}

function valuesOf(definitions: VariableDefinition[]): Record<string, string | undefined> {
  return Object.fromEntries(
    resolveVariables(definitions).map((variable) => [variable.key, variable.unresolved === undefined ? variable.chain.at(-1)?.value : undefined]),
  );
}

const ENVIRONMENT: EnvironmentForVariables = {
  id: '0190f0b2-6c5e-7000-8000-00000000e001',
  projectId: '0190f0b2-6c5e-7000-8000-00000000a001',
  organizationId: '0190f0b2-6c5e-7000-8000-00000000b001',
  name: 'preview-login-form',
  mode: 'PREVIEW',
  clusterId: '0190f0b2-6c5e-7000-8000-00000000c001',
};

const SHOP_DB: ServiceForVariables = {
  id: '0190f0b2-6c5e-7000-8000-0000000000d1',
  kind: 'DATABASE',
  name: 'shop-db',
  database: {
    type: 'POSTGRESQL',
    version: '16',
    host: 'shop-db.internal',
    fqdn: 'shop-db.preview.example.com',
    port: 5432,
    username: 'shop',
    password: 'p@ss/word',
    dbName: 'orders',
  },
};
const API: ServiceForVariables = { id: '0190f0b2-6c5e-7000-8000-0000000000a1', kind: 'APPLICATION', name: 'api-v2', hostname: 'api-v2.internal', branch: 'feature/login' };
const CACHE: ServiceForVariables = {
  id: '0190f0b2-6c5e-7000-8000-0000000000d2',
  kind: 'DATABASE',
  name: 'cache',
  database: { type: 'REDIS', version: '7.2', host: 'cache.internal', port: 6379, username: 'default', password: 'r3dis', dbName: '' },
};

describe('precedence between scopes', () => {
  it('lets the narrowest scope win: APPLICATION > ENVIRONMENT > PROJECT > BUILT_IN', () => {
    const values = valuesOf([
      definition('LOG_LEVEL', 'BUILT_IN', 'builtin'),
      definition('LOG_LEVEL', 'PROJECT', 'project'),
      definition('LOG_LEVEL', 'ENVIRONMENT', 'environment'),
      definition('LOG_LEVEL', 'APPLICATION', 'application'),
      definition('REGION', 'PROJECT', 'eu'),
      definition('REGION', 'ENVIRONMENT', 'us'),
      definition('ONLY_PROJECT', 'PROJECT', 'p'),
      definition('PLATFORM_IS_PRODUCTION', 'BUILT_IN', 'false'),
      definition('PLATFORM_IS_PRODUCTION', 'PROJECT', 'true'),
    ]);
    expect(values).toEqual({ LOG_LEVEL: 'application', REGION: 'us', ONLY_PROJECT: 'p', PLATFORM_IS_PRODUCTION: 'true' });
  });

  it('does not depend on the order definitions are given in', () => {
    const definitions = [definition('A', 'ENVIRONMENT', 'env'), definition('A', 'BUILT_IN', 'b'), definition('A', 'PROJECT', 'p')];
    expect(valuesOf(definitions)).toEqual({ A: 'env' });
    expect(valuesOf([...definitions].reverse())).toEqual({ A: 'env' });
  });
});

describe('aliases (rule 2)', () => {
  it('resolves $NAME to that variable’s final value, following chains, and records the chain', () => {
    const definitions = [
      definition('DATABASE_URL', 'PROJECT', '$PLATFORM_DATABASE_SHOP_DB_CONNECTION_URI'),
      definition('PLATFORM_DATABASE_SHOP_DB_CONNECTION_URI', 'BUILT_IN', 'postgresql://u:p@h:5432/db', { sensitive: true }),
      definition('PRIMARY_DB', 'ENVIRONMENT', '$DATABASE_URL'),
      definition('LITERAL', 'PROJECT', 'costs $5'),
      definition('BRACED', 'PROJECT', '${DATABASE_URL}'),
    ];
    const resolved = resolveVariables(definitions);
    const primary = resolved.find((variable) => variable.key === 'PRIMARY_DB');
    expect(primary?.chain.map((link) => `${link.scope}:${link.key}`)).toEqual([
      'ENVIRONMENT:PRIMARY_DB',
      'PROJECT:DATABASE_URL',
      'BUILT_IN:PLATFORM_DATABASE_SHOP_DB_CONNECTION_URI',
    ]);
    expect(primary?.chain.at(-1)?.value).toBe('postgresql://u:p@h:5432/db');
    // A hidden built-in anywhere on the chain hides the alias's value too.
    expect(primary?.hidden).toBe(true);
    // Only a whole value of `$NAME` is an alias; anything else is literal text.
    expect(valuesOf(definitions)).toMatchObject({ LITERAL: 'costs $5', BRACED: '${DATABASE_URL}' });
  });

  it('binds an alias late: a PROJECT alias follows the override of its target in the consumer’s environment', () => {
    const project = [definition('API_URL', 'PROJECT', '$BASE_URL'), definition('BASE_URL', 'PROJECT', 'https://prod.example.com')];
    expect(valuesOf(project).API_URL).toBe('https://prod.example.com');
    expect(valuesOf([...project, definition('BASE_URL', 'ENVIRONMENT', 'https://staging.example.com')]).API_URL).toBe('https://staging.example.com');
  });

  it('reports an alias that names nothing instead of inventing a value', () => {
    const [variable] = resolveVariables([definition('TOKEN', 'ENVIRONMENT', '$MISSING')]);
    expect(variable?.unresolved).toBe('MISSING');
  });

  it('finds a cycle (naming it) and resolves it without looping; an alias shadowed by a narrower value takes no part', () => {
    const cyclic = [definition('A', 'PROJECT', '$B'), definition('B', 'PROJECT', '$C'), definition('C', 'ENVIRONMENT', '$A')];
    expect(findAliasCycle(cyclic)).toEqual(['A', 'B', 'C', 'A']);
    expect(resolveVariables(cyclic).every((variable) => variable.unresolved !== undefined)).toBe(true);
    expect(findAliasCycle([definition('SELF', 'ENVIRONMENT', '$SELF')])).toEqual(['SELF', 'SELF']);
    // C is overridden by a plain value at APPLICATION scope: no cycle for that consumer.
    expect(findAliasCycle([...cyclic, definition('C', 'APPLICATION', 'plain')])).toBeUndefined();
    expect(findAliasCycle([definition('X', 'PROJECT', '$Y'), definition('Y', 'PROJECT', '$Z'), definition('Z', 'PROJECT', 'v')])).toBeUndefined();
  });

  it('resolves a thousand variables with long chains in linear work', () => {
    const definitions: VariableDefinition[] = [definition('V0', 'PROJECT', 'root')];
    for (let index = 1; index < 1000; index += 1) definitions.push(definition(`V${index}`, index % 2 === 0 ? 'PROJECT' : 'ENVIRONMENT', `$V${index - 1}`));
    const values = valuesOf(definitions);
    expect(Object.keys(values)).toHaveLength(1000);
    expect(values.V999).toBe('root');
    expect(findAliasCycle(definitions)).toBeUndefined();
  });
});

describe('built-in variables (rule 6)', () => {
  it('names exactly SPEC.md’s table, with <NAME> upper-cased and dashes as underscores, hiding the hidden ones', () => {
    const builtIns = builtInVariables(ENVIRONMENT, [SHOP_DB, API, CACHE]);
    const byKey = new Map(builtIns.map((builtIn) => [builtIn.key, builtIn]));
    expect([...byKey.keys()].sort()).toEqual(
      [
        'PLATFORM_JSON_B64',
        'PLATFORM_BRANCH_NAME',
        'PLATFORM_IS_PRODUCTION',
        'PLATFORM_APPLICATION_API_V2_HOSTNAME',
        ...['SHOP_DB', 'CACHE'].flatMap((name) =>
          [
            'DATABASE',
            'USERNAME',
            'PASSWORD',
            'PORT',
            'FQDN',
            'HOST',
            'CONNECTION_URI',
            'CONNECTION_URI_WITHOUT_CREDENTIALS',
            'VERSION',
            'TYPE',
            'NAME',
          ].map((suffix) => `PLATFORM_DATABASE_${name}_${suffix}`),
        ),
      ].sort(),
    );
    const value = (key: string) => byKey.get(key)?.value;
    const hidden = builtIns.filter((builtIn) => builtIn.sensitive).map((builtIn) => builtIn.key);
    expect(hidden.sort()).toEqual(
      [
        'PLATFORM_APPLICATION_API_V2_HOSTNAME',
        ...['SHOP_DB', 'CACHE'].flatMap((name) =>
          ['USERNAME', 'PASSWORD', 'PORT', 'FQDN', 'HOST', 'CONNECTION_URI', 'CONNECTION_URI_WITHOUT_CREDENTIALS'].map((suffix) => `PLATFORM_DATABASE_${name}_${suffix}`),
        ),
      ].sort(),
    );
    expect(value('PLATFORM_IS_PRODUCTION')).toBe('false');
    expect(value('PLATFORM_BRANCH_NAME')).toBe('preview-login-form');
    expect(value('PLATFORM_APPLICATION_API_V2_HOSTNAME')).toBe('api-v2.internal');
    expect(value('PLATFORM_DATABASE_SHOP_DB_DATABASE')).toBe('orders');
    expect(value('PLATFORM_DATABASE_SHOP_DB_USERNAME')).toBe('shop');
    expect(value('PLATFORM_DATABASE_SHOP_DB_PASSWORD')).toBe('p@ss/word');
    expect(value('PLATFORM_DATABASE_SHOP_DB_PORT')).toBe('5432');
    expect(value('PLATFORM_DATABASE_SHOP_DB_HOST')).toBe('shop-db.internal');
    expect(value('PLATFORM_DATABASE_SHOP_DB_FQDN')).toBe('shop-db.preview.example.com');
    expect(value('PLATFORM_DATABASE_SHOP_DB_CONNECTION_URI')).toBe('postgresql://shop:p%40ss%2Fword@shop-db.internal:5432/orders');
    expect(value('PLATFORM_DATABASE_SHOP_DB_CONNECTION_URI_WITHOUT_CREDENTIALS')).toBe('postgresql://shop-db.internal:5432/orders');
    expect(value('PLATFORM_DATABASE_SHOP_DB_VERSION')).toBe('16');
    expect(value('PLATFORM_DATABASE_SHOP_DB_TYPE')).toBe('POSTGRESQL');
    expect(value('PLATFORM_DATABASE_SHOP_DB_NAME')).toBe('shop-db');
    expect(value('PLATFORM_DATABASE_CACHE_CONNECTION_URI')).toBe('redis://default:r3dis@cache.internal:6379');
    expect(value('PLATFORM_DATABASE_CACHE_FQDN')).toBe('cache.internal');
    expect(value('PLATFORM_DATABASE_CACHE_TYPE')).toBe('REDIS');
  });

  it('describes the environment in PLATFORM_JSON_B64 without anything hidden, and says production for PRODUCTION', () => {
    const builtIns = builtInVariables({ ...ENVIRONMENT, mode: 'PRODUCTION' }, [SHOP_DB, API]);
    const json = JSON.parse(Buffer.from(builtIns.find((builtIn) => builtIn.key === 'PLATFORM_JSON_B64')?.value ?? '', 'base64').toString('utf8'));
    expect(json).toEqual({
      id: ENVIRONMENT.id,
      name: ENVIRONMENT.name,
      mode: 'PRODUCTION',
      project_id: ENVIRONMENT.projectId,
      organization_id: ENVIRONMENT.organizationId,
      cluster_id: ENVIRONMENT.clusterId,
      services: [
        { id: SHOP_DB.id, name: 'shop-db', type: 'DATABASE' },
        { id: API.id, name: 'api-v2', type: 'APPLICATION' },
      ],
    });
    const text = JSON.stringify(json);
    for (const secret of ['p@ss/word', 'shop-db.internal', 'api-v2.internal', '5432']) expect(text).not.toContain(secret);
    expect(builtIns.find((builtIn) => builtIn.key === 'PLATFORM_IS_PRODUCTION')?.value).toBe('true');
  });

  it('gives a service its own branch, keeps ids stable per environment and name, and recognises built-in names', () => {
    const forApi = builtInVariables(ENVIRONMENT, [API], API);
    expect(forApi.find((builtIn) => builtIn.key === 'PLATFORM_BRANCH_NAME')?.value).toBe('feature/login');
    expect(builtInVariables(ENVIRONMENT, [API]).find((builtIn) => builtIn.key === 'PLATFORM_BRANCH_NAME')?.id).toBe(
      builtInId(ENVIRONMENT.id, 'PLATFORM_BRANCH_NAME'),
    );
    // The same ids as the uuid library's v5 with the built-in namespace.
    expect(builtInId(ENVIRONMENT.id, 'PLATFORM_IS_PRODUCTION')).toBe(uuidv5(`${ENVIRONMENT.id}:PLATFORM_IS_PRODUCTION`, '5b0f7c52-3f0e-4a51-9d51-6a1f1c0e8b21'));
    expect(isUuid(builtInId(ENVIRONMENT.id, 'PLATFORM_DATABASE_SHOP_DB_HOST'))).toBe(true);
    expect(builtInId(ENVIRONMENT.id, 'PLATFORM_IS_PRODUCTION')).not.toBe(builtInId('0190f0b2-6c5e-7000-8000-00000000e002', 'PLATFORM_IS_PRODUCTION'));
    expect(isBuiltInShapedName('PLATFORM_DATABASE_SHOP_DB_PASSWORD')).toBe(true);
    expect(isBuiltInShapedName('PLATFORM_APPLICATION_API_HOSTNAME')).toBe(true);
    expect(isBuiltInShapedName('PLATFORM_IS_PRODUCTION')).toBe(true);
    expect(isBuiltInShapedName('PLATFORM_SOMETHING')).toBe(false);
    expect(isBuiltInShapedName('DATABASE_URL')).toBe(false);
  });
});
