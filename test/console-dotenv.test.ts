import { describe, expect, it } from 'vitest';
import { parseDotenv } from '../console/src/services/dotenv.ts';

/** The console's .env reader (console/src/services/dotenv.ts), which turns a pasted or chosen file into import rows. */
describe('console .env reader', () => {
  it('reads bare, quoted and exported values, skips comments and blank lines', () => {
    const text = [
      '# the shop',
      '',
      'DATABASE_URL=postgres://db:5432/shop',
      'export GREETING = "Hello, \\"world\\"\\nagain" # said twice',
      "RAW='no \\n escape here'",
      'EMPTY=',
      'PORT=8080 # the port',
      'HASH=abc#def',
      'PEM="-----BEGIN-----',
      'line two',
      '-----END-----"',
    ].join('\r\n');
    const { rows, problems } = parseDotenv(text);
    expect(problems).toEqual([]);
    expect(rows).toEqual([
      { line: 3, name: 'DATABASE_URL', value: 'postgres://db:5432/shop' },
      { line: 4, name: 'GREETING', value: 'Hello, "world"\nagain' },
      { line: 5, name: 'RAW', value: 'no \\n escape here' },
      { line: 6, name: 'EMPTY', value: '' },
      { line: 7, name: 'PORT', value: '8080' },
      { line: 8, name: 'HASH', value: 'abc#def' },
      { line: 9, name: 'PEM', value: '-----BEGIN-----\nline two\n-----END-----' },
    ]);
  });

  it('names the lines it cannot read instead of guessing', () => {
    const { rows, problems } = parseDotenv('GOOD=1\njust words\nQUOTE=\'x\nAFTER="a" b\nOPEN="never closed\nmore');
    expect(rows).toEqual([{ line: 1, name: 'GOOD', value: '1' }]);
    expect(problems).toEqual([
      { line: 2, message: 'is not NAME=value' },
      { line: 3, message: 'opens a quote that is never closed (QUOTE)' },
      { line: 4, message: 'has text after the closing quote of AFTER' },
      { line: 5, message: 'opens a quote that is never closed (OPEN)' },
    ]);
  });
});
