import { builtinFailure, defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoObject, type RegoValue } from '../rego.value.ts';
import { Base64Error, bytesToText, decodeBase64Url } from './binary.text.ts';
import { JsonSyntaxError, parseJson } from './json.text.ts';
import { stringOperand } from './operands.ts';

/** io.jwt.decode: splits and decodes a compact JWT without verifying it, with OPA's error texts. */
const NAME = 'io.jwt.decode';
/** Nested tokens (cty "JWT") are followed this deep at most. */
const MAX_NESTING = 8;

function decodePart(part: string, label: string): Uint8Array {
  try {
    return decodeBase64Url(part);
  } catch (error) {
    if (error instanceof Base64Error) throw builtinFailure(NAME, `JWT ${label} had invalid encoding: ${error.message}`);
    throw error;
  }
}

function jsonObject(text: string, label: string): RegoObject {
  let value: RegoValue;
  try {
    value = parseJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw builtinFailure(NAME, `JWT ${label} is not valid JSON: ${error.message}`);
    throw error;
  }
  if (!(value instanceof RegoObject)) throw builtinFailure(NAME, `JWT ${label} must be a JSON object`);
  return value;
}

function decodeToken(token: string, depth: number): RegoValue {
  if (!token.includes('.')) throw builtinFailure(NAME, 'encoded JWT had no period separators');
  const parts = token.split('.');
  if (parts.length !== 3) throw builtinFailure(NAME, `encoded JWT must have 3 sections, found ${parts.length}`);
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = jsonObject(bytesToText(decodePart(headerPart, 'header')), 'header');
  const payloadText = bytesToText(decodePart(payloadPart, 'payload'));
  // A nested token (content type "JWT") is the quoted payload; OPA decodes the inner token instead.
  if (header.get('cty') === 'JWT') {
    if (depth >= MAX_NESTING) throw builtinFailure(NAME, 'JWT nested too deeply');
    return decodeToken(payloadText.replace(/^["']+/, '').replace(/["']+$/, ''), depth + 1);
  }
  const payload = jsonObject(payloadText, 'payload');
  const signature = Buffer.from(decodePart(signaturePart, 'signature')).toString('hex');
  return [header, payload, signature];
}

export const JWT_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  { name: 'io.jwt.decode', arity: 1, implementation: (operands) => decodeToken(stringOperand(NAME, operands, 1), 0) },
]);
