// Schema values with their TypeScript types (TypeBox): each is the JSON Schema that openapi.json
// publishes and, through Static<>, the type the code uses, so the two cannot say different things.
// The helpers keep the shapes the API description has always had: nullable fields as
// `type: [T, 'null']` (OpenAPI 3.1, no anyOf), int64 for microseconds, date-time strings for ISO
// timestamps, string enumerations as `enum`, and named components referenced by `$ref`.
import { Type, type Static, type TProperties, type TSchema, type TObject, type TUnsafe, type ObjectOptions } from '@sinclair/typebox';
import { MAX_MICROS, MIN_MICROS } from './time.js';

export { Type, type Static, type TSchema, type TObject };

/** The options of a schema keyword set: a description, or any further keyword (format, minimum...). */
type Opts = string | Record<string, unknown> | undefined;
const opts = (o: Opts): Record<string, unknown> => (o === undefined ? {} : typeof o === 'string' ? { description: o } : o);

export const str = (o?: Opts) => Type.String(opts(o));
export const nstr = (o?: Opts) => Type.Unsafe<string | null>({ type: ['string', 'null'], ...opts(o) });
export const int = (o?: Opts) => Type.Integer(opts(o));
export const int64 = (o?: Opts) => Type.Integer({ format: 'int64', ...opts(o) });
export const int32 = (o?: Opts) => Type.Integer({ format: 'int32', ...opts(o) });
export const nint32 = (o?: Opts) => Type.Unsafe<number | null>({ type: ['integer', 'null'], format: 'int32', ...opts(o) });
export const num = (o?: Opts) => Type.Number({ format: 'double', ...opts(o) });
export const nnum = (o?: Opts) => Type.Unsafe<number | null>({ type: ['number', 'null'], format: 'double', ...opts(o) });
export const bool = (o?: Opts) => Type.Boolean(opts(o));
export const iso = (o?: Opts) => Type.String({ format: 'date-time', ...opts(o) });
export const niso = (o?: Opts) => Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', ...opts(o) });
export const arr = <T extends TSchema>(items: T, o?: Opts) => Type.Array(items, opts(o));
/** An object whose fields the description leaves open. */
export const anyObject = (o?: Opts) => Type.Unsafe<Record<string, unknown>>({ type: 'object', ...opts(o) });
/** An object of any keys whose values all follow `values`. */
export const dict = <T extends TSchema>(values: T, o?: Opts) => Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: values, ...opts(o) });
/** One of a list of strings. */
export const oneOf = <const T extends readonly string[]>(values: T, o?: Opts) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts(o) });
/** An object; every property is required unless wrapped in `opt` (Type.Optional). */
export const obj = <T extends TProperties>(properties: T, o?: string | ObjectOptions) => Type.Object(properties, typeof o === 'string' ? { description: o } : o);
export const opt = Type.Optional;
/** An object or null: `type: ['object', 'null']` with the object's properties. */
export function nullable<T extends TProperties>(properties: T, description: string): TUnsafe<Static<TObject<T>> | null> {
  const o = Type.Object(properties);
  return Type.Unsafe<Static<TObject<T>> | null>({ ...o, type: ['object', 'null'], description });
}

/** A microsecond timestamp input (`*_ts`). `x-unit` lets request validation name the unit a bad value looks like. */
export function microsInput(description: string): TUnsafe<number>;
export function microsInput(description: string, nullable: true): TUnsafe<number | null>;
export function microsInput(description: string, nullable = false): TUnsafe<number | null> {
  return Type.Unsafe<number>({
    type: nullable ? ['integer', 'null'] : 'integer',
    format: 'int64',
    minimum: MIN_MICROS,
    maximum: MAX_MICROS,
    'x-unit': 'microseconds',
    description: `${description} Microseconds since the Unix epoch (16 digits); seconds, milliseconds and nanoseconds are rejected with a hint.`,
  });
}

// ---------------------------------------------------------------------------------------------
// Named components
// ---------------------------------------------------------------------------------------------

const COMPONENT = Symbol('component');
interface Named {
  name: string;
  schema: TSchema;
}

/**
 * A named schema: used in another schema it is `{"$ref": "#/components/schemas/<name>"}`, typed as
 * the schema itself; collectComponents finds it there, so a component is declared in one place.
 */
export function component<T extends TSchema>(name: string, schema: T): TUnsafe<Static<T>> & { readonly [COMPONENT]: Named } {
  const ref = Type.Unsafe<Static<T>>({ $ref: `#/components/schemas/${name}` });
  return Object.assign(ref, { [COMPONENT]: { name, schema } });
}

/** The components reachable from `roots`, by name, each once; two different schemas under one name throw. */
export function collectComponents(roots: readonly unknown[]): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  const seen = new Set<object>();
  const visit = (v: unknown): void => {
    if (!v || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    const named = (v as { [COMPONENT]?: Named })[COMPONENT];
    if (named) {
      const prior = out[named.name];
      if (prior && prior !== named.schema) throw new Error(`two schemas are named ${named.name}`);
      out[named.name] = named.schema;
      visit(named.schema);
      return;
    }
    for (const x of Object.values(v)) visit(x);
  };
  for (const r of roots) visit(r);
  return out;
}

/** The schema a component names (itself for any other schema). */
export function resolved(s: TSchema): TSchema {
  return (s as { [COMPONENT]?: Named })[COMPONENT]?.schema ?? s;
}
