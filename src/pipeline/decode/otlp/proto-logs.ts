// ExportLogsServiceRequest (protobuf) -> svc_logs rows, written through the shared LogSink of
// normalise.ts.
import { LogSink, type ResourceCtx, type ScopeCtx } from './normalise.js';
import type { DecodeOptions, DecodeResult } from './batch.js';
import { B, P, fixed32, len, micros, readHex, readStr, seek, skip, str, v32 } from './proto-wire.js';
import { A, V } from './proto-json-out.js';
import { LASTV, anyValue, attr, nowOf, run, walk } from './proto-common.js';

function logRecord(res: ResourceCtx, sc: ScopeCtx, end: number, sink: LogSink): void {
  let timeUs = 0;
  let observedUs = 0;
  let sevNum = 0;
  let sevText = '';
  let body: string | null = null;
  let flags = 0;
  let traceId: string | null = null;
  let spanId: string | null = null;
  let eventName = '';
  A.reset();
  A.byte(0x7b);
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x09:
        timeUs = micros(end);
        break;
      case 0x59:
        observedUs = micros(end);
        break;
      case 0x10:
        sevNum = v32(end) | 0;
        break;
      case 0x1a:
        sevText = readStr(end);
        break;
      case 0x2a: {
        const e = len(end);
        // A body that is one string_value (almost every log record) is read as it is: the JSON copy
        // anyValue also writes, byte by byte, is for other values only (a visible share of log ingest's thread).
        const at = P;
        let one = false;
        if (P < e && B[P] === 0x0a) {
          seek(P + 1);
          const se = len(e);
          if (se === e) {
            body = str(P, se);
            one = true;
          }
        }
        if (!one) {
          seek(at);
          V.reset();
          anyValue(V, e, 1, true);
          body = typeof LASTV === 'string' && V.b[0] === 0x22 ? (LASTV as string) : LASTV === null ? null : V.text(0);
        }
        seek(e);
        break;
      }
      case 0x32:
        attr(A, end, null, null);
        break;
      case 0x45:
        flags = fixed32(end);
        break;
      case 0x4a:
        traceId = readHex(end);
        break;
      case 0x52:
        spanId = readHex(end);
        break;
      case 0x62:
        eventName = readStr(end);
        break;
      default:
        skip(t, end);
    }
  }
  A.byte(0x7d);
  sink.add(res, sc, {
    timeUs,
    observedUs,
    severityNumber: sevNum,
    severityText: sevText || null,
    body,
    attrsJson: A.text(0),
    flags,
    traceId,
    spanId,
    eventName: eventName || null,
  });
}

/** ExportLogsServiceRequest (protobuf) → svc_logs batch. Throws MalformedError. */
export function decodeLogs(body: Uint8Array, opts?: DecodeOptions): DecodeResult {
  const sink = new LogSink(nowOf(opts));
  return run(body, () => {
    walk((res, sc, end) => logRecord(res, sc, end, sink));
    return sink.result();
  });
}
