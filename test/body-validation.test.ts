import { Type, type TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { createSchemaCompilers } from '../src/http/validation.ts';

/**
 * The server's body validators (src/http/validation.ts) are compiled on first use, in whatever order requests come.
 * A schema with an `$id` used inside two bodies (a receiver inside "create it" and inside "test it before creating
 * it") must compile in either order: once it did not, and each create answered 500 until the server restarted.
 */
const Receiver = Type.Object({ name: Type.String({ minLength: 1 }), url: Type.String() }, { $id: 'SharedReceiver', additionalProperties: false });
const Create = Receiver;
const Check = Type.Object({ receiver: Receiver, message: Type.Optional(Type.String()) }, { $id: 'SharedReceiverCheck', additionalProperties: false });

function bodyValidator(compile: ReturnType<typeof createSchemaCompilers>['validatorCompiler'], schema: TSchema) {
  return compile({ schema, httpPart: 'body', method: 'POST', url: '/' }) as unknown as (data: unknown) => boolean;
}

describe('body validators sharing a schema with an $id', () => {
  for (const order of [
    ['check', 'create'],
    ['create', 'check'],
  ] as const) {
    it(`compile and validate when the ${order[0]} body is compiled first`, () => {
      const { validatorCompiler, compileSchemasNow } = createSchemaCompilers();
      const validators = { check: bodyValidator(validatorCompiler, Check), create: bodyValidator(validatorCompiler, Create) };
      const bodies = { check: { receiver: { name: 'ops', url: 'https://hooks.example.com/x' } }, create: { name: 'ops', url: 'https://hooks.example.com/x' } };
      for (const part of order) {
        expect(validators[part](structuredClone(bodies[part]))).toBe(true);
        expect(validators[part]({ ...structuredClone(bodies[part]), unknown: 1 })).toBe(false);
      }
      expect(() => compileSchemasNow()).not.toThrow();
    });
  }
});
