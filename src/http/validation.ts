import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

// ajv-formats ships CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * Schema compilation, on first use. Fastify compiles every route's validators (Ajv) and response serializers
 * (fast-json-stringify) when the server becomes ready: for this API that was 2.2 s of a 4.8 s start, most of it for
 * routes a given process never serves. Here each route gets a function that compiles its schema the first time a
 * request needs it (a few ms, once) and then is the compiled function. `compileSchemasNow` compiles every schema a
 * server holds, which the test suite does, so a schema Ajv or fast-json-stringify cannot compile fails a test and
 * not a user's first request.
 */
export interface SchemaCompilation {
  /** Compiles everything not compiled yet; throws the first schema that does not compile. */
  compileSchemasNow(): void;
}

/**
 * Two validators. Bodies are validated strictly: no type coercion, unknown fields rejected (never silently
 * dropped), all problems reported at once. Path, query and headers arrive as text, so those coerce scalars.
 * Every route's schema is compiled on its own, its `$id`s kept to that compilation (`addUsedSchema: false`): a named
 * schema used inside two bodies would otherwise be refused ("already exists") by whichever compiles second.
 */
function createAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: !coerce,
    strict: false,
    addUsedSchema: false,
  });
  addFormats(ajv);
  return ajv;
}

/** The compilers of one server and what they have left to compile. */
export function createSchemaCompilers(): SchemaCompilation & {
  validatorCompiler: FastifySchemaCompiler<unknown>;
  serializerFactory: NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer'];
} {
  const pending = new Set<() => unknown>();
  let bodyAjv: Ajv | undefined;
  let textAjv: Ajv | undefined;

  const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    let compiled: ValidateFunction | undefined;
    const compile = (): ValidateFunction => {
      if (compiled === undefined) {
        const ajv = httpPart === 'body' ? (bodyAjv ??= createAjv(false)) : (textAjv ??= createAjv(true));
        compiled = ajv.compile(schema as object);
        pending.delete(compile);
      }
      return compiled;
    };
    pending.add(compile);
    // Fastify reads `errors` after a failed call, and passes the parent object (so Ajv may replace a coerced root)
    // only to functions that carry Ajv's `schemaEnv`: both are forwarded to the compiled function.
    const validate = (data: unknown, context?: object): boolean => {
      const run = compile();
      const valid = run(data, context as Parameters<ValidateFunction>[1]) as boolean;
      validate.errors = run.errors;
      return valid;
    };
    validate.errors = undefined as ValidateFunction['errors'];
    Object.defineProperty(validate, 'schemaEnv', { get: () => compile().schemaEnv });
    return validate;
  };

  const eagerSerializers = SerializerSelector();
  const serializerFactory: ReturnType<typeof createSchemaCompilers>['serializerFactory'] = (externalSchemas, options) => {
    const compileSerializer = eagerSerializers(externalSchemas, options);
    return (route) => {
      let compiled: ((data: unknown) => string) | undefined;
      const compile = (): ((data: unknown) => string) => {
        if (compiled === undefined) {
          compiled = compileSerializer(route) as (data: unknown) => string;
          pending.delete(compile);
        }
        return compiled;
      };
      pending.add(compile);
      return (data: unknown) => compile()(data);
    };
  };

  return {
    validatorCompiler,
    serializerFactory,
    compileSchemasNow() {
      for (const compile of [...pending]) compile();
    },
  };
}
