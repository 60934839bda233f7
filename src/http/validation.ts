import type { FastifySchemaCompiler } from 'fastify';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats ships CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * Two validators. Bodies are validated strictly: no type coercion, unknown fields rejected (never silently
 * dropped), all problems reported at once. Path, query and headers arrive as text, so those coerce scalars.
 */
function createAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: !coerce,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = createAjv(false);
  const textAjv = createAjv(true);
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}
