// OTLP log export requests for benchmarks: real log lines (Loghub, when ../shared/corpora is
// present) or synthetic ones, encoded with protobufjs from the repo's proto/ files.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CORPORA_DIR } from '../../src/core/paths.js';
import { attr, protoRoot } from '../../testkit/spans.js';

/** Raw lines of every Loghub-2k dataset present (whole lines: the miner sees what an agent would send). */
export function loghubLines(): { lines: string[]; source: string } {
  const dir = join(CORPORA_DIR, 'loghub');
  if (!existsSync(dir)) {
    const lines = Array.from({ length: 16_000 }, (_v, i) => `worker ${i % 16} finished job ${100000 + i} in ${i % 997} ms (queue=${i % 7})`);
    return { lines, source: 'synthetic (../shared/corpora absent)' };
  }
  const lines: string[] = [];
  for (const name of readdirSync(dir)) {
    const f = join(dir, name, `${name}_2k.log`);
    if (existsSync(f)) lines.push(...readFileSync(f, 'utf8').split(/\r?\n/).filter(Boolean));
  }
  return { lines, source: `Loghub-2k (${lines.length} lines)` };
}

export function encodeLogs(service: string, bodies: readonly string[], startUs: number): Uint8Array {
  const T = protoRoot().lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
  return T.encode(
    T.fromObject({
      resourceLogs: [
        {
          resource: { attributes: [attr('service.name', service), attr('host.name', 'node-1')] },
          scopeLogs: [
            {
              scope: { name: 'bench' },
              logRecords: bodies.map((body, i) => ({
                timeUnixNano: String(BigInt(startUs + i) * 1000n),
                severityNumber: /error|fail|exception/i.test(body) ? 17 : 9,
                severityText: /error|fail|exception/i.test(body) ? 'ERROR' : 'INFO',
                body: { stringValue: body },
              })),
            },
          ],
        },
      ],
    }),
  ).finish();
}
