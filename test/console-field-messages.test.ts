import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readableFieldMessage } from '../console/src/api/field-messages.ts';

/** Every `pattern` of a JSON document (the API description), wherever it sits. */
function patternsIn(node: unknown, found: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const item of node) patternsIn(item, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') found.add(value);
      else patternsIn(value, found);
    }
  }
  return found;
}

/** The console's words for the API's pattern and format messages (console/src/api/field-messages.ts). */
describe('console field messages', () => {
  it('says what a pattern asks instead of showing the pattern', () => {
    expect(readableFieldMessage('must match pattern "^[a-z0-9][a-z0-9-]*$"')).toBe('must start with a lowercase letter or a digit and contain only lowercase letters, digits and hyphens');
    expect(readableFieldMessage('must match pattern "^[a-z][a-z0-9-]{0,62}$"')).toBe('must start with a lowercase letter and contain only lowercase letters, digits and hyphens');
    expect(readableFieldMessage('must match pattern "^[A-Za-z_][A-Za-z0-9_]*$"')).toBe('must start with a letter or an underscore and contain only letters, digits and underscores');
    expect(readableFieldMessage('must match pattern "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$"')).toBe(
      'must be 1 to 63 letters, digits and hyphens, starting and ending with a letter or a digit',
    );
    expect(readableFieldMessage('must match pattern "^[^\\x00-\\x1f\\x7f]+$"')).toBe('must not be empty, and must not contain line breaks or other control characters');
    expect(readableFieldMessage('must match pattern "^[^\\x00-\\x20\\x7f/]+$"')).toBe('must not be empty, and must not contain spaces, line breaks or other control characters or "/"');
    expect(readableFieldMessage('must match pattern "^[a-z0-9-]+$"')).toBe('must contain only lowercase letters, digits and hyphens');
    expect(readableFieldMessage('must match pattern "^subnet-[0-9a-f]{8}([0-9a-f]{9})?$"')).toBe('must contain only digits, letters a to f and hyphens');
  });

  it('says what a format asks, and leaves every other message as the API wrote it', () => {
    expect(readableFieldMessage('must match format "email"')).toBe('must be an e-mail address');
    expect(readableFieldMessage('must match format "uri"')).toBe('must be a full URL (such as https://example.com)');
    expect(readableFieldMessage('must NOT have more than 63 characters')).toBe('must NOT have more than 63 characters');
    expect(readableFieldMessage('a project named "web" already exists')).toBe('a project named "web" already exists');
  });

  it('has words for every pattern of the API description: none shows a regular expression', () => {
    const document: unknown = JSON.parse(readFileSync('openapi/openapi.json', 'utf8'));
    const patterns = [...patternsIn(document, new Set())];
    expect(patterns.length).toBeGreaterThan(20);
    for (const pattern of patterns) {
      const words = readableFieldMessage(`must match pattern "${pattern}"`);
      expect(words, pattern).not.toContain(pattern);
      expect(words, pattern).not.toMatch(/\\x|\[\^|\{\d|\(\?:|\$$/);
      expect(words, pattern).not.toBe('is not in the format this field accepts');
    }
  });
});
