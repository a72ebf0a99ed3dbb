// OTLP/JSON profiles → protobuf, for `tds replay`: the server takes OTLP profiles as protobuf only,
// and the Collector's file exporter writes them as JSON lines like every other signal. A small
// table-driven encoder of the profiles messages (opentelemetry.proto.profiles.v1development, field
// numbers from proto/): protojson rules (lowerCamelCase or snake_case keys, 64-bit integers as
// strings or numbers, bytes as base64, trace, span and profile ids as hex).

type Scalar = 'string' | 'bytes' | 'id' | 'int32' | 'int64' | 'uint32' | 'uint64' | 'sint32' | 'bool' | 'double' | 'fixed64' | 'fixed32';

interface FieldDef {
  no: number;
  name: string; // lowerCamelCase; snake_case is derived
  type: Scalar | string; // a scalar, or the name of a message
  repeated?: boolean;
}

const f = (no: number, name: string, type: FieldDef['type'], repeated = false): FieldDef => ({ no, name, type, repeated });

const MESSAGES: Record<string, readonly FieldDef[]> = {
  Request: [f(1, 'resourceProfiles', 'ResourceProfiles', true), f(2, 'dictionary', 'Dictionary')],
  Dictionary: [
    f(1, 'mappingTable', 'Mapping', true),
    f(2, 'locationTable', 'Location', true),
    f(3, 'functionTable', 'Function', true),
    f(4, 'linkTable', 'Link', true),
    f(5, 'stringTable', 'string', true),
    f(6, 'attributeTable', 'KeyValueAndUnit', true),
    f(7, 'stackTable', 'Stack', true),
  ],
  ResourceProfiles: [f(1, 'resource', 'Resource'), f(2, 'scopeProfiles', 'ScopeProfiles', true), f(3, 'schemaUrl', 'string')],
  Resource: [f(1, 'attributes', 'KeyValue', true), f(2, 'droppedAttributesCount', 'uint32'), f(3, 'entityRefs', 'EntityRef', true)],
  EntityRef: [f(1, 'schemaUrl', 'string'), f(2, 'type', 'string'), f(3, 'idKeys', 'string', true), f(4, 'descriptionKeys', 'string', true)],
  ScopeProfiles: [f(1, 'scope', 'Scope'), f(2, 'profiles', 'Profile', true), f(3, 'schemaUrl', 'string')],
  Scope: [f(1, 'name', 'string'), f(2, 'version', 'string'), f(3, 'attributes', 'KeyValue', true), f(4, 'droppedAttributesCount', 'uint32')],
  Profile: [
    f(1, 'sampleType', 'ValueType'),
    f(2, 'samples', 'Sample', true),
    f(3, 'timeUnixNano', 'fixed64'),
    f(4, 'durationNano', 'uint64'),
    f(5, 'periodType', 'ValueType'),
    f(6, 'period', 'int64'),
    f(7, 'profileId', 'id'),
    f(8, 'droppedAttributesCount', 'uint32'),
    f(9, 'originalPayloadFormat', 'string'),
    f(10, 'originalPayload', 'bytes'),
    f(11, 'attributeIndices', 'int32', true),
  ],
  ValueType: [f(1, 'typeStrindex', 'int32'), f(2, 'unitStrindex', 'int32')],
  Sample: [f(1, 'stackIndex', 'int32'), f(2, 'attributeIndices', 'int32', true), f(3, 'linkIndex', 'int32'), f(4, 'values', 'int64', true), f(5, 'timestampsUnixNano', 'fixed64', true)],
  Mapping: [f(1, 'memoryStart', 'uint64'), f(2, 'memoryLimit', 'uint64'), f(3, 'fileOffset', 'uint64'), f(4, 'filenameStrindex', 'int32'), f(5, 'attributeIndices', 'int32', true)],
  Stack: [f(1, 'locationIndices', 'int32', true)],
  Location: [f(1, 'mappingIndex', 'int32'), f(2, 'address', 'uint64'), f(3, 'lines', 'Line', true), f(4, 'attributeIndices', 'int32', true)],
  Line: [f(1, 'functionIndex', 'int32'), f(2, 'line', 'int64'), f(3, 'column', 'int64')],
  Function: [f(1, 'nameStrindex', 'int32'), f(2, 'systemNameStrindex', 'int32'), f(3, 'filenameStrindex', 'int32'), f(4, 'startLine', 'int64')],
  Link: [f(1, 'traceId', 'id'), f(2, 'spanId', 'id')],
  KeyValueAndUnit: [f(1, 'keyStrindex', 'int32'), f(2, 'value', 'AnyValue'), f(3, 'unitStrindex', 'int32')],
  KeyValue: [f(1, 'key', 'string'), f(2, 'value', 'AnyValue')],
  AnyValue: [
    f(1, 'stringValue', 'string'),
    f(2, 'boolValue', 'bool'),
    f(3, 'intValue', 'int64'),
    f(4, 'doubleValue', 'double'),
    f(5, 'arrayValue', 'ArrayValue'),
    f(6, 'kvlistValue', 'KeyValueList'),
    f(7, 'bytesValue', 'bytes'),
  ],
  ArrayValue: [f(1, 'values', 'AnyValue', true)],
  KeyValueList: [f(1, 'values', 'KeyValue', true)],
};

export class ProtoJsonError extends Error {}

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

class Out {
  private chunks: number[] = [];
  byte(b: number): void {
    this.chunks.push(b);
  }
  varint(v: bigint): void {
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) {
      this.chunks.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.chunks.push(Number(x));
  }
  bytes(b: Uint8Array): void {
    for (const x of b) this.chunks.push(x);
  }
  fixed(v: bigint, size: 4 | 8): void {
    let x = BigInt.asUintN(size * 8, v);
    for (let i = 0; i < size; i++) {
      this.chunks.push(Number(x & 0xffn));
      x >>= 8n;
    }
  }
  tag(no: number, wt: number): void {
    this.varint(BigInt(no * 8 + wt));
  }
  len(no: number, body: Uint8Array): void {
    this.tag(no, 2);
    this.varint(BigInt(body.length));
    this.bytes(body);
  }
  take(): Uint8Array {
    return Uint8Array.from(this.chunks);
  }
}

function integer(v: unknown, what: string): bigint {
  if (typeof v === 'number' && Number.isFinite(v) && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  throw new ProtoJsonError(`${what} is not an integer: ${JSON.stringify(v)?.slice(0, 40)}`);
}

function bytesOf(v: unknown, type: 'bytes' | 'id', what: string): Uint8Array {
  if (typeof v !== 'string') throw new ProtoJsonError(`${what} is not a string`);
  if (type === 'id' && /^[0-9a-fA-F]*$/.test(v) && v.length % 2 === 0) return Buffer.from(v, 'hex');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(v)) throw new ProtoJsonError(`${what} is neither hex nor base64`);
  return Buffer.from(v, 'base64');
}

function scalar(out: Out, d: FieldDef, v: unknown, what: string, packed: boolean): void {
  const t = d.type as Scalar;
  const tagged = (wt: number) => !packed && out.tag(d.no, wt);
  switch (t) {
    case 'string':
      if (typeof v !== 'string') throw new ProtoJsonError(`${what} is not a string`);
      out.len(d.no, Buffer.from(v, 'utf8'));
      return;
    case 'bytes':
    case 'id':
      out.len(d.no, bytesOf(v, t, what));
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw new ProtoJsonError(`${what} is not a boolean`);
      tagged(0);
      out.varint(v ? 1n : 0n);
      return;
    case 'double': {
      const n = typeof v === 'number' ? v : v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : typeof v === 'string' ? Number(v) : NaN;
      if (typeof v !== 'number' && Number.isNaN(n) && v !== 'NaN') throw new ProtoJsonError(`${what} is not a number`);
      tagged(1);
      const b = Buffer.alloc(8);
      b.writeDoubleLE(n);
      out.bytes(b);
      return;
    }
    case 'fixed64':
      tagged(1);
      out.fixed(integer(v, what), 8);
      return;
    case 'fixed32':
      tagged(5);
      out.fixed(integer(v, what), 4);
      return;
    case 'sint32': {
      const n = integer(v, what);
      tagged(0);
      out.varint(n >= 0n ? n * 2n : -n * 2n - 1n);
      return;
    }
    default:
      tagged(0);
      out.varint(integer(v, what));
  }
}

const PACKABLE: ReadonlySet<string> = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'bool', 'double', 'fixed64', 'fixed32']);

function encodeMessage(name: string, o: unknown, what: string, depth: number): Uint8Array {
  if (depth > 32) throw new ProtoJsonError(`${what} nests too deeply`);
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new ProtoJsonError(`${what} is not an object`);
  const obj = o as Record<string, unknown>;
  const out = new Out();
  for (const d of MESSAGES[name]!) {
    const v = obj[d.name] ?? obj[snake(d.name)];
    if (v === undefined || v === null) continue;
    const at = `${what}.${d.name}`;
    const isMessage = d.type in MESSAGES;
    if (d.repeated) {
      if (!Array.isArray(v)) throw new ProtoJsonError(`${at} is not a list`);
      if (isMessage) for (const [i, x] of v.entries()) out.len(d.no, encodeMessage(d.type, x, `${at}[${i}]`, depth + 1));
      else if (PACKABLE.has(d.type)) {
        if (!v.length) continue;
        const packed = new Out();
        for (const [i, x] of v.entries()) scalar(packed, d, x, `${at}[${i}]`, true);
        out.len(d.no, packed.take());
      } else for (const [i, x] of v.entries()) scalar(out, d, x, `${at}[${i}]`, false);
    } else if (isMessage) out.len(d.no, encodeMessage(d.type, v, at, depth + 1));
    else scalar(out, d, v, at, false);
  }
  return out.take();
}

/** An OTLP/JSON ExportProfilesServiceRequest as protobuf; throws ProtoJsonError naming the first bad field. */
export function profilesJsonToProtobuf(doc: unknown): Uint8Array {
  return encodeMessage('Request', doc, 'request', 0);
}
