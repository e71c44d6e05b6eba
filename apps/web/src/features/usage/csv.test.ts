// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { BOM, csvField, csvFileName, toCsv } from './csv';

describe('toCsv', () => {
  it('writes RFC 4180: a BOM, commas, CRLF after every record', () => {
    expect(
      toCsv(
        ['Page', 'Views'],
        [
          ['Home', 3],
          ['Profile', 1234],
        ],
      ),
    ).toBe(`${BOM}Page,Views\r\nHome,3\r\nProfile,1234\r\n`);
  });

  it('quotes fields with a comma, a quote, CR or LF, doubling the quotes', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('x\ry')).toBe('"x\ry"');
    expect(csvField('plain text')).toBe('plain text');
  });

  it('leads a text that a spreadsheet would run as a formula with a quote', () => {
    for (const start of ['=', '+', '-', '@', '\t']) {
      expect(csvField(`${start}SUM(A1)`)).toBe(`'${start}SUM(A1)`);
    }
    expect(csvField('\rHYPERLINK()')).toBe(`"'\rHYPERLINK()"`);
    // Neutralised, then quoted: the quote stays inside the field.
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    // Only at the start: a formula sign inside a text is harmless.
    expect(csvField('a=b')).toBe('a=b');
  });

  it('writes numbers as they are (a negative number is no formula), and nothing as an empty field', () => {
    expect(csvField(-3)).toBe('-3');
    expect(csvField(0.125)).toBe('0.125');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField(Number.NaN)).toBe('');
    expect(csvField(true)).toBe('true');
    expect(toCsv(['a', 'b'], [[null, '']])).toBe(`${BOM}a,b\r\n,\r\n`);
  });

  it('keeps any text intact through a parse (round trip)', () => {
    const texts = ['é ü 日本', 'a,"b"\r\nc', ' spaced '];
    const csv = toCsv(
      ['text'],
      texts.map((t) => [t]),
    );
    expect(csv.startsWith(BOM)).toBe(true);
    expect(csv).toContain('"a,""b""\r\nc"');
    expect(csv).toContain('é ü 日本');
  });
});

describe('csvFileName', () => {
  it('names the table and the period', () => {
    expect(
      csvFileName('Recent sessions', { from: '2026-11-25T04:00:00.000Z', to: '2026-11-26T04:00:00.000Z' }),
    ).toBe('recent-sessions_2026-11-25T0400Z_2026-11-26T0400Z.csv');
  });
});
