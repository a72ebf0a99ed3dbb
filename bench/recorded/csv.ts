// Reads the research datasets' CSV files: one record a line, RFC 4180 quoting (a quoted field may
// hold commas and doubled quotes, never a line break in these files), optionally gzipped.
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { createInterface } from 'node:readline';

/** Splits one CSV line into its fields. */
export function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  const n = line.length;
  while (i <= n) {
    if (line.charCodeAt(i) === 34 /* " */) {
      let field = '';
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) {
          field += line.slice(i); // an unterminated quote keeps the rest of the line
          i = n + 1;
          break;
        }
        field += line.slice(i, q);
        if (line.charCodeAt(q + 1) === 34) {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      out.push(field);
      i++; // the comma after the closing quote
    } else {
      const c = line.indexOf(',', i);
      const end = c < 0 ? n : c;
      out.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return out;
}

/** The records of a CSV file (gzipped when the name ends in .gz) as objects keyed by its header. */
export async function* readCsv(path: string): AsyncGenerator<Record<string, string>> {
  const raw = createReadStream(path);
  const input = path.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  let header: string[] | null = null;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (line === '') continue;
    const fields = splitCsvLine(line);
    if (!header) {
      header = fields;
      continue;
    }
    const rec: Record<string, string> = {};
    for (let i = 0; i < header.length; i++) rec[header[i]!] = fields[i] ?? '';
    yield rec;
  }
}
