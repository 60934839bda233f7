import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { stringOperand } from './operands.ts';

/** Hashes and HMACs of the UTF-8 bytes of strings, as lower-case hex (OPA's crypto.* builtins). */
function digest(name: string, algorithm: string): BuiltinDefinition {
  return {
    name,
    arity: 1,
    implementation: (operands) => createHash(algorithm).update(stringOperand(name, operands, 1), 'utf8').digest('hex'),
  };
}

function hmac(name: string, algorithm: string): BuiltinDefinition {
  return {
    name,
    arity: 2,
    implementation: (operands) => {
      const message = stringOperand(name, operands, 1);
      const key = stringOperand(name, operands, 2);
      return createHmac(algorithm, Buffer.from(key, 'utf8')).update(message, 'utf8').digest('hex');
    },
  };
}

export const CRYPTO_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  digest('crypto.md5', 'md5'),
  digest('crypto.sha1', 'sha1'),
  digest('crypto.sha256', 'sha256'),
  hmac('crypto.hmac.md5', 'md5'),
  hmac('crypto.hmac.sha1', 'sha1'),
  hmac('crypto.hmac.sha256', 'sha256'),
  hmac('crypto.hmac.sha512', 'sha512'),
  {
    name: 'crypto.hmac.equal',
    arity: 2,
    implementation: (operands) => {
      const a = Buffer.from(stringOperand('crypto.hmac.equal', operands, 1), 'utf8');
      const b = Buffer.from(stringOperand('crypto.hmac.equal', operands, 2), 'utf8');
      // Constant time for equal lengths, as Go's hmac.Equal.
      return a.length === b.length && timingSafeEqual(a, b);
    },
  },
]);
