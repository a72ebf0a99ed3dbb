// Pyroscope ingest: the name parser, /ingest query parameters, push.v1.PushRequest (protobuf and
// Connect JSON, from the corpus and hand-built), and the error codes of each refusal.
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { describe, expect, test } from 'vitest';
import { Profile } from 'pprof-format';
import { PROTO_DIR } from '../../../../src/core/paths.js';
import { ingestPyroscopeBody, parsePyroscopeName, DecodeError, referenceDecoder } from '../../../../src/pipeline/decode/profiles/index.js';
import { ingestParams, pyroscopeTimeToUs } from '../../../../src/pipeline/decode/profiles/pyroscope.js';
import { bfield, encodeProfile, HAVE_CORPORA, PPROF_DIR, sfield, type TinyProfile } from './helpers.js';

const tiny: TinyProfile = {
  types: [['samples', 'count']],
  locations: { 1: ['work'], 2: ['main'] },
  samples: [{ locs: [1, 2], values: [3] }],
};

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof DecodeError) return e.code;
    throw e;
  }
  return 'OK';
}

describe('parsePyroscopeName', () => {
  test.each([
    ['app', 'app', {}],
    ['app.cpu{}', 'app.cpu', {}],
    ['my-app{env=staging,region=eu}', 'my-app', { env: 'staging', region: 'eu' }],
    [' svc { env = prod , team = "core, infra" } ', 'svc', { env: 'prod', team: 'core, infra' }],
    ["svc{k='it\\'s',x=1,}", 'svc', { k: "it's", x: '1' }],
    ['svc{a=1,b=2', 'svc', { a: '1', b: '2' }],
    ['svc{=x,flag,ok=y}', 'svc', { flag: '', ok: 'y' }],
    ['svc{url=http://h/x?a=b}', 'svc', { url: 'http://h/x?a=b' }],
  ])('%j → %s %j', (name, service, labels) => {
    expect(parsePyroscopeName(name)).toEqual({ service, labels });
  });
  test('an empty service part is MISSING_SERVICE_NAME', () => {
    expect(codeOf(() => parsePyroscopeName('{env=x}'))).toBe('MISSING_SERVICE_NAME');
    expect(codeOf(() => parsePyroscopeName('  '))).toBe('MISSING_SERVICE_NAME');
  });
});

describe('/ingest query parameters', () => {
  test('from/until in seconds, milliseconds, microseconds or nanoseconds', () => {
    expect(pyroscopeTimeToUs('1700000000')).toBe(1_700_000_000_000_000);
    expect(pyroscopeTimeToUs(1_700_000_000_000)).toBe(1_700_000_000_000_000);
    expect(pyroscopeTimeToUs('1700000000000000')).toBe(1_700_000_000_000_000);
    expect(pyroscopeTimeToUs('1700000000000000000')).toBe(1_700_000_000_000_000);
    expect(pyroscopeTimeToUs('now')).toBeUndefined();
    expect(ingestParams({ from: '100000000', until: '100000010', sampleRate: '100' })).toEqual({
      timestampUs: 100_000_000_000_000,
      durationNs: 10_000_000_000,
      sampleRate: 100,
    });
  });
  test('non-pprof formats are refused with a hint', () => {
    expect(codeOf(() => ingestParams({ format: 'folded' }))).toBe('LEGACY_FORMAT');
    expect(codeOf(() => ingestParams({ format: 'jfr' }))).toBe('LEGACY_FORMAT');
    expect(codeOf(() => ingestParams({ format: 'pprof' }))).toBe('OK');
  });
});

describe('ingestPyroscopeBody with name=', () => {
  test('raw gzip pprof: service, attributes, time range and sampleRate applied', () => {
    const body = gzipSync(encodeProfile(tiny));
    const r = ingestPyroscopeBody(body, { name: 'api{env=prod}', from: '1700000000', until: '1700000010', sampleRate: '100', spyName: 'nodespy' });
    expect(r.services).toEqual(['api']);
    expect(r.rows).toHaveLength(1);
    expect(r.rows[0]).toMatchObject({
      service_name: 'api',
      function: 'work',
      stack: ['main', 'work'],
      profile_type: 'cpu',
      unit: 'nanoseconds',
      value: 30_000_000,
      sample_count: 3,
      timestamp: 1_700_000_000_000_000,
      duration_ns: 10_000_000_000,
      attributes: '{"env":"prod","spy_name":"nodespy"}',
      source: 'pyroscope',
    });
  });
  test('refusals: empty body, empty profile, collapsed text, garbage', () => {
    expect(codeOf(() => ingestPyroscopeBody(new Uint8Array(0), { name: 'a' }))).toBe('EMPTY');
    expect(codeOf(() => ingestPyroscopeBody(encodeProfile({ ...tiny, samples: [] }), { name: 'a' }))).toBe('EMPTY');
    expect(codeOf(() => ingestPyroscopeBody(Buffer.from('main;work 3\nmain 1\n'), { name: 'a' }))).toBe('LEGACY_FORMAT');
    expect(codeOf(() => ingestPyroscopeBody(Uint8Array.of(0x12, 0x05, 0x01), { name: 'a' }))).toBe('MALFORMED');
  });
});

function pushRequest(series: { labels: [string, string][]; profiles: Uint8Array[] }[]): Uint8Array {
  return Uint8Array.from(
    series.flatMap((s) =>
      bfield(1, [
        ...s.labels.flatMap(([n, v]) => bfield(1, [...sfield(1, n), ...sfield(2, v)])),
        ...s.profiles.flatMap((p, i) => bfield(2, [...bfield(1, p), ...sfield(2, `id-${i}`)])),
      ]),
    ),
  );
}

describe('push.v1.PushRequest', () => {
  const prof = gzipSync(encodeProfile(tiny));
  test('protobuf: one service per series, labels → attributes, ID → profile_id', () => {
    const body = pushRequest([
      { labels: [['__name__', 'process_cpu'], ['service_name', 'a'], ['env', 'x']], profiles: [prof] },
      { labels: [['service_name', 'b']], profiles: [prof, prof] },
    ]);
    const nowUs = (): number => 1_700_000_000_000_000;
    const r = ingestPyroscopeBody(body, {}, { nowUs });
    expect(r.services.sort()).toEqual(['a', 'b']);
    expect(r.profiles).toBe(3);
    const a = r.rows.find((x) => x.service_name === 'a')!;
    expect(a.attributes).toBe('{"__name__":"process_cpu","env":"x"}');
    expect(a.profile_id).toBe('id-0');
    // the whole request gzip-compressed decodes the same
    expect(ingestPyroscopeBody(gzipSync(body), {}, { nowUs }).rows).toEqual(r.rows);
    expect(a.timestamp).toBe(1_700_000_000_000_000);
  });
  test('Connect JSON form', () => {
    const json = JSON.stringify({ series: [{ labels: [{ name: 'service_name', value: 'j' }], samples: [{ rawProfile: Buffer.from(prof).toString('base64'), ID: 'x' }] }] });
    const r = ingestPyroscopeBody(Buffer.from(json), {});
    expect(r.rows[0]).toMatchObject({ service_name: 'j', profile_id: 'x', value: 3 });
  });
  test('a series without service_name is MISSING_SERVICE_NAME; no samples is EMPTY; bad JSON is MALFORMED', () => {
    expect(codeOf(() => ingestPyroscopeBody(pushRequest([{ labels: [['__name__', 'cpu']], profiles: [prof] }]), {}))).toBe('MISSING_SERVICE_NAME');
    expect(codeOf(() => ingestPyroscopeBody(pushRequest([{ labels: [['service_name', 'a']], profiles: [] }]), {}))).toBe('EMPTY');
    expect(codeOf(() => ingestPyroscopeBody(Buffer.from('{"series": 5}'), {}))).toBe('MALFORMED');
    expect(codeOf(() => ingestPyroscopeBody(Buffer.from('{"series": [{"samples":[{"rawProfile":"***"}]}'), {}))).toBe('MALFORMED');
  });
  test('Connect JSON label values: numbers and booleans kept as text; a deeply nested array is MALFORMED, not a stack overflow', () => {
    // Found by fuzzing: String() of a 20,000-deep array recursed past the stack (a 5xx).
    const body = (value: string) => Buffer.from(`{"series":[{"labels":[{"name":"service_name","value":"j"},{"name":"k","value":${value}}],"samples":[{"rawProfile":"${Buffer.from(prof).toString('base64')}"}]}]}`);
    expect(JSON.parse(ingestPyroscopeBody(body('7'), {}).rows[0]!.attributes!)).toMatchObject({ k: '7' });
    expect(JSON.parse(ingestPyroscopeBody(body('true'), {}).rows[0]!.attributes!)).toMatchObject({ k: 'true' });
    expect(codeOf(() => ingestPyroscopeBody(body('['.repeat(20_000) + ']'.repeat(20_000)), {}))).toBe('MALFORMED');
    expect(codeOf(() => ingestPyroscopeBody(body('{"a":1}'), {}))).toBe('MALFORMED');
  });
  test('our hand-written push.proto loads in protobufjs and agrees with the lean decoder', () => {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => `${PROTO_DIR}/${target}`;
    root.loadSync('pyroscope/push.proto');
    const T = root.lookupType('push.v1.PushRequest');
    const msg = T.decode(pushRequest([{ labels: [['service_name', 'a']], profiles: [prof] }])) as unknown as {
      series: { labels: { name: string; value: string }[]; samples: { rawProfile: Uint8Array; ID: string }[] }[];
    };
    expect(msg.series[0]!.labels[0]).toMatchObject({ name: 'service_name', value: 'a' });
    expect(Buffer.from(msg.series[0]!.samples[0]!.rawProfile).equals(Buffer.from(prof))).toBe(true);
    expect(msg.series[0]!.samples[0]!.ID).toBe('id-0');
  });
});

describe.skipIf(!HAVE_CORPORA)('pyroscope-push-constructed corpus', () => {
  const dir = `${PPROF_DIR}/pyroscope-push-constructed`;

  function expected(): { total: number; samples: number } {
    const json = JSON.parse(readFileSync(`${dir}/push_request_process_cpu.json`, 'utf8')) as { series: { samples: { rawProfile: string }[] }[] };
    const raw = Buffer.from(json.series[0]!.samples[0]!.rawProfile, 'base64');
    const p = Profile.decode(raw[0] === 0x1f ? gunzipSync(raw) : raw);
    const cpu = p.sampleType.findIndex((t) => p.stringTable.strings[Number(t.type)] === 'cpu');
    return { total: p.sample.reduce((a, s) => a + Number(s.value[cpu]), 0), samples: p.sample.length };
  }

  test.each(['push_request_process_cpu.pb', 'push_request_process_cpu.json'])('%s: service pprof-sample, cpu totals = pprof-format', (f) => {
    const want = expected();
    for (const decoder of [undefined, referenceDecoder]) {
      const r = ingestPyroscopeBody(readFileSync(`${dir}/${f}`), {}, decoder ? { decoder } : {});
      expect(r.services).toEqual(['pprof-sample']);
      expect(r.samples).toBe(want.samples);
      const cpu = r.rows.filter((x) => x.profile_type === 'cpu').reduce((a, x) => a + x.value, 0);
      expect(cpu).toBe(want.total);
      expect(JSON.parse(r.rows[0]!.attributes!)).toMatchObject({ __name__: 'process_cpu' });
    }
  });
});
