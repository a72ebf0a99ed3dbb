// Loads one AssemblyScript module from build/wasm (compiled with --bindings raw --exportRuntime).
// Every wrapper in src/compute and elsewhere goes through here so the abort/trace imports and the
// runtime exports are handled once. Modules are instantiated once per thread and reused.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WASM_DIR } from '../core/paths.js';

/** The runtime exports every module built with --exportRuntime has. */
export interface AsRuntime {
  memory: WebAssembly.Memory;
  __new(size: number, id: number): number;
  __pin(ptr: number): number;
  __unpin(ptr: number): void;
  __collect(): void;
}

export class WasmAbort extends Error {
  readonly code = 'WASM_ABORT';
}

/** Reads an AssemblyScript string (UTF-16, byte length stored just before the pointer). */
export function readAsString(memory: WebAssembly.Memory, ptr: number): string {
  if (!ptr) return '';
  const len = new Uint32Array(memory.buffer, ptr - 4, 1)[0]! >>> 1;
  const units = new Uint16Array(memory.buffer, ptr, len);
  let s = '';
  for (let i = 0; i < len; i += 4096) s += String.fromCharCode(...units.subarray(i, Math.min(len, i + 4096)));
  return s;
}

const compiled = new Map<string, WebAssembly.Module>();

/** Instantiates `build/wasm/<name>.wasm`; the compiled module is cached, each call gets a fresh instance. */
export function instantiateWasm<T extends object>(name: string): T & AsRuntime {
  let mod = compiled.get(name);
  if (!mod) {
    const path = join(WASM_DIR, `${name}.wasm`);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      throw new Error(`WASM module ${path} is missing: run \`npm run build\``);
    }
    mod = new WebAssembly.Module(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) as Uint8Array<ArrayBuffer>);
    compiled.set(name, mod);
  }
  let memory: WebAssembly.Memory | undefined;
  const instance = new WebAssembly.Instance(mod, {
    env: {
      abort(msg: number, file: number, line: number, col: number): never {
        const m = memory ? readAsString(memory, msg) : '';
        const f = memory ? readAsString(memory, file) : '';
        throw new WasmAbort(`wasm ${name} aborted: ${m} at ${f}:${line}:${col}`);
      },
      trace(): void {},
      seed(): number {
        return Date.now();
      },
      /** Writes JS's own text of a finite number (the shortest that round-trips) at `dst`; returns its length. */
      numberText(d: number, dst: number): number {
        const t = String(d);
        const out = new Uint8Array(memory!.buffer, dst, t.length);
        for (let i = 0; i < t.length; i++) out[i] = t.charCodeAt(i);
        return t.length;
      },
    },
  });
  const exports = instance.exports as unknown as T & AsRuntime;
  memory = exports.memory;
  return exports;
}
