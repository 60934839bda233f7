import { describe, expect, it } from 'vitest';
import { applySgr, parseAnsi, plainText } from '../console/src/services/ansi.ts';

const ESC = '\u001b';

/** The console's reader of ANSI escape sequences in log lines (console/src/services/ansi.ts). */
describe('console ANSI reader', () => {
  it('leaves a line without escape sequences as one plain run', () => {
    expect(parseAnsi('listening on 8080')).toEqual([{ text: 'listening on 8080', style: {} }]);
    expect(parseAnsi('')).toEqual([]);
  });

  it('reads the 8 colours, their bright forms and backgrounds, bold and resets', () => {
    const line = `${ESC}[31mred${ESC}[0m plain ${ESC}[1;92mbright green bold${ESC}[22m not bold${ESC}[39m ${ESC}[44mon blue${ESC}[49m${ESC}[m end`;
    expect(parseAnsi(line)).toEqual([
      { text: 'red', style: { fg: 1 } },
      { text: ' plain ', style: {} },
      { text: 'bright green bold', style: { fg: 10, bold: true } },
      { text: ' not bold', style: { fg: 10 } },
      { text: ' ', style: {} },
      { text: 'on blue', style: { bg: 4 } },
      { text: ' end', style: {} },
    ]);
    expect(parseAnsi(`${ESC}[30mk${ESC}[37mw${ESC}[90mK${ESC}[97mW${ESC}[47mbg${ESC}[107mBG`).map((run) => run.style)).toEqual([
      { fg: 0 },
      { fg: 7 },
      { fg: 8 },
      { fg: 15 },
      { fg: 15, bg: 7 },
      { fg: 15, bg: 15 },
    ]);
  });

  it('reads 256-colour and true-colour sequences for the text and the background', () => {
    expect(parseAnsi(`${ESC}[38;5;3mpalette${ESC}[38;5;196mcube${ESC}[38;5;244mgrey${ESC}[48;2;10;20;30mtrue bg${ESC}[38;2;255;128;0morange`)).toEqual([
      { text: 'palette', style: { fg: 3 } },
      { text: 'cube', style: { fg: 'rgb(255, 0, 0)' } },
      { text: 'grey', style: { fg: 'rgb(128, 128, 128)' } },
      { text: 'true bg', style: { fg: 'rgb(128, 128, 128)', bg: 'rgb(10, 20, 30)' } },
      { text: 'orange', style: { fg: 'rgb(255, 128, 0)', bg: 'rgb(10, 20, 30)' } },
    ]);
    // Codes after an extended colour still count; an out-of-range colour is ignored.
    expect(applySgr({}, '38;5;21;1')).toEqual({ fg: 'rgb(0, 0, 255)', bold: true });
    expect(applySgr({ fg: 2 }, '38;2;300;0;0')).toEqual({ fg: 2 });
    expect(applySgr({ fg: 2 }, '38;5;999')).toEqual({ fg: 2 });
    expect(applySgr({}, '3;4')).toEqual({ italic: true, underline: true });
    expect(applySgr({ italic: true, underline: true }, '23;24')).toEqual({});
  });

  it('drops every other escape sequence and control character, cut-off ones included', () => {
    const line = `${ESC}[2K${ESC}[1G${ESC}[?25lprogress ${ESC}]0;window title${ESC}\\50%${ESC}]8;;https://example.com\u0007link${ESC}]8;;\u0007${ESC}7 done\u0008${ESC}[31`;
    expect(parseAnsi(line)).toEqual([{ text: 'progress 50%link done', style: {} }]);
    expect(plainText(`${ESC}[1m${ESC}[31mERROR${ESC}[0m: disk\tfull\r`)).toBe('ERROR: disk\tfull');
    // A lone ESC at the end of the line is gone too.
    expect(plainText(`half${ESC}`)).toBe('half');
  });

  it('keeps markup as text: a line is never read as HTML', () => {
    expect(parseAnsi(`${ESC}[31m<img src=x onerror=alert(1)>${ESC}[0m`)).toEqual([{ text: '<img src=x onerror=alert(1)>', style: { fg: 1 } }]);
  });
});
