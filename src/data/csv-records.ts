/** A CSV record and the line it starts on (the header is line 1); `end` is where the next record starts. */
export type CsvRecord = { line: number; cells: string[]; end: number; nextLine: number };

/** A file that is not CSV from some point on (a quoted cell never closed, text after a closing quote). */
export class CsvSyntaxError extends Error {
  constructor(readonly line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

const COMMA = 44;
const QUOTE = 34;
const LF = 10;
const CR = 13;
const LINE_BREAK = /\r\n|\r|\n/g;

const linesIn = (text: string) => text.match(LINE_BREAK)?.length ?? 0;

/**
 * The records of a CSV text (RFC 4180: `,` separated, `"` quoted with `""` inside, CRLF, LF or CR line ends, a
 * leading byte-order mark ignored), one at a time, each with the line it starts on. Lines whose cells are all blank
 * are skipped. Reading can start anywhere a record starts (`from`, at `line`): an import resumes where its last
 * batch ended. Linear in the text; only the current record is held.
 */
export function* csvRecords(text: string, from = 0, line = 1): Generator<CsvRecord> {
  let i = from === 0 && text.charCodeAt(0) === 0xfeff ? 1 : from;
  const n = text.length;
  while (i < n) {
    const start = line;
    const cells: string[] = [];
    for (;;) {
      if (text.charCodeAt(i) === QUOTE) {
        let value = '';
        let from = i + 1;
        for (;;) {
          const q = text.indexOf('"', from);
          if (q === -1) throw new CsvSyntaxError(line, 'a quoted cell is never closed (a `"` is missing)');
          if (text.charCodeAt(q + 1) === QUOTE) {
            value += text.slice(from, q + 1);
            from = q + 2;
            continue;
          }
          value += text.slice(from, q);
          i = q + 1;
          break;
        }
        line += linesIn(value);
        const next = text.charCodeAt(i);
        if (i < n && next !== COMMA && next !== LF && next !== CR) throw new CsvSyntaxError(line, 'a closing `"` must be followed by `,` or the end of the line');
        cells.push(value);
      } else {
        let j = i;
        for (; j < n; j++) {
          const c = text.charCodeAt(j);
          if (c === COMMA || c === LF || c === CR) break;
        }
        cells.push(text.slice(i, j));
        i = j;
      }
      if (i >= n) break;
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i++;
        if (i >= n) cells.push('');
        if (i >= n) break;
        continue;
      }
      i += c === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
      line++;
      break;
    }
    if (cells.every((cell) => cell.trim() === '')) continue;
    yield { line: start, cells, end: i, nextLine: line };
  }
}
