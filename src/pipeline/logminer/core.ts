// The contract between the miner's bookkeeping (miner.ts) and its two interchangeable engines: the
// AssemblyScript build (wasm-core.ts → assembly/logminer.ts) and the plain TypeScript reference
// (reference.ts). Both take the same UTF-8 bytes and must produce the same numbers; the conformance
// test (test/pipeline/logminer/agree.test.ts) runs every Loghub line through both.
//
// Data moves as flat typed arrays: the caller writes a batch of bodies into `input.bytes` (one
// concatenated UTF-8 buffer) and `input.offsets` (n + 1 offsets), calls `mine`, then reads the
// per-line outputs. For the WASM engine these arrays are views on memory the module owns and reuses
// (allocated once, grown by doubling), so nothing is copied per call apart from the UTF-8 encoding.

/** Fixed algorithm constants. Changing one changes template ids for existing data: bump ENGINE_VERSION. */
export const ENGINE_VERSION = 6;
/** Bytes of a body looked at for matching; the rest is kept in the body but ignored. */
export const MATCH_BYTES = 4096;
/** Tokens of a body looked at for matching; a longer line ends in one synthetic `<*>` token. */
export const MAX_TOKENS = 128;
/** A single token longer than this is a payload (base64, a blob, a stack dump), masked whole. */
export const LONG_TOKEN = 96;
/** A double-quoted string with spaces is one token up to this many bytes (a longer one splits on spaces). */
export const QUOTE_MAX = 512;
/** Parameters reported per line (the first ones, in token order). */
export const MAX_PARAMS = 16;
/** JSON bodies above this size are mined as text. */
export const JSON_MAX_BYTES = 16384;
/** JSON nesting kept in a shape; deeper objects become one `<*>` value. */
export const JSON_MAX_DEPTH = 4;
/** Keys kept per JSON object; an object with more keys is mined as text. */
export const JSON_MAX_KEYS = 64;
/** Leading tokens that route a line to a leaf of the prefix tree (Drain's depth − 2). */
export const PREFIX_TOKENS = 1;
/** Templates per leaf (same token count and first token): bounds the comparisons per line. */
export const LEAF_MAX = 64;
/**
 * Distinct words a position may hold as constants, one template each (`Job Started` / `Job Stopped`):
 * a further word there makes it a variable and the templates merge. The same bound holds for
 * phrases of plain words between shared tokens (`failed: connection refused`, `failed: no route to host`).
 */
export const ENUM_MAX = 5;
/**
 * Differing positions holding a word in both that a line may differ from its best template in and
 * still be taken for constants (`moved from queued to running` / `... from running to done`, two
 * positions); a line differing in more words generalises them (the similarity decides, as in Drain).
 */
export const ENUM_POSITIONS = 3;
/** Default similarity threshold, as a fraction SIM_NUM / SIM_DEN, compared exactly in integers. */
export const SIM_NUM = 7;
export const SIM_DEN = 10;

/** Per-line flags. */
export const FLAG_NEW = 1;
export const FLAG_CHANGED = 2;
export const FLAG_JSON = 4;
export const FLAG_TRUNCATED = 8;

export interface CoreInput {
  bytes: Uint8Array;
  offsets: Int32Array;
}

export interface CoreOutput {
  /** template id per line (int64-safe integers held in doubles) */
  ids: Float64Array;
  flags: Uint8Array;
  /** parameters per line, up to MAX_PARAMS; the arrays below are n * MAX_PARAMS long */
  paramCount: Uint8Array;
  /** the template slot (token position, or value ordinal for JSON) of each parameter */
  paramSlot: Uint16Array;
  /** byte range of each parameter inside the batch's input bytes */
  paramStart: Int32Array;
  paramLen: Int32Array;
  /** the parameter's numeric value (a number, optionally followed by a short unit), else NaN */
  paramNum: Float64Array;
  /** per line: the template this line's new template split from (it differs from it in one word), else 0 */
  splitFrom: Float64Array;
  /** ids of templates created or whose pattern changed in this batch, each once, in order */
  changed: Float64Array;
  changedCount: number;
  /**
   * ids retired in this batch: evicted (the template cap was reached) or merged into another template
   * that generalised to cover them; room for 2n + LEAF_MAX (n evictions, n + LEAF_MAX merges at most)
   */
  evicted: Float64Array;
  /** per retired id: 0 when evicted, else the id of the template it merged into */
  evictedInto: Float64Array;
  evictedCount: number;
}

export interface CoreConfig {
  /** live templates kept per service; the least recently used one is evicted beyond it */
  maxTemplatesPerService: number;
  /** similarity threshold in tenths (SIM_NUM / SIM_DEN by default); the leave-out evaluation varies it */
  similarityTenths?: number;
  /** distinct words before a position is a variable (ENUM_MAX by default); the leave-out evaluation varies it */
  enumMax?: number;
  /** rules left out, to measure what each does (eval:logs --ablation); the reference engine only, never a setting */
  without?: readonly ClassRule[];
}

/**
 * The rules that answer the three ways templates break on unseen logs (the log miner README): class 1,
 * a field of few word values taken for constants (`dates`: the weekday and month names of a date are
 * values; `fields`: a word after the name of a field the service writes as key=value is its value);
 * class 2, an optional part inside a variable (`optional`: the optional-part cover and its merge);
 * class 3, events one word apart kept apart (`names`: a word may be a name in capitals or end in a
 * mark, and names that differ only in digits are one name; without it a word is letters only).
 */
export const CLASS_RULES = ['dates', 'fields', 'optional', 'names'] as const;
export type ClassRule = (typeof CLASS_RULES)[number];

export interface MinerCore {
  readonly kind: 'wasm' | 'reference';
  /** Returns buffers with room for `totalBytes` bytes and `n` lines (contents undefined). */
  prepare(totalBytes: number, n: number): CoreInput;
  /** Mines lines 0..n-1 of the prepared input for service `svc` (a small integer). */
  mine(svc: number, n: number): CoreOutput;
  /** The pattern of a live template as UTF-8 bytes (a copy), or null if unknown/evicted. */
  patternBytes(id: number): Uint8Array | null;
  /** Is the template live (not evicted, known)? */
  isLive(id: number): boolean;
  /** Re-creates a template with a known id from its stored pattern (UTF-8 bytes). */
  restore(svc: number, id: number, pattern: Uint8Array): void;
  /** Next id to hand out; only ever raised. */
  nextId(): number;
  setNextId(id: number): void;
  /** Number of live templates of a service. */
  liveCount(svc: number): number;
}
