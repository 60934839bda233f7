import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../src/cli/service-logs.ts';

/** What `slipway logs` lets a workload's output do to the reader's terminal: colours, nothing else. */
describe('terminalSafe', () => {
  it('keeps SGR colour and style sequences and the text around them', () => {
    expect(terminalSafe('\u001b[1;31merror\u001b[0m: \u001b[38;5;208mwarm\u001b[m \u001b[38:2:1:2:3mtrue\u001b[0m')).toBe(
      '\u001b[1;31merror\u001b[0m: \u001b[38;5;208mwarm\u001b[m \u001b[38:2:1:2:3mtrue\u001b[0m',
    );
  });

  it('drops cursor moves, screen clears, titles, clipboard writes and hyperlinks, cut-off ones included', () => {
    expect(terminalSafe('a\u001b[2Jb\u001b[10;10Hc\u001b[?25ld')).toBe('abcd');
    expect(terminalSafe('x\u001b]0;owned\u0007y')).toBe('xy');
    expect(terminalSafe('x\u001b]52;c;c2VjcmV0\u001b\\y')).toBe('xy');
    expect(terminalSafe('\u001b]8;;https://evil.example\u0007link\u001b]8;;\u0007')).toBe('link');
    expect(terminalSafe('cmd\u001bcreset\u001b')).toBe('cmdreset');
    expect(terminalSafe('half\u001b[31')).toBe('half31');
  });
});
