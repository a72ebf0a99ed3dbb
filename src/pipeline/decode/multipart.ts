// The one multipart/form-data field a profile push carries (`profile`), found without copying the
// body or decoding it as text. Hostile input (no boundary, unterminated parts, absurd headers)
// gives null, which the caller turns into a 400.

const CRLF2 = Buffer.from('\r\n\r\n');

export function boundaryOf(contentType: string): string | null {
  const m = /boundary=(?:"([^"]{1,200})"|([^;\s]{1,200}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]!) : null;
}

/** The bytes of form field `name`, or null when the body has no such well-formed part. */
export function multipartField(body: Uint8Array, contentType: string, name: string): Uint8Array | null {
  const boundary = boundaryOf(contentType);
  if (!boundary) return null;
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const delim = Buffer.from(`--${boundary}`);
  let at = buf.indexOf(delim);
  while (at >= 0) {
    const headersStart = at + delim.length;
    if (buf[headersStart] === 0x2d && buf[headersStart + 1] === 0x2d) return null; // closing delimiter
    const headersEnd = buf.indexOf(CRLF2, headersStart);
    if (headersEnd < 0 || headersEnd - headersStart > 8192) return null;
    const headers = buf.subarray(headersStart, headersEnd).toString('latin1');
    const next = buf.indexOf(Buffer.from(`\r\n--${boundary}`), headersEnd + 4);
    if (next < 0) return null;
    const field = /content-disposition:[^\r\n]*\bname="([^"]*)"/i.exec(headers)?.[1];
    if (field === name) return buf.subarray(headersEnd + 4, next);
    at = next + 2;
  }
  return null;
}
